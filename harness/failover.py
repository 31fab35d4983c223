"""The failover data-loss oracle: write, crash the primary, promote the peer, verify.

1. On the primary, fio writes a verifiable pattern (``verify=crc32c``, ``do_verify=0``, a
   fixed ``randseed``), reporting every second (``--status-interval``) over SSH to us, so
   the count of *acknowledged* writes survives the primary.
2. The primary is crashed (lab: SIGKILL of every process of its guest; a real cluster: a
   sysrq ``c`` kernel panic, :mod:`harness.sysrq`, only behind ``--allow-disruptive``).
3. The peer notices, is promoted, and the same job runs with ``verify_only`` for the first
   ``acked − iodepth`` writes (fio issues in sequence; with ``iodepth`` in flight, every
   write issued before the last ``iodepth`` had completed — Jepsen's "ok" set; the rest
   are "indeterminate" and excluded).
4. Negative control: verifying far past what was written must fail, or the oracle proves
   nothing.
5. The crashed node comes back, resyncs, and the original roles are restored.  Its boot_id
   must have changed (else the crash did not happen) and the peer's must not (row 29).

Protocol C promises zero loss of acknowledged writes on a single-node crash (LINBIT UG:
"loss of a single node is guaranteed not to lead to any data loss").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from harness.cell import CellRunner
from harness.errors import InfraError
from harness.fio.command import build_fio_argv
from harness.fio.result import FioOutputError, parse_fio_json_stream
from harness.fio.runner import FioFailed
from harness.fio.spec import VerifySpec, WorkloadSpec
from harness.reboot import NodeRebooted, read_boot_ids, reboot_error
from harness.remote import Runner, SshNode
from harness.safety.device import guard_drbd_device

__all__ = ["Crasher", "FailoverResult", "run_failover", "verify_workload"]

MIB = 1024 * 1024


class Crasher(Protocol):
    """How a node is crashed and brought back (the lab, or a real node with opt-in)."""

    def prepare(self, node: str) -> None:
        """Raise RefusedError, before anything changed, if the node cannot be crashed and come back."""

    def crash(self, node: str) -> None: ...

    def recover(self, node: str) -> None: ...


@dataclass
class FailoverResult:
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
    notes: list[str] = field(default_factory=list)

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


def _stream_writes(node: SshNode, argv: list[str], box: dict[str, object]) -> None:
    text, completed = node.stream(argv, timeout=600)
    box["text"], box["completed"] = text, completed


def _wait_disconnected(runner: CellRunner, node: Runner, resource: str, deadline_s: float) -> float:
    start = time.monotonic()
    while time.monotonic() - start < deadline_s:
        state = runner.resource_state(node, resource)
        if state.connection_state != "Connected":
            return time.monotonic() - start
        time.sleep(0.2)
    raise InfraError(f"{node.name}: still Connected {deadline_s:.0f} s after the peer was crashed")


def run_failover(
    runner: CellRunner,
    pair_name: str,
    crasher: Crasher,
    *,
    size: int = 256 * MIB,
    crash_after_s: float = 6.0,
    seed: int = 4242,
    protocol: str | None = None,
    on_rejoin: Callable[[], None] | None = None,
) -> FailoverResult:
    """``protocol``: the protocol the resource runs with now, when the caller changed it from
    the inventory's (the lab's failover scenario measures A and C); ``on_rejoin`` runs right
    after the crashed node is back (the lab re-applies that protocol to it there)."""
    inv = runner.inventory
    pair = inv.pairs[pair_name]
    primary, secondary = runner.pool.get(pair.primary), runner.pool.get(pair.secondary)
    runner.wait_healthy(primary, pair.resource, runner.health_timeout_s)
    crasher.prepare(pair.primary)
    guard_drbd_device(primary, resource=pair.resource, device=pair.device, needed_bytes=size)
    boot_ids = read_boot_ids([primary, secondary])
    spec = verify_workload(size, seed=seed)
    # Reports go to stdout, streamed to us: a file on the primary would die with it.
    argv = build_fio_argv(spec, pair.device, None, status_interval=1, aux_path="/tmp")
    runner.ledger.record("failover-write", {"node": pair.primary, "argv": " ".join(argv)})
    box: dict[str, object] = {}
    writer = threading.Thread(target=_stream_writes, args=(primary, argv, box), daemon=True)
    writer.start()
    time.sleep(crash_after_s)
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
        detect = _wait_disconnected(runner, secondary, pair.resource, 60.0)
        t0 = time.monotonic()
        secondary.run(["drbdadm", "primary", pair.resource], timeout=60)
        promote = time.monotonic() - t0
        runner.ledger.record("failover-promoted", {"node": pair.secondary, "acked": acked})
        notes: list[str] = []
        only = VerifySpec(alg="crc32c", verify_only=True, state_save=False)
        verify_ok, bad_blocks = _verify(
            runner,
            secondary,
            spec.replace(verify=only, number_ios=verified),
            device=pair.device,
            cell=f"failover-verify-{seed}",
            notes=notes,
        )
        beyond = min(size // spec.bs, verified + 20000)
        negative_ok, _ = _verify(
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
    final = runner.wait_healthy(runner.pool.get(pair.primary), pair.resource, 120.0)
    rebooted = reboot_error(boot_ids, read_boot_ids([runner.pool.get(n) for n in boot_ids]), crashed={pair.primary})
    if rebooted:
        raise NodeRebooted(rebooted)
    runner.ledger.record("failover-restored", {"node": pair.primary, "state": final.describe()})
    return FailoverResult(
        pair=pair_name,
        protocol=protocol or pair.protocol,
        acked_writes=acked,
        verified_writes=verified,
        verify_ok=verify_ok,
        bad_blocks=bad_blocks,
        negative_control_failed=negative_failed,
        detect_s=detect,
        promote_s=promote,
        recover_s=recover,
        healthy_after=final.role == "Primary" and not final.problems(),
        reports_seen=len(reports),
        notes=notes,
    )


def _recover(runner: CellRunner, crasher: Crasher, pair_name: str, on_rejoin: Callable[[], None] | None) -> None:
    """Bring the crashed primary back; it resyncs from the promoted peer; restore the roles."""
    pair = runner.inventory.pairs[pair_name]
    crasher.recover(pair.primary)
    if on_rejoin is not None:
        on_rejoin()
    primary, secondary = runner.pool.get(pair.primary), runner.pool.get(pair.secondary)
    runner.wait_healthy(secondary, pair.resource, 600.0)
    state = runner.resource_state(secondary, pair.resource)
    if state.role == "Primary":
        secondary.run(["drbdadm", "secondary", pair.resource], timeout=60)
    primary.run(["drbdadm", "primary", pair.resource], timeout=60)


def _verify(
    runner: CellRunner, node: Runner, spec: WorkloadSpec, *, device: str, cell: str, notes: list[str]
) -> tuple[bool, int]:
    """Run a ``verify_only`` job; return (passed, bad blocks).  fio checks every block unless
    ``verify_fatal`` is set and logs one ``verify:`` line per bad block, which is the count."""
    run = runner.fio.start(node, spec, device, cell)
    try:
        runner.fio.wait(node, run)
    except FioFailed as exc:
        notes.append(str(exc))
        res = node.run(["grep", "-c", "^verify: ", run.log], timeout=30, check=False)
        count = res.stdout.strip()
        return False, int(count) if count.isdigit() else 0
    return True, 0
