"""The quorum cell, on a pair whose DRBD 9 resource has more nodes (its ``peers``).

Quorum is DRBD 9's promise that a primary cut off from the majority of its resource stops
writing rather than diverge (``on-no-quorum io-error``: the write fails with an I/O error; no
node can then be promoted elsewhere while this one writes on).  Two cases:

* **majority lost**: while a writer on the primary writes one block after another, the primary's
  path to every peer is cut (netem drops every packet of the resource's port, the harness's
  own impairment machinery, undo registered first).  Its writes must fail with an I/O error
  within the resource's stated silence (``ping-int + ping-timeout``) plus 2 s, and none may be
  acknowledged after the first refusal while the cut lasts.  Healed, writes must be
  acknowledged again (DRBD reconnects every ``connect-int``, 10 s by default: within 30 s),
  the resource must come back whole, every peer connected and current, and no split brain may
  appear (DRBD's state, both sides' data generations, the kernel log).
* **tie-breaker holds**: on a resource whose third node is a diskless tie-breaker, the path to
  the diskful secondary alone is cut, which is what the primary sees of that node dying.  The
  primary must keep quorum through the tie-breaker: no write fails, and writes go on.

Times are the primary's own clock (the writer's, :mod:`harness.cell.quorumwrites`), taken
before the cut and before the heal, so each figure is an upper bound.
"""

from __future__ import annotations

import shlex
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.cell.guard import refuse_unless_primary
from harness.cell.outcome import CellOutcome
from harness.cell.partition import RESYNC_TIMEOUT_S, wait_resynced
from harness.cell.quorumwrites import BLOCK, judge_held, judge_loss, parse_writes, writer_script
from harness.cell.runner import CellRunner
from harness.drbd.kernlog import split_brains_in_kernel_log
from harness.errors import InfraError
from harness.impair.apply import UNDO_BUDGET_S, AppliedImpairment
from harness.impair.profile import NetemProfile
from harness.remote import Runner
from harness.remote.detached import DetachedJob
from harness.remote.nodefiles import node_run_dir
from harness.replication import Replication, read_product_version, version_probe
from harness.rules.bounds import BoundResult
from harness.runfiles.samples import METRICS, Sample
from harness.safety.device import guard_replicated_device
from harness.units import MIB

__all__ = ["CASES", "QuorumCase", "QuorumResult", "product_version", "run_quorum"]

SCENARIO = "quorum"
QuorumCase = Literal["majority-lost", "tiebreaker-holds"]
CASES: tuple[QuorumCase, ...] = ("majority-lost", "tiebreaker-holds")
CUT = NetemProfile("quorum-cut", loss_pct=100.0, direction="primary")
REGION_BYTES = 64 * MIB
LEAD_S = 2.0  # writes before the cut
HOLD_S = 3.0  # the cut lasts this long past the stated time: writes must stay refused
#: a writes-refused primary reconnects within DRBD's connect-int (10 s by default) and a handshake
RESUME_WITHIN_S = 30.0
#: DRBD's error reaches the writer this long after the silence it tolerates at most
REFUSE_GRACE_S = 2.0
_DMESG = ["dmesg"]


@dataclass
class QuorumResult(CellOutcome):
    pair: str
    case: QuorumCase
    stated_s: float  # writes must fail this long after the cut at the latest
    writes: int
    refused_after_s: float | None
    acked_after_loss: int
    resumed_after_s: float | None
    io_errors: int
    quorum: str  # the primary's own view at the end of the cut
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    verdict: BoundResult = field(default_factory=lambda: BoundResult("pass", ""))
    metadata: dict[str, Any] = field(default_factory=dict)

    PROPERTY_KEYS = ("pair", "case", "stated_s", "writes", "quorum")


def _clock(node: Runner) -> float:
    return float(node.run(["date", "+%s.%N"], timeout=15).stdout.strip())


def _split_brains(node: Runner, resource: str) -> int:
    return len(split_brains_in_kernel_log(node.run(_DMESG, timeout=30, check=False).stdout, resource))


class _Writer:
    """The writer on the primary as a detached job (an interrupt stops it: undo registered first)."""

    def __init__(self, runner: CellRunner, node: Runner, device: str, duration_s: float, cell: str) -> None:
        base = node_run_dir(runner.run_id)
        script = writer_script(device, duration_s=duration_s, blocks=REGION_BYTES // BLOCK)
        self.node, self.base, self.duration_s = node, base, duration_s
        self.job = DetachedJob.of_script(
            script,
            deadline_s=duration_s + 30,
            pid_file=f"{base}/{cell}.pid",
            log=f"{base}/{cell}.log",
            rc_file=f"{base}/{cell}.rc",
        )

    def start(self, undo: ExitStack) -> None:
        undo.callback(lambda: self.node.run_script(self.job.stop_script(), timeout=30, check=False))
        self.node.run_script(f"mkdir -p {shlex.quote(self.base)} && {self.job.start_script()}", timeout=30)

    def output(self) -> str:
        deadline = time.monotonic() + self.duration_s + 60
        while time.monotonic() < deadline:
            done = self.node.run_script(self.job.wait_script(10.0), timeout=30, check=False).stdout.strip()
            if done:
                return self.node.run(["cat", str(self.job.log)], timeout=30).stdout
        raise InfraError(f"{self.node.name}: the quorum writer did not end within {self.duration_s + 60:g} s")


def product_version(runner: CellRunner, pair_name: str) -> str:
    """The replication's version on the pair's primary (``8.4.11``, ``9.2.18``; ``unknown``)."""
    node = runner.pool.get(runner.inventory.pairs[pair_name].primary)
    return read_product_version(node.run(version_probe(), timeout=15, check=False).stdout)


def run_quorum(runner: CellRunner, pair_name: str, *, case: QuorumCase, repeat: int = 0) -> QuorumResult:
    """The quorum cell ``case`` on ``pair_name``, holding every node of its resource; records its samples."""
    pair = runner.inventory.pairs[pair_name]
    with runner.locked(list(pair.nodes)), runner.host_slot(list(pair.nodes), exclusive=True):
        result = _quorum(runner, pair_name, case, f"quorum-{pair_name}-{case}-r{repeat}")
    return _record(runner, result, repeat)


def _clear(runner: CellRunner, node: Runner, planned: list[AppliedImpairment]) -> None:
    """Heal the cut (once: the undo after a heal finds nothing left)."""
    while planned:
        runner.faults.impairer.clear(node, planned[-1])
        planned.pop()


def _wait_whole(primary: Replication) -> tuple[str, ...]:
    """Until every peer of the resource is connected and current again (the other peers
    resync too); what is still wrong at the deadline."""
    deadline = time.monotonic() + RESYNC_TIMEOUT_S
    while True:
        view = primary.peers()
        found = view.problems() if view is not None else ("the resource's peers cannot be read",)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(1.0)


def _cut_targets(runner: CellRunner, pair_name: str, case: QuorumCase) -> tuple[str, tuple[str, ...]]:
    pair, nodes = runner.inventory.pairs[pair_name], runner.inventory.nodes
    others = () if case == "tiebreaker-holds" else tuple(nodes[n].replication.ip for n in sorted(pair.peers))
    return nodes[pair.secondary].replication.ip, others


def _quorum(runner: CellRunner, pair_name: str, case: QuorumCase, cell: str) -> QuorumResult:
    pair = runner.inventory.pairs[pair_name]
    node = runner.pool.get(pair.primary)
    primary = runner.replication(pair_name, pair.primary)
    refuse_unless_primary(primary.wait_healthy(runner.health_timeout_s), pair.primary, pair.resource)
    guard_replicated_device(node, primary, needed_bytes=REGION_BYTES)
    stated = primary.timeouts().silence_detected_s + REFUSE_GRACE_S
    hold = stated + HOLD_S
    tail = RESUME_WITHIN_S if case == "majority-lost" else 5.0
    brains_before = _split_brains(node, pair.resource)
    writer = _Writer(runner, node, pair.device, LEAD_S + hold + tail + 5.0, cell)
    peer_ip, also_to = _cut_targets(runner, pair_name, case)
    with ExitStack() as undo:
        writer.start(undo)
        time.sleep(LEAD_S)
        cut_at = _clock(node)
        planned: list[AppliedImpairment] = []
        undo.callback(_clear, runner, node, planned)
        runner.faults.impairer.apply(
            node, iface=runner.inventory.nodes[pair.primary].replication.iface, peer_ip=peer_ip, profile=CUT,
            hold_s=hold + runner.deadman_grace_s - UNDO_BUDGET_S, role="primary", on_planned=planned.append,
            port=pair.shaped_port(), also_to=also_to,
        )  # fmt: skip
        time.sleep(max(0.0, hold - (_clock(node) - cut_at)))
        view = primary.peers()
        healed_at = _clock(node)
        _clear(runner, node, planned)
        runner.ledger.record("quorum-healed", {"pair": pair_name, "case": case})
        writes = parse_writes(writer.output())
    wait_resynced(primary, runner.replication(pair_name, pair.secondary))
    problems = [f"after the heal: {p}" for p in _wait_whole(primary)]
    brains = _split_brains(node, pair.resource) - brains_before
    problems += [f"the kernel logged {brains} new split brain(s) on {pair.resource}"] if brains else []
    quorum = view.verdict() if view is not None else "no peers view"
    if case == "majority-lost":
        loss = judge_loss(writes, cut_at=cut_at, healed_at=healed_at)
        problems = loss.problems(within_s=stated, resume_within_s=RESUME_WITHIN_S) + problems
        refused, acked, resumed = loss.refused_after_s, loss.acked_after_loss, loss.resumed_after_s
    else:
        problems = judge_held(writes, cut_at=cut_at, healed_at=healed_at) + problems
        if view is None or not view.holds_quorum:
            problems.insert(0, f"the primary lost quorum with the tie-breaker in reach ({quorum})")
        refused, acked, resumed = None, 0, None
    return QuorumResult(
        pair=pair_name,
        case=case,
        stated_s=stated,
        writes=len(writes),
        refused_after_s=refused,
        acked_after_loss=acked,
        resumed_after_s=resumed,
        io_errors=sum(1 for w in writes if not w.ok),
        quorum=quorum,
        problems=problems,
    )


def _record(runner: CellRunner, result: QuorumResult, repeat: int) -> QuorumResult:
    meta = {
        "scenario": SCENARIO,
        "pair": result.pair,
        "mode": "replicated",
        "workload": "quorum-write-4k-direct",
        "impairment": f"quorum-{result.case}",
        "placement": runner.inventory.placement(result.pair),
        "repeat": repeat,
        "run_id": runner.run_id,
        "verdict": "fail" if result.problems else "pass",
    }
    nan = float("nan")
    values = {
        "refused_after": result.refused_after_s if result.refused_after_s is not None else nan,
        "acked_after_loss": float(result.acked_after_loss),
        "resumed_after": result.resumed_after_s if result.resumed_after_s is not None else nan,
        "io_errors": float(result.io_errors),
    }
    result.samples = [Sample(metric, value, METRICS[metric], meta) for metric, value in values.items()]
    runner.store.append(result.samples)
    summary = f"{result.writes} writes; {result.io_errors} refused; {result.quorum}"
    if result.refused_after_s is not None:
        summary = (
            f"writes refused {result.refused_after_s:.2f} s after the cut (stated: within {result.stated_s:g} s), "
            f"{result.acked_after_loss} acknowledged after; " + summary
        )
    result.verdict = BoundResult("fail" if result.problems else "pass", "; ".join(result.problems) or summary)
    result.metadata = {**meta, **{key: getattr(result, key) for key in QuorumResult.PROPERTY_KEYS}}
    result.metadata["summary"] = summary
    return result
