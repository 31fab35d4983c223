"""Kill the harness in the middle of a cell and look at what it left behind.

A trial starts a real scenario cell of the first pair as a separate ``pytest`` process: an
**impaired** cell (a network profile of the inventory: netem on both nodes and a running fio),
an **unimpaired** one (a replicated write, fio only) or a **partition** (every packet to the
peer dropped on both nodes while fio writes).  It waits for the chosen phase in the run's
ledger, sends a signal, and then inspects the nodes:

* SIGINT / SIGTERM: pytest's teardown must remove everything before it exits;
* SIGKILL: nothing runs on the harness side, so the node-side dead-man switches (faults),
  fio's node-side deadline and the lock's lease must remove everything by themselves.

Used by the integration tests (one trial per mode) and by ``harness killcheck`` (N trials
per mode, for the figures in a report).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from harness.errors import InfraError
from harness.impair.apply import DEFAULT_DEADMAN_GRACE_S, UNDO_BUDGET_S
from harness.impair.qdiscs import parse_qdiscs
from harness.impair.readback import RootClass, classify_root
from harness.inventory.models import Inventory
from harness.remote.pool import ConnectionPool, NodePool
from harness.runfiles.rundir import RunDir
from harness.runfiles.runid import new_run_id
from harness.safety.leftovers import find_leftovers

__all__ = [
    "CELL_KINDS",
    "PHASES",
    "CellKind",
    "KillTrial",
    "Phase",
    "ScenarioEndedEarly",
    "TrialCell",
    "interruptible_children",
    "node_leftovers",
    "run_kill_trial",
    "trial_cell",
]

#: where in the run the signal lands: ``setup`` as the run takes its lock (preflight done, nothing
#: else changed yet), ``impairment`` once the fault is applied, ``fio`` while fio writes,
#: ``verify`` while ``--verify-after`` compares the replicas after the last cell
Phase = Literal["setup", "impairment", "fio", "verify"]
PHASES: tuple[Phase, ...] = ("setup", "impairment", "fio", "verify")
CellKind = Literal["impaired", "unimpaired", "partition"]
CELL_KINDS: tuple[CellKind, ...] = ("impaired", "unimpaired", "partition")


@dataclass(frozen=True)
class TrialCell:
    """Which scenario cell a trial starts, and which ledger events mark its phases."""

    kind: CellKind
    scenario: str
    select: str  # pytest -k expression
    #: ledger events, in order, after which the cell is in its fault ("impairment" phase)
    fault_events: tuple[str, ...]
    #: more pytest options (the verify phase needs ``--verify-after``)
    options: tuple[str, ...] = ()


def trial_cell(kind: CellKind, inventory: Inventory, pair: str) -> TrialCell:
    if kind == "impaired":
        if not inventory.network_profiles:
            raise RuntimeError("the inventory defines no network_profiles: an impaired kill trial needs one")
        profile = sorted(inventory.network_profiles)[0]
        return TrialCell(
            kind,
            "scenarios/test_inventory_profiles.py",
            f"test_network_profile and {pair}-{profile}",
            ("impair-applied",),
        )
    if kind == "unimpaired":
        return TrialCell(kind, "scenarios/test_replicated_write.py", f"{pair}-randwrite-4k-nj1-qd1", ())
    return TrialCell(kind, "scenarios/test_partition.py", f"{pair}-above-timeout", ("impair-applied", "impair-applied"))


class ScenarioEndedEarly(InfraError):
    """The scenario exited before the phase the signal was meant for (the trial tested nothing)."""


@dataclass
class KillTrial:
    signal: str
    phase: Phase
    exit_code: int | None
    exit_s: float
    leftovers_at_exit: list[str]
    leftovers_final: list[str]
    waited_s: float
    #: why earlier attempts ended before the phase (their output tails); empty when none did
    early_exits: list[str] = field(default_factory=list)
    cell: CellKind = "impaired"
    #: seconds from the signal until no fault and no harness qdisc was left on any node
    path_clean_s: float | None = None
    #: the longest a fault of the cell may outlive the harness (its dead-man hold: the cell's
    #: fio deadline + the grace); the path clean time must keep it
    bound_s: float | None = None
    #: the run directory of the signalled scenario (its junit.xml, run.json, ledger)
    run_dir: Path | None = None

    @property
    def clean(self) -> bool:
        return not self.leftovers_final


def _path_root(inventory: Inventory, pool: NodePool, name: str) -> RootClass:
    """What roots the qdisc tree of the node's replication interface."""
    iface = inventory.nodes[name].replication.iface
    return classify_root(
        parse_qdiscs(pool.get(name).run(["tc", "-j", "qdisc", "show", "dev", iface], timeout=15).stdout)
    )


def node_leftovers(inventory: Inventory, pool: NodePool, nodes: list[str]) -> list[str]:
    """Everything of the harness on ``nodes``: faults, qdiscs, fio, watchers, locks."""
    found: list[str] = []
    for name in nodes:
        node = pool.get(name)
        found += [item.describe() for item in find_leftovers(node)]
        root = _path_root(inventory, pool, name)
        if root is not RootClass.DEFAULT:
            found.append(f"{name}: {inventory.nodes[name].replication.iface} root qdisc is {root}")
        fio = node.run(["pgrep", "-x", "fio"], timeout=15, check=False).stdout.split()
        if fio:
            found.append(f"{name}: fio running (pids {', '.join(fio)})")
    return sorted(set(found))


def _ledger_events(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a line being written right now
    return out


def _tail(path: Path, lines: int = 40) -> str:
    if not path.exists():
        return "(no output)"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def _after(events: list[str], wanted: tuple[str, ...]) -> list[str] | None:
    """The events after ``wanted`` happened in that order; None while they have not."""
    rest = events
    for name in wanted:
        if name not in rest:
            return None
        rest = rest[rest.index(name) + 1 :]
    return rest


def _path_is_clean(inventory: Inventory, pool: NodePool, nodes: list[str]) -> bool:
    """No harness qdisc on the replication interface of any of ``nodes`` (the path itself)."""
    return all(_path_root(inventory, pool, name) is RootClass.DEFAULT for name in nodes)


def _promised_s(entries: list[dict[str, object]], grace: float) -> float | None:
    """How long the cell promised its faults would last at most: the dead-man hold of each
    fault it armed (its fio deadline + the grace), else its fio deadline + the grace."""
    holds = [
        float(str(e["deadline_epoch"])) - float(str(e["ts"]))
        for e in entries
        if e.get("event") == "impair-intent" and "deadline_epoch" in e and "ts" in e
    ]
    if holds:
        return max(holds) + UNDO_BUDGET_S
    fio = [e for e in entries if e.get("event") == "fio-start"]
    return float(str(fio[0]["deadline_s"])) + grace if fio else None


def _wait_for_phase(
    ledger: Path, cell: TrialCell, phase: Phase, proc: subprocess.Popen[bytes], *, timeout_s: float, output: Path
) -> None:
    """Wait until the cell is in ``phase``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if phase == "setup" and (ledger.parent / "preflight.txt").exists():
            return  # preflight passed: the run is taking its lock, no cell has started
        entries = _ledger_events(ledger)
        events = [str(e.get("event")) for e in entries]
        if phase == "verify":
            if "verify-start" in events:
                return
            after = None
        else:
            after = _after(events, cell.fault_events)
        if after is not None:
            if phase == "impairment" and cell.fault_events:
                return
            if "fio-start" in after:
                time.sleep(2.0)  # well inside fio's 6 s of ramp + runtime
                return
        if proc.poll() is not None:
            raise ScenarioEndedEarly(
                f"the scenario exited ({proc.returncode}) before the {phase} phase; its output ends:\n{_tail(output)}"
            )
        time.sleep(0.05)
    raise RuntimeError(f"the {phase} phase did not start within {timeout_s:.0f} s")


def run_kill_trial(
    root: Path,
    inventory_path: Path,
    inventory: Inventory,
    *,
    sig: signal.Signals,
    phase: Phase,
    reports: Path,
    deadman_grace_s: float | None = 5.0,
    settle_timeout_s: float = 120.0,
    attempts: int = 2,
    cell: CellKind = "impaired",
) -> KillTrial:
    """One trial; a scenario that ends before the phase (a cell failing for its own reasons,
    so no signal was sent and nothing was tested) is started again, up to ``attempts`` times,
    and the reasons are kept in :attr:`KillTrial.early_exits`.  ``deadman_grace_s`` None runs
    the cell with the harness's default grace (the figure a user gets)."""
    pair_name = sorted(inventory.pairs)[0]
    target = trial_cell(cell, inventory, pair_name)
    if phase == "verify":
        # a short verify of where the cell wrote, so the signal lands inside it
        target = dataclasses.replace(target, options=("--verify-after=64M",))
    grace = DEFAULT_DEADMAN_GRACE_S if deadman_grace_s is None else deadman_grace_s
    pair = inventory.pairs[pair_name]
    # every node: the run's cluster lock is on all of them, not only on the killed cell's pair
    nodes = sorted(inventory.nodes)
    early: list[str] = []
    for attempt in range(1, attempts + 1):
        try:
            code, exit_s, sent, ledger = _signal_scenario(
                root, inventory_path, target, sig=sig, phase=phase, reports=reports, grace=deadman_grace_s
            )
            break
        except ScenarioEndedEarly as exc:
            early.append(str(exc))
            if attempt == attempts:
                raise
    pool = ConnectionPool(inventory.ssh_specs())
    try:
        at_exit = node_leftovers(inventory, pool, nodes)
        # the path first, polled alone so its time is exact to a fraction of a second
        path_clean = None
        while time.monotonic() - sent < settle_timeout_s:
            if _path_is_clean(inventory, pool, [pair.primary, pair.secondary]):
                path_clean = time.monotonic() - sent
                break
            time.sleep(0.25)
        final = node_leftovers(inventory, pool, nodes)
        while final and time.monotonic() - sent < settle_timeout_s:
            time.sleep(1.0)
            final = node_leftovers(inventory, pool, nodes)
        waited = time.monotonic() - sent
    finally:
        pool.close_all()
    bound = _promised_s(_ledger_events(ledger), grace)
    trial = KillTrial(sig.name, phase, code, exit_s, at_exit, final, waited, early, cell, path_clean, bound)
    trial.run_dir = ledger.parent
    return trial


@contextlib.contextmanager
def interruptible_children() -> Iterator[None]:
    """Let the scenario we start react to SIGINT.

    A shell starts background jobs with SIGINT ignored; an ignored signal stays ignored across
    exec, and Python then never installs its KeyboardInterrupt handler, so a trial run from
    `cmd &` would send SIGINT into the void and measure a run that was never interrupted.  A
    handled signal, however, is reset to the default at exec: so handle it while starting.
    """
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _signal_scenario(
    root: Path,
    inventory_path: Path,
    cell: TrialCell,
    *,
    sig: signal.Signals,
    phase: Phase,
    reports: Path,
    grace: float | None,
) -> tuple[int | None, float, float, Path]:
    """Start the cell as its own pytest process, signal it in ``phase``: (exit code, seconds
    from the signal to the exit, monotonic time of the signal, the run's ledger)."""
    run_id = new_run_id()
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        cell.scenario,
        "-k",
        cell.select,
        "--inventory",
        str(inventory_path),
        "--reports",
        str(reports),
        "--run-id",
        run_id,
        *(["--deadman-grace", str(grace)] if grace is not None else []),
        # no calibration cells before the one cell the trial kills
        "--no-predict",
        *cell.options,
        "-p",
        "no:cacheprovider",
        "-q",
    ]
    # the scenario's own output is kept: when it fails before the phase, that is the reason
    reports.mkdir(parents=True, exist_ok=True)
    output = reports / f"killtrial-{run_id}.log"
    with (
        output.open("wb") as sink,
        interruptible_children(),
        subprocess.Popen(cmd, cwd=root, stdout=sink, stderr=subprocess.STDOUT) as proc,
    ):
        try:
            ledger = RunDir.of(reports, run_id).ledger_ndjson
            _wait_for_phase(ledger, cell, phase, proc, timeout_s=180, output=output)
            sent = time.monotonic()
            proc.send_signal(sig)
            try:
                code: int | None = proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = None
            return code, time.monotonic() - sent, sent, ledger
        finally:
            if proc.poll() is None:
                proc.kill()
