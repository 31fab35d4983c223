"""md RAID1 over NBD behind the replication seam (:mod:`harness.replication`): the architecture
SIOS DataKeeper for Linux uses, one pair on one node.

The primary assembles the array over its local leg and an NBD device connected to the peer;
the secondary exports its own leg with ``nbd-server``.  Synchronous by default; protocol ``A``
means asynchronous, the remote leg ``--write-mostly`` with ``--write-behind``.  Every command
is a script of :mod:`harness.mdnbd.commands`; nothing here creates, wipes or forces anything.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from harness.errors import CommandFailed, CommandTimeout, ConfigError, RefusedError
from harness.mdnbd import commands
from harness.mdnbd.state import MdNbdOutputError, MdNbdStatus, parse_state
from harness.mdnbd.watch import MdNbdWatch
from harness.remote import CommandResult, Runner, polling, run_batch
from harness.remote.polling import backoff

__all__ = ["MdNbdEnds", "MdNbdReplication", "MdNbdTimeouts"]

DEVICE_PROBE: Final = "replica_device"
BACKING_PROBE: Final = "replica_backing"
WHOAMI_PROBE: Final = "replica_whoami_"
AUDIT_PROBE: Final = "mdnbd_audit_"


@dataclass(frozen=True)
class MdNbdEnds:
    """What a node of the pair needs to know about the pair: its leg, its NBD device (on the
    primary), its own replication address and the peer's, and the export's port."""

    disk: str
    nbd: str
    ip: str
    peer_ip: str
    port: int
    nbd_timeout_s: int = 5


@dataclass(frozen=True)
class MdNbdTimeouts:
    """The NBD client's request timeout: a silent path shorter than it is waited out; longer,
    the NBD device fails its requests and md drops the leg (the array runs degraded)."""

    nbd_timeout_s: float

    @property
    def silence_tolerated_s(self) -> float:
        return self.nbd_timeout_s

    @property
    def silence_detected_s(self) -> float:
        # the kernel looks at timed-out requests once a second
        return self.nbd_timeout_s + 1.0

    @property
    def answer_timeout_s(self) -> float:
        return self.nbd_timeout_s

    @property
    def request_timeout_s(self) -> float:
        return self.nbd_timeout_s

    def describe(self) -> str:
        return f"nbd-client timeout {self.nbd_timeout_s:g} s"


@dataclass(frozen=True)
class MdNbdCheck:
    """A finished md ``check`` of both legs."""

    node: str
    array: str
    out_of_sync_kib: int
    duration_s: float

    @property
    def identical(self) -> bool:
        return self.out_of_sync_kib == 0

    def describe(self) -> str:
        verdict = "identical" if self.identical else f"{self.out_of_sync_kib} KiB differ"
        return f"md check of {self.array} on {self.node}: {verdict} ({self.duration_s:.1f} s)"


@dataclass(frozen=True)
class Verdict:
    ok: bool
    detail: str


@dataclass(frozen=True)
class MdNbdFindings:
    resources: Mapping[str, Sequence[str]]
    managers: Sequence[str] = field(default_factory=list)
    notes: Sequence[str] = field(default_factory=list)
    resource_notes: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def risks(self) -> list[str]:
        return [*self.managers, *(r for risks in self.resources.values() for r in risks)]


class MdNbdReplication:
    """One md-nbd pair on one node."""

    def __init__(
        self,
        runner: Runner,
        array: str,
        ends: MdNbdEnds,
        *,
        protocol: str = "C",
        poll_interval_s: float = 1.0,
        command_timeout_s: float = 30.0,
        clock: Callable[[], float] = polling.monotonic,
        sleep: Callable[[float], None] = polling.sleep,
    ) -> None:
        if protocol not in ("A", "C"):
            raise ConfigError(f"md-nbd replicates synchronously (C) or asynchronously (A), not protocol {protocol!r}")
        self._runner = runner
        self.resource = commands.check_array_name(array)
        self.ends = ends
        commands.check_nbd_device(ends.nbd)
        self.protocol = protocol
        self._poll_interval_s = poll_interval_s
        self._command_timeout_s = command_timeout_s
        self._clock = clock
        self._sleep = sleep

    @property
    def node(self) -> str:
        return self._runner.name

    @property
    def device(self) -> str:
        return commands.array_device(self.resource)

    def _script(self, script: str, *, timeout: float | None = None) -> CommandResult:
        return self._runner.run_script(script, timeout=timeout or self._command_timeout_s)

    # -- state -----------------------------------------------------------------------------
    def state_probe(self) -> list[str]:
        return ["sh", "-c", commands.state_script(self.resource, self.ends.port, self.ends.peer_ip or None)]

    def read_state(self, output: str) -> MdNbdStatus | None:
        status = parse_state(output)
        if not status.assembled and not status.exporting:
            return None
        return status

    def state(self) -> MdNbdStatus:
        status = self.read_state(self._runner.run(self.state_probe(), timeout=self._command_timeout_s).stdout)
        if status is None:
            raise RefusedError(f"{self.node}: md-nbd pair {self.resource} is neither assembled nor exported here")
        return status

    def healthy(self) -> bool:
        try:
            return self.state().healthy
        except (RefusedError, CommandFailed, MdNbdOutputError):
            return False

    def wait_healthy(self, deadline_s: float) -> MdNbdStatus:
        end = self._clock() + deadline_s
        last: MdNbdStatus | None = None
        error = ""
        pauses = backoff(self._poll_interval_s)
        while True:
            try:
                last = self.state()
                if last.healthy:
                    return last
            except (RefusedError, CommandFailed, CommandTimeout, MdNbdOutputError) as exc:
                error = str(exc)
            if self._clock() >= end:
                seen = last.describe() if last is not None else error or "no state"
                raise RefusedError(f"{self.node}: md-nbd {self.resource} not healthy after {deadline_s:g} s: {seen}")
            self._sleep(min(next(pauses), max(0.0, end - self._clock())))

    # -- identity --------------------------------------------------------------------------
    def identity_probes(self) -> dict[str, list[str]]:
        return {
            DEVICE_PROBE: ["readlink", "-e", self.device],
            # the legs: the array's members if assembled here, else the exported disk
            BACKING_PROBE: [
                "sh",
                "-c",
                f'md=$(readlink -e {self.device}); if [ -n "$md" ]; then for d in /sys/block/${{md##*/}}/md/dev-*; '
                f'do echo "/dev/${{d##*/dev-}}"; done; else echo {self.ends.disk}; fi',
            ],
        }

    def read_identity(self, results: Mapping[str, CommandResult]) -> tuple[str | None, tuple[str, ...]]:
        dev = results.get(DEVICE_PROBE)
        backing = results.get(BACKING_PROBE)
        resolved = dev.stdout.strip() if dev is not None and dev.ok and dev.stdout.strip() else None
        legs = tuple(line.strip() for line in backing.stdout.splitlines() if line.strip()) if backing else ()
        return resolved, legs

    def node_identity_probes(self) -> dict[str, list[str]]:
        return {WHOAMI_PROBE + self.resource.encode().hex(): ["ip", "-o", "addr", "show"]}

    def read_node_identity(
        self, results: Mapping[str, CommandResult], *, node_id: int | None, ip: str, port: int
    ) -> Verdict:
        res = results.get(WHOAMI_PROBE + self.resource.encode().hex())
        if res is None or not res.ok:
            return Verdict(False, f"{self.node}: cannot list its addresses")
        if f" {ip}/" not in res.stdout:
            return Verdict(False, f"{self.node}: has no address {ip}: not the node the inventory names")
        return Verdict(True, f"{self.node}: holds {ip} (md-nbd export port {port})")

    # -- changes ---------------------------------------------------------------------------
    def disconnect(self) -> None:
        self._script(commands.disconnect_leg_script(self.resource, self.ends.nbd), timeout=60)

    def connect(self) -> None:
        e = self.ends
        self._script(commands.connect_leg_script(self.resource, e.nbd, e.peer_ip, e.port, e.nbd_timeout_s), timeout=60)

    def promote(self) -> MdNbdStatus:
        self._script(commands.promote_script(self.resource, self.ends.disk), timeout=60)
        return self.state()

    def demote(self) -> MdNbdStatus:
        e = self.ends
        self._script(commands.demote_script(self.resource, e.disk, e.nbd, e.ip, e.port), timeout=60)
        return self.state()

    def ensure_up(self) -> None:
        """A node back from a crash exports its leg (it comes back as the secondary)."""
        status = parse_state(self._runner.run(self.state_probe(), timeout=self._command_timeout_s).stdout)
        if not status.assembled and not status.exporting:
            e = self.ends
            self._script(commands.export_script(self.resource, e.disk, e.ip, e.port), timeout=60)

    # -- partitions ------------------------------------------------------------------------
    def timeouts(self) -> MdNbdTimeouts:
        return MdNbdTimeouts(float(self.ends.nbd_timeout_s))

    def verify(self, deadline_s: float, *, start_bytes: int = 0, stop_bytes: int | None = None) -> MdNbdCheck:
        if not self.state().healthy:
            raise RefusedError(f"{self.node}: md-nbd {self.resource} is not healthy: nothing to compare")
        started = self._clock()
        stop = None if stop_bytes is None else stop_bytes // 512
        self._script(commands.verify_script(self.resource, start_bytes // 512, stop))
        while True:
            self._sleep(self._poll_interval_s)
            status = self.state()
            # a check that reached its range's end waits there, still called "check"
            reached = stop is not None and (status.sync_done_sectors or 0) >= stop
            if status.sync_action == "idle" or reached:
                mismatch = self._script(commands.end_verify_script(self.resource)).stdout.strip()
                kib = int(mismatch) // 2 if mismatch.isdigit() else status.mismatch_sectors // 2
                return MdNbdCheck(self.node, self.resource, kib, self._clock() - started)
            if self._clock() - started > deadline_s:
                self._script(commands.end_verify_script(self.resource))
                raise RefusedError(f"{self.node}: md check of {self.resource} still running after {deadline_s:g} s")

    def diverged_from(self, peer: object) -> str | None:
        """Both nodes running the array (each took the primary role) is md-nbd's split brain."""
        if not isinstance(peer, MdNbdReplication):
            return None
        try:
            mine, theirs = self.state(), peer.state()
        except (RefusedError, CommandFailed, MdNbdOutputError):
            return None
        if mine.assembled and theirs.assembled:
            return (
                f"split brain on {self.resource}: both {self.node} and {peer.node} run the array on their own "
                "leg; the harness does not resolve it (one side's writes must be discarded) — a human must"
            )
        return None

    # -- event watch -----------------------------------------------------------------------
    def watch(self, run_id: str, name: str, *, max_duration_s: float) -> MdNbdWatch:
        script = commands.state_script(self.resource, self.ends.port)
        return MdNbdWatch.plan(self.node, self.resource, script, run_id, name, max_duration_s=max_duration_s)

    # -- configuration audit ---------------------------------------------------------------
    def audit_commands(self) -> dict[str, list[str]]:
        return {AUDIT_PROBE + self.resource.encode().hex(): self.state_probe()}

    def read_audit(self, results: Mapping[str, CommandResult]) -> MdNbdFindings:
        res = results.get(AUDIT_PROBE + self.resource.encode().hex())
        risks: list[str] = []
        if res is None or not res.ok:
            risks.append(f"{self.resource}: the md-nbd state could not be read")
            return MdNbdFindings({self.resource: risks})
        try:
            status = parse_state(res.stdout)
        except MdNbdOutputError as exc:
            return MdNbdFindings({self.resource: [f"{self.resource}: {exc}"]})
        if status.assembled:
            asynchronous = status.write_behind > 0
            if asynchronous and self.protocol == "C":
                risks.append(f"{self.resource}: write-behind {status.write_behind} (asynchronous), not synchronous")
            if not asynchronous and self.protocol == "A":
                risks.append(f"{self.resource}: synchronous, but the inventory says asynchronous (protocol A)")
        return MdNbdFindings({self.resource: risks})

    def audit(self) -> MdNbdFindings:
        return self.read_audit(run_batch(self._runner, self.audit_commands(), timeout=60))

    # -- every peer: an md-nbd array has its two legs only, the pair's -----------------------
    def peers_probes(self) -> dict[str, list[str]]:
        return {}

    def read_peers(self, results: Mapping[str, CommandResult]) -> None:
        return None

    def peers(self) -> None:
        return None
