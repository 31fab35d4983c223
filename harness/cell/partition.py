"""The partition cell: cut the replication path while fio writes, heal it, and check that nothing
was lost and that both replicas are identical.

1. fio writes a verifiable pattern on the primary (4k random writes at queue depth 1,
   ``verify=crc32c`` headers, a seed of the cell's own), time-based around the cut.
2. The path is cut on both nodes: netem drops every packet to the peer (``loss 100%``), on
   the replication interface only, through the same impairment machinery as every fault
   (undo registered first, read back, dead-man switch armed for the cut + the grace).
3. The cut lasts either well **below** the replication's silence tolerance (DRBD: a
   fraction of ``ping-int``; writes must stall and resume, the connection must stay up) or
   well **above** what it always detects (``ping-int + ping-timeout``; the primary must go on
   alone, the peer falls behind, and on heal it reconnects and resyncs).
4. After the heal and the resync: **online verify** of the written range must report 0 blocks
   out of sync, and the peer, promoted in a switchover, must hold every write fio had
   acknowledged (fio ``verify_only`` replay); then the roles are restored.

Split brain cannot arise here (the peer is never promoted while cut off); should the
replication report it anyway, the resync wait fails at once and names it, never resolving it.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.cell.ackverify import cell_seed, verify_written
from harness.cell.outcome import CellOutcome
from harness.cell.runner import CellRunner
from harness.errors import InfraError, RefusedError, SplitBrain
from harness.fio.options import VerifySpec
from harness.fio.result import FioResult
from harness.fio.spec import WorkloadSpec
from harness.impair.apply import UNDO_BUDGET_S, AppliedImpairment
from harness.impair.profile import NetemProfile
from harness.remote import Runner
from harness.replication import ReplicaStatus, Replication
from harness.rules.bounds import BoundResult
from harness.runfiles.samples import METRICS, Sample
from harness.safety.device import guard_replicated_device
from harness.units import MIB

__all__ = ["CUTS", "PARTITION", "Cut", "PartitionResult", "cut_seconds", "run_partition", "wait_resynced"]

SCENARIO = "partition"
Cut = Literal["below-timeout", "above-timeout"]
CUTS: tuple[Cut, ...] = ("below-timeout", "above-timeout")
#: the written range: large enough that a run at queue depth 1 never wraps around it
REGION_BYTES = 256 * MIB
LEAD_S = 2  # fio writes this long before the cut
TAIL_S = 3  # and this long after the heal
RESYNC_TIMEOUT_S = 300.0
PARTITION = NetemProfile("partition", loss_pct=100.0, direction="both")


def cut_seconds(cut: Cut, tolerated_s: float, detected_s: float) -> float:
    """How long the path is cut: 0.4 × the tolerated silence (TCP's retransmission backoff
    after the heal can double a silence), or twice what is always detected, plus 2 s."""
    return round(0.4 * tolerated_s, 2) if cut == "below-timeout" else round(2 * detected_s + 2.0, 2)


@dataclass
class PartitionResult(CellOutcome):
    pair: str
    cut: Cut
    cut_s: float  # the path was certainly cut on both nodes this long
    timeouts: str
    disconnected: bool
    detect_s: float | None  # from the cut until the primary saw the peer lost
    stall_s: float  # fio's longest write (its 100th percentile)
    behind_kib: int  # out of sync on the primary when the path healed
    resync_s: float | None  # from the heal until healthy again
    verify_oos_kib: int
    verify_s: float
    acked_writes: int
    verify_ok: bool
    healthy_after: bool
    notes: list[str] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    verdict: BoundResult = field(default_factory=lambda: BoundResult("pass", ""))
    metadata: dict[str, Any] = field(default_factory=dict)

    PROPERTY_KEYS = ("pair", "cut", "cut_s", "disconnected", "detect_s", "resync_s", "timeouts")

    @property
    def lost_writes(self) -> int:
        return 0 if self.verify_ok else 1


def _write_spec(seed: int, runtime_s: int) -> WorkloadSpec:
    return WorkloadSpec(
        name="partition",
        rw="randwrite",
        bs=4096,
        iodepth=1,
        size=REGION_BYTES,
        # not time-based: fio stops at the runtime or at the end of the range, whichever comes
        # first, so no block is written twice and a replay of the first N writes checks each
        runtime_s=runtime_s,
        randseed=seed,
        verify=VerifySpec(alg="crc32c", do_verify=False, state_save=False),
        percentiles=(50.0, 99.0, 100.0),
    )


class _Cut:
    """The partition on both nodes, applied and removed at once (one thread per node)."""

    def __init__(self, runner: CellRunner, pair_name: str, hold_s: float) -> None:
        self.runner = runner
        self.pair = runner.inventory.pairs[pair_name]
        self.hold_s = hold_s
        self.applied: list[tuple[Runner, AppliedImpairment]] = []

    def _sides(self) -> list[tuple[Runner, str, str, Literal["primary", "secondary"]]]:
        inv, p = self.runner.inventory, self.pair
        return [
            (self.runner.pool.get(p.primary), inv.nodes[p.primary].replication.iface,
             inv.nodes[p.secondary].replication.ip, "primary"),
            (self.runner.pool.get(p.secondary), inv.nodes[p.secondary].replication.iface,
             inv.nodes[p.primary].replication.ip, "secondary"),
        ]  # fmt: skip

    def apply(self, undo: ExitStack) -> None:
        impairer = self.runner.faults.impairer

        def one(side: tuple[Runner, str, str, Literal["primary", "secondary"]]) -> None:
            node, iface, peer_ip, role = side
            impairer.apply(
                node, iface=iface, peer_ip=peer_ip, profile=PARTITION, hold_s=self.hold_s, role=role,
                on_planned=lambda planned: self._planned(undo, node, planned), port=self.pair.shaped_port(),
            )  # fmt: skip

        with ThreadPoolExecutor(max_workers=2) as pool:
            for future in [pool.submit(one, side) for side in self._sides()]:
                future.result()

    def _planned(self, undo: ExitStack, node: Runner, planned: AppliedImpairment) -> None:
        self.applied.append((node, planned))
        undo.callback(self.runner.faults.impairer.clear, node, planned)

    def heal(self) -> None:
        impairer = self.runner.faults.impairer
        with ThreadPoolExecutor(max_workers=2) as pool:
            for future in [pool.submit(impairer.clear, node, planned) for node, planned in self.applied]:
                future.result()


def _watch_cut(primary: Replication, cut_s: float, cut_start: float) -> tuple[float | None, int]:
    """Poll the primary while the path is cut: (seconds until it saw the peer lost, or None;
    its out-of-sync KiB at the end of the cut).  A poll that would outlast the cut is not
    started, so the heal comes on time."""
    detect: float | None = None
    behind = 0
    poll_s = 0.0
    while True:
        remaining = cut_s - (time.monotonic() - cut_start)
        if remaining <= poll_s + 0.05:
            time.sleep(max(0.0, remaining))
            return detect, behind
        before = time.monotonic()
        state = primary.state()
        poll_s = time.monotonic() - before
        behind = state.out_of_sync_kib
        if detect is None and not state.connected:
            detect = time.monotonic() - cut_start
        time.sleep(max(0.0, min(0.2, cut_s - (time.monotonic() - cut_start) - poll_s - 0.05)))


def run_partition(runner: CellRunner, pair_name: str, *, cut: Cut, repeat: int = 0) -> PartitionResult:
    """The partition cell on ``pair_name``, holding the pair's share of the lab host alone;
    records its samples."""
    pair = runner.inventory.pairs[pair_name]
    nodes = [pair.primary, pair.secondary]
    with runner.locked(nodes), runner.host_slot(nodes, exclusive=True):
        result = _partition(runner, pair_name, cut, cell_seed("partition", runner.run_id, pair_name, cut, repeat))
    return _record(runner, result, repeat)


def _partition(runner: CellRunner, pair_name: str, cut: Cut, seed: int) -> PartitionResult:
    pair = runner.inventory.pairs[pair_name]
    primary_node = runner.pool.get(pair.primary)
    primary = runner.replication(pair_name, pair.primary)
    primary.wait_healthy(runner.health_timeout_s)
    timeouts = primary.timeouts()
    cut_s = cut_seconds(cut, timeouts.silence_tolerated_s, timeouts.silence_detected_s)
    spec = _write_spec(seed, runtime_s=int(LEAD_S + cut_s + TAIL_S + 0.999))
    guard_replicated_device(primary_node, primary, needed_bytes=spec.footprint_bytes)
    cell = f"partition-{pair_name}-{cut}-{seed}"
    notes: list[str] = []
    with ExitStack() as undo:
        job = runner.fio.start(
            primary_node, spec, pair.device, cell, on_planned=lambda planned: undo.callback(planned.stop)
        )
        time.sleep(LEAD_S)
        partition = _Cut(runner, pair_name, hold_s=cut_s + runner.deadman_grace_s - UNDO_BUDGET_S)
        partition.apply(undo)
        cut_start = time.monotonic()
        detect, behind = _watch_cut(primary, cut_s, cut_start)
        cut_held = time.monotonic() - cut_start
        partition.heal()
        healed = time.monotonic()
        runner.ledger.record("partition-healed", {"pair": pair_name, "cut_s": round(cut_held, 3)})
        fio = job.wait().result
    healthy = wait_resynced(primary, runner.replication(pair_name, pair.secondary))
    resync_s = time.monotonic() - healed if detect is not None else None
    report = primary.verify(max(60.0, REGION_BYTES / (4 * MIB)), stop_bytes=spec.footprint_bytes)
    notes.append(report.describe())
    acked = fio.write.total_ios or 0
    verify_ok = _switchover_verify(runner, pair_name, spec.replace(number_ios=acked), cell, notes)
    final = primary.wait_healthy(120.0)
    return PartitionResult(
        pair=pair_name,
        cut=cut,
        cut_s=cut_held,
        timeouts=timeouts.describe(),
        disconnected=detect is not None,
        detect_s=detect,
        stall_s=_stall_s(fio),
        behind_kib=behind,
        resync_s=resync_s,
        verify_oos_kib=report.out_of_sync_kib,
        verify_s=report.duration_s,
        acked_writes=acked,
        verify_ok=verify_ok,
        healthy_after=final.role == "Primary" and final.healthy and healthy.healthy,
        notes=notes,
    )


def wait_resynced(primary: Replication, peer: Replication) -> ReplicaStatus:
    """Until the pair is healthy again after the heal.  While it is not connected, split brain
    (both sides wrote while apart; it never heals by itself) is looked for and named at once:
    the harness does not resolve it."""
    deadline = time.monotonic() + RESYNC_TIMEOUT_S
    while True:
        state = primary.state()
        if state.healthy:
            return state
        if not state.connected:
            why = primary.diverged_from(peer)
            if why is not None:
                raise SplitBrain(why)
        if time.monotonic() > deadline:
            raise RefusedError(
                f"{primary.node}: {primary.resource} not resynced {RESYNC_TIMEOUT_S:g} s after the heal: "
                f"{state.describe()}"
            )
        time.sleep(1.0)


def _stall_s(fio: FioResult) -> float:
    worst = fio.write.clat_percentile_us(100.0)
    if worst is None:
        raise InfraError("fio reported no write latency for the partition cell")
    return worst / 1e6


def _switchover_verify(runner: CellRunner, pair_name: str, written: WorkloadSpec, cell: str, notes: list[str]) -> bool:
    """Promote the peer (a clean switchover) and replay the acknowledged writes there
    (``written``, capped at what fio acknowledged) with ``verify_only``; the roles are restored
    whatever happens.

    A replay regenerates the writer's random offsets from its seed, which only the same fio
    version reproduces (a Debian 11 fio 3.25 and a Debian 13 fio 3.39 pick other blocks).  When
    the two nodes' fio differ, the replay runs on the writer's own node instead; the online
    verify before it has shown the peer holds the very same blocks."""
    pair = runner.inventory.pairs[pair_name]
    primary = runner.replication(pair_name, pair.primary)
    peer = runner.replication(pair_name, pair.secondary)
    only = written.replace(verify=VerifySpec(alg="crc32c", verify_only=True, state_save=False), runtime_s=None)
    writer_fio, peer_fio = runner.facts(pair.primary).fio_version, runner.facts(pair.secondary).fio_version
    if writer_fio != peer_fio:
        notes.append(
            f"fio differs ({pair.primary} {writer_fio}, {pair.secondary} {peer_fio}): the acknowledged writes are "
            f"replayed on {pair.primary}, and online verify showed {pair.secondary} holds the same blocks"
        )
        verifier = pair.primary
        ok, bad = verify_written(
            runner, runner.pool.get(verifier), only, device=pair.device, cell=f"{cell}-verify", notes=notes
        )
    else:
        verifier = pair.secondary
        primary.demote()
        try:
            peer.promote()
            try:
                ok, bad = verify_written(
                    runner, runner.pool.get(verifier), only, device=pair.device, cell=f"{cell}-verify", notes=notes
                )
            finally:
                peer.demote()
        finally:
            primary.promote()
    if not ok:
        notes.append(f"{verifier}: {bad} acknowledged blocks missing or wrong after the partition")
    return ok


def _record(runner: CellRunner, result: PartitionResult, repeat: int) -> PartitionResult:
    meta = {
        "scenario": SCENARIO,
        "pair": result.pair,
        "mode": "replicated",
        "workload": "partition-randwrite-4k-qd1",
        "impairment": f"partition-{result.cut}",
        "placement": runner.inventory.placement(result.pair),
        "repeat": repeat,
        "run_id": runner.run_id,
    }
    values = {
        "cut": result.cut_s,
        "stall": result.stall_s,
        "detect": result.detect_s if result.detect_s is not None else float("nan"),
        "behind": result.behind_kib / 1024,
        "resync_time": result.resync_s if result.resync_s is not None else float("nan"),
        "verify_out_of_sync": float(result.verify_oos_kib),
        "acked_writes": float(result.acked_writes),
        "lost_writes": float(result.lost_writes),
    }
    problems = _problems(result)
    meta["verdict"] = "fail" if problems else "pass"
    result.samples = [Sample(metric, value, METRICS[metric], meta) for metric, value in values.items()]
    runner.store.append(result.samples)
    summary = (
        f"cut {result.cut_s:.2f} s ({result.timeouts}): "
        + (f"peer lost after {result.detect_s:.2f} s, " if result.detect_s is not None else "stayed connected, ")
        + f"longest write {result.stall_s:.2f} s, "
        + (f"resynced {result.behind_kib} KiB in {result.resync_s:.1f} s, " if result.resync_s is not None else "")
        + f"verify {result.verify_oos_kib} KiB out of sync, {result.acked_writes} acknowledged writes, "
        + f"{result.lost_writes} lost"
    )
    result.verdict = BoundResult("fail" if problems else "pass", "; ".join(problems) or summary)
    result.metadata = {**meta, **{key: getattr(result, key) for key in PartitionResult.PROPERTY_KEYS}}
    result.metadata["summary"] = summary
    return result


def _problems(result: PartitionResult) -> list[str]:
    found = []
    if result.cut == "below-timeout" and result.disconnected:
        found.append(f"a {result.cut_s:.2f} s cut below the timeouts disconnected the peer")
    if result.cut == "above-timeout":
        if not result.disconnected:
            found.append(f"a {result.cut_s:.2f} s cut above the timeouts never disconnected the peer")
        elif result.behind_kib <= 0:
            found.append("the primary did not go on alone (nothing out of sync during the cut)")
    if result.verify_oos_kib:
        found.append(f"online verify found {result.verify_oos_kib} KiB out of sync after the resync")
    if not result.verify_ok:
        found.append("the promoted peer is missing acknowledged writes")
    if not result.healthy_after:
        found.append("the resource did not return healthy with the original primary")
    return found
