"""Per-process state of a harness pytest run: inventory, run directory, lab, cell runner.

The controller (or the only process without xdist) owns the run: its run directory
(``reports/<run-id>/``, made by :mod:`harness.plugin.rundir` while configuring), the embedded
lab when the inventory has a ``lab:`` section and it is not already up (it tears down what it
booted), and the run's record (:meth:`HarnessSession.record`).  xdist workers receive the run
id through ``workerinput`` and only connect.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from filelock import FileLock

from harness.cell import CellRunner
from harness.cell.certificate import HostProbe
from harness.cell.failover import FailoverParts, InventoryProtocol, ProtocolSwitch
from harness.cell.features import from_findings, write_missing
from harness.errors import ConfigError, RefusedError
from harness.fio.profiles import PROFILES, Profile
from harness.impair.apply import DEFAULT_DEADMAN_GRACE_S
from harness.inventory import Inventory, load_inventory
from harness.plugin.transport import LiveTransport, Transport
from harness.prediction.calstore import DEFAULT_MAX_AGE_S, CalibrationStore
from harness.prediction.cellmodel import CellPredictor, inventory_catalog
from harness.progress import quiet
from harness.remote.pool import NodePool
from harness.rules.inconclusive import DEFAULT_POLICY, Policy
from harness.rules.repeats import RepeatPlan
from harness.runfiles.clockskew import NodeClock, offsets_record
from harness.runfiles.ledger import Ledger
from harness.runfiles.rundir import RunDir, calibrations_dir
from harness.runfiles.runinfo import RunInfo, iso_time, tool_versions
from harness.runfiles.samples import SampleStore
from harness.safety.clock import measure_offsets
from harness.safety.disruptive import skip_reason
from harness.safety.lock import ClusterLock

if TYPE_CHECKING:
    from harness.safety.preflight import PreflightReport

__all__ = ["SESSION_KEY", "HarnessSession", "PreflightBlocked", "fail_session"]


class PreflightBlocked(RefusedError):
    """Preflight found a blocker; nothing was changed on any node."""


def _say(message: str) -> None:
    print(f"[harness] {message}", file=sys.stderr, flush=True)


@dataclass
class HarnessSession:
    inventory_path: Path
    inventory: Inventory
    profile: Profile
    run: RunDir
    is_controller: bool
    keep_lab: bool = False
    deadman_grace_s: float = DEFAULT_DEADMAN_GRACE_S
    lab_booted_here: bool = False
    predict: bool = True
    allow_disruptive: str | None = None  # --allow-disruptive's value (None: not given)
    recalibrate: bool = False  # --recalibrate: reuse no stored calibration
    calibration_max_age_s: float = DEFAULT_MAX_AGE_S
    clean_leftovers: bool = False  # --clean-leftovers: preflight removes a crashed run's leftovers
    #: --inconclusive: what a bound that failed in a disturbed window becomes
    inconclusive: Policy = DEFAULT_POLICY
    #: --repeat auto's plan (None: a fixed --repeat N)
    repeat_plan: RepeatPlan | None = None
    preflight_report: PreflightReport | None = None
    started: float = field(default_factory=time.time)
    _runner: CellRunner | None = None
    _predictor: CellPredictor | None = None
    #: where the nodes answer from: SSH, SSH recorded, or a recording (--record/--replay-session)
    transport: Transport = field(default_factory=LiveTransport)
    _pool: NodePool | None = None
    _lock: ClusterLock | None = None
    #: the interrupted test and the signal, for run.json and the report's header
    interrupted: str | None = None
    #: every node's clock offset read right after preflight; read again by :meth:`record`
    _clocks_at_start: dict[str, NodeClock] | None = None

    @classmethod
    def create(
        cls,
        inventory_path: Path,
        profile_name: str | None,
        run: RunDir,
        *,
        is_controller: bool,
        keep_lab: bool,
        transport: Transport | None = None,
    ) -> HarnessSession:
        transport = transport or LiveTransport()
        inventory = load_inventory(inventory_path)
        if inventory.lab is not None:
            from harness.lab.drbd9 import lab_inventory

            # the pairs the lab runs: on DRBD 9 (supplied modules) also those only DRBD 9 runs
            inventory = lab_inventory(inventory, drbd9=transport.drbd9(inventory))
        # before anything changes: a mistyped instance type would otherwise surface only after
        # the pair's calibration disconnected DRBD
        inventory_catalog(inventory, inventory_path)
        name = profile_name or ("quick" if inventory.lab is not None else "standard")
        if name not in PROFILES:
            raise ConfigError(f"unknown profile {name!r}; choose one of {', '.join(PROFILES)}")
        transport.begin(run.run_id)
        return cls(inventory_path, inventory, PROFILES[name], run, is_controller, keep_lab, transport=transport)

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def run_dir(self) -> Path:
        return self.run.path

    @property
    def reports_root(self) -> Path:
        return self.run.reports_root

    @property
    def pool(self) -> NodePool:
        if self._pool is None:
            self._pool = self.transport.pool(self.inventory.ssh_specs())
        return self._pool

    @property
    def runner(self) -> CellRunner:
        if self._runner is None:
            self.ensure_lab()
            run = self.run.ensure()
            self._runner = CellRunner(
                self.inventory,
                run_id=self.run_id,
                run_dir=run.path,
                pool=self.pool,
                store=SampleStore(run.samples_ndjson),
                ledger=Ledger(run.ledger_ndjson, self.run_id),
                lock_dir=self.reports_root / ".locks",
                progress=_progress_line if os.environ.get("CI") else quiet,
                deadman_grace_s=self.deadman_grace_s,
                host_guard=self.reports_root / ".locks" / "lab-host.lock" if self.inventory.lab is not None else None,
                node_cpus=self._lab_cpus(),
                allow_disconnecting=skip_reason(self.inventory, self.allow_disruptive) is None,
                host_probe=self._host_probe(),
                inconclusive_policy=self.inconclusive,
            )
        return self._runner

    @property
    def predictor(self) -> CellPredictor:
        """Per-cell predictions (calibrates each pair before its first predicted cell)."""
        if self._predictor is None:
            catalog, why_not = None, "predictions are off (--no-predict)"
            # calibration disconnects DRBD for its local-disk cells: disruptive, so it needs
            # the same opt-in as any disruptive scenario outside the lab
            blocked = skip_reason(self.inventory, self.allow_disruptive)
            if self.predict and blocked is not None:
                why_not = f"no predictions: the calibration disconnects DRBD. {blocked}"
                _say(why_not)
            elif self.predict:
                try:
                    catalog = inventory_catalog(self.inventory, self.inventory_path)
                except ConfigError as exc:
                    why_not = f"no predictions: {exc}"
                    _say(why_not)
            store = CalibrationStore(calibrations_dir(self.reports_root), self.calibration_max_age_s, self.recalibrate)
            self._predictor = CellPredictor(self.runner, self.profile, catalog, why_not=why_not, store=store)
        return self._predictor

    def failover_parts(self, pair: str) -> FailoverParts:
        """How ``pair``'s primary is crashed and which protocols it may run the failover cell
        with: the embedded lab's (SIGKILL of a guest) or a real node's (sysrq panic)."""
        spec = self.inventory.pairs[pair]
        if self.inventory.lab is None:
            from harness.cell.sysrq import SysrqCrasher

            return FailoverParts(SysrqCrasher(self.pool, spec), self.protocol_switch(pair))
        from harness.lab.crash import LabCrasher, LabHost
        from harness.lab.lifecycle import Lab

        host = self.transport.lab_host(lambda: LabHost(Lab(self.inventory, self.inventory_path)))
        return FailoverParts(LabCrasher(host, self.pool), self.protocol_switch(pair))

    def protocol_switch(self, pair: str) -> ProtocolSwitch:
        """Which protocols ``pair`` may run with: A, B or C in the embedded lab's own
        configuration, or a real cluster's inventory protocol only.  Known from the inventory
        alone (nothing connects), so collection can leave out what can never run."""
        spec = self.inventory.pairs[pair]
        if self.inventory.lab is None:
            return InventoryProtocol(pair, spec)
        from harness.lab.crash import LabProtocols

        return LabProtocols(self.pool, spec)

    # -- the embedded lab -------------------------------------------------------------------
    def _host_probe(self) -> HostProbe | None:
        """The lab host's reading for every cell's validity certificate (None off the lab)."""
        if self.inventory.lab is None or self.transport.replaying:  # a replay has no lab host to read
            return None
        from harness.lab.hostload import lab_host_probe

        return lab_host_probe(self.inventory)

    def _lab_cpus(self) -> dict[str, int]:
        """The host CPU each lab guest is pinned to (none off the lab, unpinned, or replayed)."""
        if self.inventory.lab is None or self.transport.replaying:
            return {}
        from harness.lab.lifecycle import Lab

        return Lab(self.inventory, self.inventory_path).guest_cpus

    def ensure_lab(self) -> None:
        """Boot the lab if this inventory describes one and it is not up (once per host); a
        replay has no lab to boot."""
        if self.inventory.lab is None or self.transport.replaying:
            return
        from harness.lab.lifecycle import Lab

        lab = Lab(self.inventory, self.inventory_path, progress=_say)
        lock = FileLock(str(lab.state_dir) + ".boot.lock")
        with lock:
            state = lab.state()
            if state is not None and state.phase == "up":
                return
            if state is not None:
                _say("found a half-started lab; cleaning it first")
                lab.down()
            lab.up()
            if self.is_controller:
                self.lab_booted_here = True
            else:
                # A worker booted it (no controller boot happened): leave a note so the
                # controller tears it down at the end.
                (lab.state_dir / "booted-by-run").write_text(self.run_id)

    def start_run(self) -> None:
        """Controller, before any cell: lab up, preflight (read-only), then the cluster lock."""
        from harness.safety.lock import ClusterLock
        from harness.safety.preflight import run_preflight

        self.ensure_lab()
        report = run_preflight(self.inventory, self.pool, clean_leftovers=self.clean_leftovers)
        self.preflight_report = report  # what it removed goes to JUnit (harness.plugin.leftovers)
        self.run.ensure().preflight_txt.write_text(report.render() + "\n")
        if not report.ok:
            raise PreflightBlocked(report.render())
        # what a node lacks refuses only the cells that need it, in every worker
        write_missing(self.run.path, from_findings((f.node, f.check, f.status, f.detail) for f in report.findings))
        names = self.run_nodes()
        self._lock = ClusterLock(self.transport.owner(self.run_id, str(self.inventory_path)))
        self._lock.acquire([self.pool.get(n) for n in names])
        if not self.transport.replaying:  # a lease lives on the nodes' clock; a replay has no nodes
            self._lock.start_heartbeat()
        self._clocks_at_start = self.read_clocks()

    def run_nodes(self) -> list[str]:
        """Every node a cell may touch: the pairs' (their resources' other peers too), and the
        disk-study nodes' (scratch devices)."""
        return sorted(
            {n for p in self.inventory.pairs.values() for n in p.nodes}
            | {name for name, node in self.inventory.nodes.items() if node.scratch_devices}
        )

    def read_clocks(self) -> dict[str, NodeClock]:
        """Each run node's clock offset from this host, or why it could not be read."""
        return measure_offsets({name: functools.partial(self.pool.get, name) for name in self.run_nodes()})

    def unfinished(self) -> tuple[list[str], str]:
        """What this run left on the nodes by its ledger (and its lock, while held), and the
        command that removes it: what a forced exit names."""
        left = Ledger(self.run.ledger_ndjson, self.run_id).unfinished()
        if self._lock is not None:
            left.append("the cluster lock on " + ", ".join(self.run_nodes()))
        command = f"harness cleanup --inventory {self.inventory_path} --run-id {self.run_id}"
        return left, command + (" --break-lock" if self._lock is not None else "")

    def end_run(self) -> None:
        if self._lock is not None:
            failed = self._lock.release()
            if failed:
                _say("could not release the cluster lock on: " + ", ".join(failed))
            self._lock = None

    def teardown_lab(self) -> None:
        if self.inventory.lab is None or self.keep_lab or self.transport.replaying:
            return
        from harness.lab.lifecycle import Lab

        lab = Lab(self.inventory, self.inventory_path, progress=_say)
        marker = lab.state_dir / "booted-by-run"
        booted_by_worker = marker.exists() and marker.read_text().strip() == self.run_id
        if self.lab_booted_here or booted_by_worker:
            leftovers = lab.down()
            if leftovers:
                _say("lab teardown left: " + "; ".join(leftovers))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close_all()

    def record(self, *, exitstatus: int) -> RunInfo:
        """The run's record (run.json) as it finishes now with ``exitstatus``; the nodes' clocks
        are read again now, so a clock that drifted during the run shows as two offsets."""
        clocks = {} if self._clocks_at_start is None else offsets_record(self._clocks_at_start, self.read_clocks())
        return RunInfo(
            run_id=self.run_id,
            inventory_path=str(self.inventory_path),
            inventory_name=self.inventory.name,
            profile=self.profile.name,
            started=iso_time(self.started),
            finished=iso_time(time.time()),
            argv=tuple(sys.argv),
            versions=tool_versions(),
            exitstatus=exitstatus,
            clock_offsets=clocks,
            interrupted=self.interrupted,
        )


#: Where each process of a run keeps its session (``config.stash``).
SESSION_KEY = pytest.StashKey[HarnessSession]()


def fail_session(session: pytest.Session, code: int) -> None:
    """Make a run that passed exit with ``code``; an earlier failure's status stays."""
    if session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = code


def _progress_line(message: str) -> None:
    # Line-based progress for CI logs (no carriage returns); throttled by the caller's poll.
    print(f"[harness {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)
