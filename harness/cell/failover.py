"""The failover cell, a data-loss oracle: write, crash the primary, promote the peer, verify.

1. On the primary, fio writes a verifiable pattern (``verify=crc32c``, ``do_verify=0``, a
   ``randseed`` of this cell's own), reporting every second (``--status-interval``) over SSH to
   us, so the count of *acknowledged* writes survives the primary.
2. The primary is crashed by the pair's :class:`Crasher` (lab: SIGKILL of every process of its
   guest; a real cluster: a sysrq ``c`` kernel panic, :mod:`harness.cell.sysrq`, only behind
   ``--allow-disruptive``).
3. The peer notices, is promoted, and the same job runs with ``verify_only`` for the first
   ``acked − iodepth`` writes (fio issues in sequence; with ``iodepth`` in flight, every
   write issued before the last ``iodepth`` had completed — Jepsen's "ok" set; the rest
   are "indeterminate" and excluded).
4. Negative control: verifying far past what was written must fail, or the oracle proves
   nothing.  That holds only if no earlier cell left the same pattern there: every failover
   cell of a run writes with its own seed (:func:`~harness.cell.ackverify.cell_seed`), so the
   blocks an earlier cell wrote carry another seed in their verify headers and fail the check.
5. The crashed node comes back, resyncs, and the original roles are restored.  Its boot_id
   must have changed (else the crash did not happen) and the peer's must not (the peer is
   the survivor whose copy is verified: had it rebooted too, the cell tested two crashes).

The replication protocol the cell runs with comes from the pair's :class:`ProtocolSwitch`: the
lab may set A, B or C for the cell (and restores the inventory's afterwards); a real cluster
runs only the inventory's (:class:`InventoryProtocol`), its configuration is never changed.
Protocol C promises zero loss of acknowledged writes on a single-node crash (in DRBD's own
words, "loss of a single node is guaranteed not to lead to any data loss").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.cell.ackverify import cell_seed, verify_written
from harness.cell.guard import refuse_unless_primary
from harness.cell.outcome import CellOutcome
from harness.cell.roles import restore_other_pairs, wait_promotable
from harness.cell.runner import CellRunner
from harness.errors import InfraError, RefusedError
from harness.fio.command import build_fio_argv
from harness.fio.options import VerifySpec
from harness.fio.report import parse_fio_json_stream
from harness.fio.result import FioOutputError
from harness.fio.spec import WorkloadSpec
from harness.inventory.models import PairSpec
from harness.probes.reboot import NodeRebooted, read_boot_ids, reboot_error
from harness.remote.pool import Node
from harness.replication import Replication
from harness.rules.bounds import BoundResult
from harness.runfiles.samples import METRICS, Sample
from harness.safety.device import guard_replicated_device
from harness.units import MIB

__all__ = [
    "Crasher",
    "FailoverParts",
    "FailoverResult",
    "InventoryProtocol",
    "ProtocolSwitch",
    "run_failover",
    "verify_workload",
]

SCENARIO = "failover_integrity"


class Crasher(Protocol):
    """How a node is crashed and brought back (the lab, or a real node with opt-in)."""

    def prepare(self, node: str) -> None:
        """Raise RefusedError, before anything changed, if the node cannot be crashed and come back."""

    def crash(self, node: str) -> None: ...

    def recover(self, node: str) -> None: ...


class ProtocolSwitch(Protocol):
    """Which replication protocol a pair may run the failover cell with, and setting it."""

    def refusal(self, protocol: str) -> str | None:
        """Why the pair cannot run ``protocol`` here (None: it can)."""

    def set(self, protocol: str) -> None:
        """Make both nodes of the pair run ``protocol``."""


class InventoryProtocol:
    """A real cluster's protocol switch: only the protocol the inventory gives the pair, which
    the cluster already runs; the harness never edits a real cluster's configuration."""

    def __init__(self, pair_name: str, pair: PairSpec) -> None:
        self.pair_name = pair_name
        self.pair = pair

    def refusal(self, protocol: str) -> str | None:
        if protocol == self.pair.protocol:
            return None
        return (
            f"the inventory gives {self.pair_name} protocol {self.pair.protocol}; "
            "a real cluster's configuration is not changed"
        )

    def set(self, protocol: str) -> None:
        refusal = self.refusal(protocol)
        if refusal is not None:
            raise RefusedError(refusal)


@dataclass(frozen=True)
class FailoverParts:
    """What a pair's failover needs from where it runs: how its primary is crashed and which
    protocols it may run with (the session hands out the lab's or a real node's)."""

    crasher: Crasher
    protocols: ProtocolSwitch


@dataclass
class FailoverResult(CellOutcome):
    pair: str
    protocol: str
    acked_writes: int
    verified_writes: int
    verify_ok: bool
    bad_blocks: int  # acknowledged writes fio found missing or wrong on the promoted peer
    negative_control_failed: bool
    detect_s: float
    promote_s: float
    recover_s: float
    healthy_after: bool
    reports_seen: int
    #: online verify of the written range once the crashed node resynced (0: replicas identical)
    verify_oos_kib: int = 0
    notes: list[str] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    verdict: BoundResult = field(default_factory=lambda: BoundResult("pass", ""))
    #: what the JUnit properties show: the samples' metadata and the oracle's timings
    metadata: dict[str, Any] = field(default_factory=dict)

    PROPERTY_KEYS = ("pair", "protocol", "verified_writes", "detect_s", "promote_s", "recover_s", "reports_seen")

    @property
    def lost_writes(self) -> int:
        """Acknowledged writes not found intact on the promoted peer (0 when verify passed)."""
        return 0 if self.verify_ok else max(self.bad_blocks, 1)


def verify_workload(size: int, *, seed: int = 4242, iodepth: int = 16) -> WorkloadSpec:
    """The write phase: random 4k writes with a checksum header, no verify at the end."""
    return WorkloadSpec(
        name="failover",
        rw="randwrite",
        bs=4096,
        iodepth=iodepth,
        size=size,
        randseed=seed,
        verify=VerifySpec(alg="crc32c", do_verify=False, state_save=False),
    )


def _stream_writes(node: Node, argv: list[str], box: dict[str, object], sink: list[bytes]) -> None:
    text, completed = node.stream(argv, timeout=600, sink=sink)
    box["text"], box["completed"] = text, completed


def _acked_so_far(sink: list[bytes]) -> int:
    """Writes fio has reported complete so far (0 before its first status report)."""
    try:
        reports = parse_fio_json_stream(b"".join(list(sink)).decode(errors="replace"), allow_truncated_tail=True)
    except FioOutputError:
        return 0
    return (reports[-1].write.total_ios or 0) if reports else 0


def _wait_for_progress(writer: threading.Thread, sink: list[bytes], target_ios: int, limit_s: float) -> None:
    """Until fio has acknowledged ``target_ios`` writes: the crash then lands mid-write on any
    host, however fast (a fixed delay let a fast host finish the whole size first)."""
    deadline = time.monotonic() + limit_s
    while writer.is_alive() and time.monotonic() < deadline:
        if _acked_so_far(sink) >= target_ios:
            return
        time.sleep(0.25)


def _wait_disconnected(replication: Replication, deadline_s: float) -> float:
    start = time.monotonic()
    while time.monotonic() - start < deadline_s:
        if not replication.state().connected:
            return time.monotonic() - start
        time.sleep(0.2)
    raise InfraError(f"{replication.node}: still Connected {deadline_s:.0f} s after the peer was crashed")


def run_failover(
    runner: CellRunner,
    pair_name: str,
    parts: FailoverParts,
    *,
    protocol: str | None = None,
    repeat: int = 0,
    size: int = 256 * MIB,
    crash_at_fraction: float = 0.25,
    crash_limit_s: float = 120.0,
    seed: int | None = None,
) -> FailoverResult:
    """The failover cell on ``pair_name`` with ``protocol`` (default: the inventory's), holding
    the pair's share of the lab host alone (a crash and a resync load all of it); records its
    samples."""
    pair = runner.inventory.pairs[pair_name]
    protocol = protocol or pair.protocol
    refusal = parts.protocols.refusal(protocol)
    if refusal is not None:
        raise RefusedError(refusal)
    switched = protocol != pair.protocol
    seed = seed if seed is not None else cell_seed(runner.run_id, pair_name, protocol, repeat)
    with runner.host_slot([pair.primary, pair.secondary], exclusive=True):
        if switched:
            parts.protocols.set(protocol)
        try:
            result = _oracle(
                runner,
                pair_name,
                parts.crasher,
                protocol=protocol,
                # the rebooted node came back with its configured protocol: align both nodes
                on_rejoin=(lambda: parts.protocols.set(protocol)) if switched else None,
                size=size,
                crash_at_fraction=crash_at_fraction,
                crash_limit_s=crash_limit_s,
                seed=seed,
            )
        finally:
            if switched:
                parts.protocols.set(pair.protocol)
                runner.replication(pair_name, pair.primary).wait_healthy(300.0)
    return _record(runner, result, repeat)


def _record(runner: CellRunner, result: FailoverResult, repeat: int) -> FailoverResult:
    meta = {
        "scenario": SCENARIO,
        "pair": result.pair,
        "mode": "replicated",
        "workload": "failover-randwrite-4k",
        # one row per protocol: C must lose nothing, A and B are measured, never mixed
        "impairment": f"crash-protocol-{result.protocol}",
        "protocol": result.protocol,
        "repeat": repeat,
        "run_id": runner.run_id,
        "verdict": "pass" if result.verify_ok else "fail",
    }
    result.samples = [
        Sample("acked_writes", result.acked_writes, METRICS["acked_writes"], meta),
        Sample("lost_writes", float(result.lost_writes), METRICS["lost_writes"], meta),
        Sample("verify_out_of_sync", float(result.verify_oos_kib), METRICS["verify_out_of_sync"], meta),
    ]
    runner.store.append(result.samples)
    reason = f"{result.acked_writes} acknowledged writes, {result.lost_writes} lost on the promoted peer"
    result.verdict = BoundResult("pass" if result.verify_ok else "fail", reason)
    result.metadata = {**meta, **{key: getattr(result, key) for key in FailoverResult.PROPERTY_KEYS}}
    return result


def _oracle(
    runner: CellRunner,
    pair_name: str,
    crasher: Crasher,
    *,
    protocol: str,
    on_rejoin: Callable[[], None] | None,
    size: int,
    crash_at_fraction: float,
    crash_limit_s: float,
    seed: int,
) -> FailoverResult:
    pair = runner.inventory.pairs[pair_name]
    primary, secondary = runner.pool.get(pair.primary), runner.pool.get(pair.secondary)
    before = runner.replication(pair_name, pair.primary).wait_healthy(runner.health_timeout_s)
    refuse_unless_primary(before, pair.primary, pair.resource)
    crasher.prepare(pair.primary)
    spec = verify_workload(size, seed=seed)
    guard_replicated_device(primary, runner.replication(pair_name, pair.primary), needed_bytes=spec.footprint_bytes)
    boot_ids = read_boot_ids([primary, secondary])
    # Reports go to stdout, streamed to us: a file on the primary would die with it.
    argv = build_fio_argv(spec, pair.device, None, status_interval=1, aux_path="/tmp")
    runner.ledger.record("failover-write", {"node": pair.primary, "argv": " ".join(argv)})
    box: dict[str, object] = {}
    sink: list[bytes] = []
    writer = threading.Thread(target=_stream_writes, args=(primary, argv, box, sink), daemon=True)
    writer.start()
    _wait_for_progress(writer, sink, int(size // spec.bs * crash_at_fraction), crash_limit_s)
    runner.ledger.record("failover-crash", {"node": pair.primary})
    crasher.crash(pair.primary)
    recovered = False
    try:
        writer.join(timeout=60)
        text = str(box.get("text", ""))
        try:
            reports = parse_fio_json_stream(text, allow_truncated_tail=True)
        except FioOutputError as exc:
            raise InfraError(f"{pair.primary}: no fio progress report before the crash ({exc})") from None
        if not reports or box.get("completed"):
            raise InfraError(f"{pair.primary}: fio finished before the crash; raise the size or crash earlier")
        acked = reports[-1].write.total_ios or 0
        verified = max(0, acked - spec.iodepth)
        peer = runner.replication(pair_name, pair.secondary)
        detect = _wait_disconnected(peer, 60.0)
        t0 = time.monotonic()
        peer.promote()
        promote = time.monotonic() - t0
        runner.ledger.record("failover-promoted", {"node": pair.secondary, "acked": acked})
        notes: list[str] = []
        only = VerifySpec(alg="crc32c", verify_only=True, state_save=False)
        verify_ok, bad_blocks = verify_written(
            runner,
            secondary,
            spec.replace(verify=only, number_ios=verified),
            device=pair.device,
            cell=f"failover-verify-{seed}",
            notes=notes,
        )
        beyond = min(size // spec.bs, verified + 20000)
        negative_ok, _ = verify_written(
            runner,
            secondary,
            spec.replace(verify=only, number_ios=beyond),
            device=pair.device,
            cell=f"failover-negative-{seed}",
            notes=[],
        )
        negative_failed = not negative_ok
        t1 = time.monotonic()
        _recover(runner, crasher, pair_name, on_rejoin)
        recovered = True
        recover = time.monotonic() - t1
    finally:
        if not recovered:
            _recover(runner, crasher, pair_name, on_rejoin)
    final = runner.replication(pair_name, pair.primary).wait_healthy(120.0)
    notes += restore_other_pairs(runner, pair.primary, done=pair_name)
    verified_range = runner.replication(pair_name, pair.primary).verify(600.0, stop_bytes=spec.footprint_bytes)
    notes.append(verified_range.describe())
    rebooted = reboot_error(boot_ids, read_boot_ids([runner.pool.get(n) for n in boot_ids]), crashed={pair.primary})
    if rebooted:
        raise NodeRebooted(rebooted)
    runner.ledger.record("failover-restored", {"node": pair.primary, "state": final.describe()})
    return FailoverResult(
        pair=pair_name,
        protocol=protocol,
        acked_writes=acked,
        verified_writes=verified,
        verify_ok=verify_ok,
        bad_blocks=bad_blocks,
        negative_control_failed=negative_failed,
        detect_s=detect,
        promote_s=promote,
        recover_s=recover,
        healthy_after=final.role == "Primary" and final.healthy,
        reports_seen=len(reports),
        verify_oos_kib=verified_range.out_of_sync_kib,
        notes=notes,
    )


def _recover(runner: CellRunner, crasher: Crasher, pair_name: str, on_rejoin: Callable[[], None] | None) -> None:
    """Bring the crashed primary back; it resyncs from the promoted peer; restore the roles."""
    pair = runner.inventory.pairs[pair_name]
    crasher.recover(pair.primary)
    if on_rejoin is not None:
        on_rejoin()
    peer = runner.replication(pair_name, pair.secondary)
    peer.wait_healthy(600.0)
    if peer.state().role == "Primary":
        peer.demote()
    primary = runner.replication(pair_name, pair.primary)
    wait_promotable(primary)  # DRBD 9: until the peer's demotion reached it
    primary.promote()
