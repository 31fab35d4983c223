"""Crashing a real cluster node for the failover scenario: magic SysRq ``c``, a kernel panic.

On the embedded lab a crash is a SIGKILL of the guest (:class:`harness.lab.crash.LabCrasher`).
A real node is crashed from inside: ``echo c > /proc/sysrq-trigger`` panics the kernel at once
(no sync, no unmount, no TCP close), which is what losing a node looks like to its peer.  It
runs only behind the disruptive-scenario opt-in (:mod:`harness.safety.disruptive`).

Before anything changes, :meth:`SysrqCrasher.prepare` checks that the crash will happen and
that the node will come back by itself, and refuses otherwise:

* ``/proc/sysrq-trigger`` exists and root (through ``sudo -n``) may write it
  (CONFIG_MAGIC_SYSRQ).  ``kernel.sysrq`` is read and shown, but it does not decide: it masks
  the *keyboard* only — "invocation of any operation via /proc/sysrq-trigger is always allowed
  (by a user with admin privileges)" (kernel Documentation/admin-guide/sysrq.rst);
* the node reboots after a panic: ``kernel.panic`` ≠ 0 (seconds until the reboot; negative:
  at once) or a crash kernel is loaded (kdump reboots once the dump is saved).  With
  ``kernel.panic = 0`` and no kdump the node hangs in the panic until someone power-cycles it.

:meth:`SysrqCrasher.recover` waits, bounded, until the node answers with a new boot_id, and
brings the pair's replicated device up when the node's own boot did not (DRBD: ``drbdadm up``,
attach and connect; the resync that follows is waited for by the failover scenario).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from harness.errors import HarnessError, InfraError, RefusedError
from harness.inventory.models import PairSpec
from harness.probes.reboot import boot_id_argv, parse_boot_id
from harness.remote import CommandResult, DetachedJob, Shell, polling, run_batch
from harness.remote.pool import NodePool
from harness.replication import replication_for

__all__ = ["TRIGGER", "CrashReadiness", "SysrqCrasher", "crash_script", "parse_readiness", "readiness_commands"]

TRIGGER: Final = "/proc/sysrq-trigger"


@dataclass(frozen=True)
class CrashReadiness:
    """What decides whether a sysrq crash happens and the node comes back by itself."""

    trigger_writable: bool
    sysrq: str
    panic_s: int | None
    crash_kernel_loaded: bool

    def refusal(self, node: str) -> str | None:
        if not self.trigger_writable:
            return (
                f"{node}: {TRIGGER} is missing or not writable by root (kernel without CONFIG_MAGIC_SYSRQ?): "
                "the crash cannot be triggered"
            )
        if self.panic_s is None:
            return f"{node}: cannot read kernel.panic, so it is unknown whether the node reboots after the crash"
        if self.panic_s == 0 and not self.crash_kernel_loaded:
            return (
                f"{node}: kernel.panic = 0 and no crash kernel (kdump) loaded: after the crash the node would "
                "hang in the panic until power-cycled. Let it reboot by itself (`sysctl kernel.panic=10`) "
                "to run crash scenarios"
            )
        return None

    def describe(self) -> str:
        after = "kdump" if self.crash_kernel_loaded and self.panic_s == 0 else f"reboot after {self.panic_s} s"
        return f"kernel.panic={self.panic_s} ({after}), kernel.sysrq={self.sysrq} (keyboard mask only)"


def readiness_commands() -> dict[str, Sequence[str] | Shell]:
    """Read-only probes for one :func:`~harness.remote.run_batch` round trip."""
    return {
        "trigger": Shell(f"[ -w {TRIGGER} ] && echo writable"),
        "sysrq": ["cat", "/proc/sys/kernel/sysrq"],
        "panic": ["cat", "/proc/sys/kernel/panic"],
        "kexec": ["cat", "/sys/kernel/kexec_crash_loaded"],
        "boot_id": boot_id_argv(),
    }


def parse_readiness(results: Mapping[str, CommandResult]) -> CrashReadiness:
    panic = results["panic"].stdout.strip()
    return CrashReadiness(
        trigger_writable=results["trigger"].stdout.strip() == "writable",
        sysrq=results["sysrq"].stdout.strip() or "?",
        panic_s=int(panic) if results["panic"].ok and panic.lstrip("-").isdigit() else None,
        crash_kernel_loaded=results["kexec"].ok and results["kexec"].stdout.strip() == "1",
    )


def crash_script(delay_s: float) -> str:
    """Panic the node ``delay_s`` seconds from now.  Detached (own session, no open output),
    so this command returns and closes its SSH channel first: written synchronously, the call
    would hang until TCP gave up on a dead kernel."""
    return DetachedJob.of_script(f"sleep {delay_s:g}; echo c > {TRIGGER}", deadline_s=None).start_script()


class SysrqCrasher:
    """The failover scenario's ``Crasher`` for real nodes (see the module docstring)."""

    def __init__(
        self,
        pool: NodePool,
        pair: PairSpec,
        *,
        boot_timeout_s: float = 900.0,
        trigger_delay_s: float = 1.0,
        poll_s: float = 5.0,
        sleep: Callable[[float], None] = polling.sleep,
        clock: Callable[[], float] = polling.monotonic,
    ) -> None:
        self.pool = pool
        self.pair = pair
        self.boot_timeout_s = boot_timeout_s
        self.trigger_delay_s = trigger_delay_s
        self.poll_s = poll_s
        self._sleep = sleep
        self._clock = clock
        self._boot_ids: dict[str, str] = {}

    def prepare(self, node: str) -> None:
        """Refuse (:class:`RefusedError`) before any change unless the crash will happen and the
        node will come back; remember its boot_id to recognise the new boot."""
        results = run_batch(self.pool.get(node), readiness_commands(), timeout=30)
        refusal = parse_readiness(results).refusal(node)
        if refusal:
            raise RefusedError(refusal)
        self._boot_ids[node] = parse_boot_id(results["boot_id"].stdout, node)

    def crash(self, node: str) -> None:
        if node not in self._boot_ids:
            self.prepare(node)
        self.pool.get(node).run_script(crash_script(self.trigger_delay_s), timeout=15)
        # The panic has happened once this is over; dropping the connection ends every stream
        # still reading from the dead node (the failover's fio progress reports).
        self._sleep(self.trigger_delay_s + 2.0)
        self.pool.reset(node)

    def recover(self, node: str) -> None:
        before = self._boot_ids[node]
        deadline = self._clock() + self.boot_timeout_s
        last = "no answer yet"
        while True:
            self.pool.reset(node)
            try:
                runner = self.pool.get(node)
                now = parse_boot_id(runner.run(boot_id_argv(), timeout=15).stdout, node)
                if now != before:
                    break
                last = f"boot_id still {before}: the crash did not happen"
            except HarnessError as exc:
                last = str(exc)
            if self._clock() >= deadline:
                raise InfraError(
                    f"{node} did not come back with a new boot_id within {self.boot_timeout_s:g} s of the "
                    f"sysrq crash; last: {last}"
                )
            self._sleep(self.poll_s)
        self._boot_ids[node] = now
        # the node's boot may not have configured the resource (no drbd service enabled)
        replication_for(self.pair, runner).ensure_up()
