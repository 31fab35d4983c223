"""DRBD behind the replication seam: one resource on one node (:mod:`harness.replication`).

:class:`DrbdReplication` works through a :class:`~harness.remote.Runner` (the real one is
:class:`~harness.remote.SshNode`; unit tests use doubles that replay recorded output).  It only
ever runs the argv lists of :mod:`harness.drbd.commands`, so nothing here can discard data or
force a role.  Every question a caller may want to ask inside a round trip of its own
(the state, the device's identity, the configuration audit) comes as read-only commands plus a
reader of their output; :meth:`DrbdReplication.state` and :meth:`DrbdReplication.audit` ask them
in a round trip of their own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from typing import Final

from harness.drbd import commands
from harness.drbd.audit import AuditPlan, NodeAudit
from harness.drbd.errors import DrbdNotReady, DrbdOutputError, DrbdSplitBrain
from harness.drbd.events import parse_events
from harness.drbd.fold import EventFold
from harness.drbd.generations import DataGenerations, diverged, parse_gi
from harness.drbd.identity import IdentityCheck, judge_identity, read_this_host
from harness.drbd.layout import PairEnds
from harness.drbd.peers import PeersPlan
from harness.drbd.quorum import QuorumSummary
from harness.drbd.state import ResourceState
from harness.drbd.verify import SECTOR, ConnectionTimeouts, VerifyReport, parse_timeouts, wait_verified
from harness.drbd.watch import EventWatch, watch_paths
from harness.errors import CommandFailed, CommandTimeout, ConfigError, RefusedError
from harness.fields import DRBD_DEVICE_PATTERN
from harness.remote import CommandResult, Runner, polling, run_batch
from harness.remote.nodefiles import NODE_ROOT
from harness.remote.polling import backoff

__all__ = ["DrbdReplication"]

_DRBD_DEVICE_RE: Final = re.compile(DRBD_DEVICE_PATTERN)
#: names of the identity probes in a caller's batch
DEVICE_PROBE: Final = "replica_device"
BACKING_PROBE: Final = "replica_backing"
#: prefix of the node-identity probe's name; the resource follows in hex (an identifier, one to one)
WHOAMI_PROBE: Final = "replica_whoami_"


class DrbdReplication:
    """One DRBD resource on one node."""

    def __init__(
        self,
        runner: Runner,
        resource: str,
        *,
        device: str | None = None,
        protocol: str = "C",
        poll_interval_s: float = 1.0,
        command_timeout_s: float = 30.0,
        change_timeout_s: float = 60.0,
        watch_root: str = NODE_ROOT,
        clock: Callable[[], float] = polling.monotonic,
        sleep: Callable[[float], None] = polling.sleep,
        pair: PairEnds | None = None,
        diskless_peers: Collection[str] | None = None,
    ) -> None:
        self._runner = runner
        self.resource = commands.check_resource_name(resource)
        if device is not None and not _DRBD_DEVICE_RE.fullmatch(device):
            raise ConfigError(f"{runner.name}: {device!r} is not a DRBD device path (expected /dev/drbdN)")
        self._device = device
        self.protocol = protocol
        if poll_interval_s <= 0 or command_timeout_s <= 0 or change_timeout_s <= 0:
            raise ConfigError("poll_interval_s, command_timeout_s and change_timeout_s must be positive")
        self._poll_interval_s = poll_interval_s
        self._command_timeout_s = command_timeout_s
        self._change_timeout_s = change_timeout_s
        watch_paths("probe", "probe", root=watch_root)  # validate the root once, early
        self._watch_root = watch_root
        self._clock = clock
        self._sleep = sleep
        # this node and its peer in the pair under test: in a DRBD 9 resource with more peers
        # the pair's own connection decides its state and its audit
        self._pair = pair
        # the resource's peers that have no disk by configuration (tie-breakers); None: not known
        self._diskless = None if diskless_peers is None else frozenset(diskless_peers)

    # -- identity --------------------------------------------------------------------------
    @property
    def node(self) -> str:
        return self._runner.name

    @property
    def device(self) -> str:
        """The DRBD device: the inventory's, else what ``drbdadm sh-dev`` says on the node."""
        if self._device is None:
            self._device = self.resolve_device()
        return self._device

    def resolve_device(self) -> str:
        """``drbdadm sh-dev`` on the node; must equal the inventory's device (else the harness
        would write to a device that is not the pair's)."""
        out = self._run(commands.sh_dev_argv(self.resource)).stdout.strip()
        if not _DRBD_DEVICE_RE.fullmatch(out):
            raise DrbdOutputError(f"{self.node}: drbdadm sh-dev {self.resource} printed {out!r}, not /dev/drbdN")
        if self._device is not None and out != self._device:
            raise RefusedError(
                f"{self.node}: resource {self.resource} is {out} on the node but the inventory says "
                f"{self._device}; refusing to write to either"
            )
        return out

    def backing_device(self) -> str:
        """``drbdadm sh-ll-dev``: the lower-level device, which must never be written."""
        out = self._run(commands.sh_ll_dev_argv(self.resource)).stdout.strip()
        if not out.startswith("/"):
            raise DrbdOutputError(f"{self.node}: drbdadm sh-ll-dev {self.resource} printed {out!r}")
        return out

    def identity_probes(self) -> dict[str, list[str]]:
        """Read-only commands printing the resource's device and its backing device, for the
        device guard's round trip (``drbdadm sh-dev`` / ``sh-ll-dev``)."""
        return {
            DEVICE_PROBE: commands.sh_dev_argv(self.resource),
            BACKING_PROBE: commands.sh_ll_dev_argv(self.resource),
        }

    def read_identity(self, results: Mapping[str, CommandResult]) -> tuple[str | None, tuple[str, ...]]:
        """(the device as the node resolves the resource, its backing devices) from
        :meth:`identity_probes`' results; None when ``sh-dev`` failed (not configured here)."""
        device, backing = results[DEVICE_PROBE], results[BACKING_PROBE]
        return (
            device.stdout.strip() if device.ok else None,
            (backing.stdout.strip(),) if backing.ok and backing.stdout.strip() else (),
        )

    def node_identity_probes(self) -> dict[str, list[str]]:
        """``drbdsetup show RES`` (read-only): which node DRBD says this is, for the inventory's
        identity pin (:mod:`harness.drbd.identity`)."""
        return {self._whoami: commands.show_argv(self.resource)}

    def read_node_identity(
        self, results: Mapping[str, CommandResult], *, node_id: int | None, ip: str, port: int
    ) -> IdentityCheck:
        """:meth:`node_identity_probes`' answer against the pinned node-id (DRBD 9) and the
        inventory's replication address and port (every version)."""
        result = results[self._whoami]
        if not result.ok:
            error = (result.stderr.strip() or f"exit {result.exit_code}").splitlines()[0]
            return IdentityCheck(False, f"{self.node}: `drbdsetup show {self.resource}` failed: {error}")
        try:
            this = read_this_host(result.stdout, self.resource)
        except DrbdOutputError as exc:
            return IdentityCheck(False, f"{self.node}: cannot read drbdsetup show {self.resource}: {exc}")
        return judge_identity(this, node=self.node, resource=self.resource, node_id=node_id, ip=ip, port=port)

    @property
    def _whoami(self) -> str:
        return WHOAMI_PROBE + self.resource.encode().hex()

    def version(self) -> commands.DrbdVersion:
        return commands.parse_drbdadm_version(self._run(commands.version_argv(), sudo=False).stdout)

    def show(self) -> str:
        """``drbdsetup show RES``: the effective configuration, kept as run metadata."""
        return self._run(commands.show_argv(self.resource)).stdout

    # -- state -----------------------------------------------------------------------------
    def _run(self, argv: list[str], *, timeout: float | None = None, sudo: bool = True) -> CommandResult:
        return self._runner.run(argv, timeout=timeout or self._command_timeout_s, sudo=sudo)

    def state_probe(self) -> list[str]:
        """The read-only command :meth:`read_state` reads (``events2 --now --statistics RES``)."""
        return commands.events2_now_argv(self.resource)

    def read_state(self, output: str) -> ResourceState | None:
        """The resource from :meth:`state_probe`'s output; None when it is not configured."""
        try:
            fold = EventFold().apply_all(parse_events(output))
        except DrbdOutputError as exc:
            raise DrbdOutputError(f"{self.node}: {exc}") from None
        state = fold.resource(self.resource)
        if state is not None and self._diskless is not None:
            state = state.with_diskless(self._diskless)
        if state is None or self._pair is None:
            return state
        return state.toward(self._pair.peer.names)

    def state(self, *, timeout: float | None = None) -> ResourceState:
        """The resource now, from ``drbdsetup events2 --now --statistics RES``."""
        state = self.read_state(self._run(self.state_probe(), timeout=timeout).stdout)
        if state is None:
            raise DrbdNotReady(f"{self.node}: DRBD resource {self.resource} is not configured (not in events2)")
        return state

    def healthy(self) -> bool:
        try:
            return self.state().healthy
        except DrbdNotReady:
            return False

    def wait_healthy(self, deadline_s: float, *, max_out_of_sync_kib: int | None = None) -> ResourceState:
        """Poll ``events2 --now`` until healthy, or raise :class:`DrbdNotReady` at the deadline.

        ``max_out_of_sync_kib`` also requires out-of-sync to be back at a baseline (the
        resync a fault caused has finished before the next cell).
        Failed or timed-out probes are retried until the deadline; a lost SSH connection is
        not (the node is gone, waiting will not help).  Split brain fails at once: it never
        heals by itself and the harness does not resolve it (that discards one side's data).
        """
        end = self._clock() + max(deadline_s, 0.0)
        last_state: ResourceState | None = None
        last_error: Exception | None = None
        pauses = backoff(self._poll_interval_s)
        while True:
            remaining = end - self._clock()
            timeout = max(1.0, min(self._command_timeout_s, remaining))
            try:
                last_state, last_error = self.state(timeout=timeout), None
            except (CommandFailed, CommandTimeout, DrbdNotReady, DrbdOutputError) as exc:
                last_error = exc
            if last_state is not None and last_error is None:
                if last_state.split_brain:
                    raise DrbdSplitBrain(
                        f"{self.node}: DRBD resource {self.resource} is in split brain "
                        f"({last_state.describe()}); the harness does not resolve it — a human must"
                    )
                oos_ok = max_out_of_sync_kib is None or last_state.out_of_sync_kib <= max_out_of_sync_kib
                if last_state.healthy and oos_ok:
                    return last_state
            if self._clock() >= end:
                break
            self._sleep(min(next(pauses), max(0.0, end - self._clock())))
        raise DrbdNotReady(self._not_healthy_message(deadline_s, last_state, last_error, max_out_of_sync_kib))

    def _not_healthy_message(
        self,
        deadline_s: float,
        state: ResourceState | None,
        error: Exception | None,
        max_oos: int | None,
    ) -> str:
        head = f"{self.node}: DRBD resource {self.resource} not healthy after {deadline_s:g} s"
        if error is not None or state is None:
            return f"{head}; last probe failed: {error}"
        why = list(state.problems())
        if max_oos is not None and state.out_of_sync_kib > max_oos:
            why.append(f"out-of-sync {state.out_of_sync_kib} KiB > {max_oos} KiB")
        msg = f"{head}; last state: {state.describe()} ({'; '.join(why)})"
        if state.connection_state == "StandAlone":
            msg += (
                f". StandAlone does not reconnect by itself: check why, then `drbdadm connect {self.resource}`"
                " (the harness never forces a connection or discards data)"
            )
        return msg

    # -- roles and connection (the disconnected cells and the failover) --------------------
    def _change(self, argv: list[str]) -> None:
        self._run(argv, timeout=self._change_timeout_s)

    def promote(self) -> ResourceState:
        self._change(commands.primary_argv(self.resource))
        return self._expect_role("Primary")

    def demote(self) -> ResourceState:
        self._change(commands.secondary_argv(self.resource))
        return self._expect_role("Secondary")

    def _expect_role(self, role: str) -> ResourceState:
        state = self.state()
        if state.role != role:
            raise DrbdNotReady(f"{self.node}: DRBD resource {self.resource} is {state.role}, expected {role}")
        return state

    def disconnect(self) -> None:
        self._change(commands.disconnect_argv(self.resource))

    def connect(self) -> None:
        self._change(commands.connect_argv(self.resource))

    def down(self) -> None:
        self._change(commands.down_argv(self.resource))

    def up(self) -> None:
        """Attach and connect (``drbdadm up``), after a boot that did not configure the resource."""
        self._run(commands.up_argv(self.resource), timeout=max(self._change_timeout_s, 120.0))

    def ensure_up(self) -> None:
        """:meth:`up` unless the resource is configured already (a node back from a crash)."""
        try:
            self.state()
        except DrbdNotReady:
            self.up()

    # -- partitions: how long a silent path is tolerated, and whether the replicas match ---
    def timeouts(self) -> ConnectionTimeouts:
        """The resource's effective connection timeouts (``drbdsetup show --show-defaults``)."""
        return parse_timeouts(self._run(commands.show_defaults_argv(self.resource)).stdout, self.resource)

    def verify(self, deadline_s: float, *, start_bytes: int = 0, stop_bytes: int | None = None) -> VerifyReport:
        """Online verify of ``[start_bytes, stop_bytes)`` (to the end when None), from this
        node; waits until it has finished.  Raises :class:`DrbdNotReady` when the resource is
        not healthy to begin with (a verify of a resyncing pair says nothing) or has no
        ``verify-alg`` (the harness never configures one on a cluster)."""
        before = self.state()
        if not before.healthy:
            raise DrbdNotReady(f"{self.node}: no online verify of {self.resource}: {before.describe()}")
        start_sector = start_bytes // SECTOR
        stop_sector = None if stop_bytes is None else -(-stop_bytes // SECTOR)
        try:
            self._run(commands.verify_argv(self.resource, start_sector, stop_sector), timeout=self._change_timeout_s)
        except CommandFailed as exc:
            if "verify algorithm" in str(exc):
                raise DrbdNotReady(
                    f"{self.node}: resource {self.resource} has no verify-alg in its net section; online verify "
                    "needs one (e.g. `verify-alg crc32c;`), which the harness never sets on a cluster"
                ) from None
            raise
        final, waited = wait_verified(
            self.state,
            deadline_s=deadline_s,
            poll_s=min(self._poll_interval_s, 0.5),
            clock=self._clock,
            sleep=self._sleep,
        )
        return VerifyReport(self.node, self.resource, start_bytes, stop_bytes, final.out_of_sync_kib, waited)

    def generations(self) -> DataGenerations:
        """The resource's data generation UUIDs (``drbdadm get-gi``)."""
        return parse_gi(self._run(commands.get_gi_argv(self.resource)).stdout)

    def diverged_from(self, peer: object) -> str | None:
        """Why both sides hold writes the other lacks (DRBD's split brain), or None: read
        from both nodes' data generations, so it holds while they cannot talk."""
        if not isinstance(peer, DrbdReplication):
            return None
        mine, theirs = self.generations(), peer.generations()
        if not diverged(mine, theirs):
            return None
        return (
            f"split brain on {self.resource}: {self.node} ({mine.describe()}) and {peer.node} "
            f"({theirs.describe()}) both wrote since they parted from generation {mine.bitmap & ~1:016X}; "
            "the harness does not resolve it (resolving discards one side's writes) — a human must"
        )

    # -- every peer of the resource, and its quorum ---------------------------------------
    def _peers_plan(self) -> PeersPlan:
        return PeersPlan(self.node, self.resource, self._diskless or ())

    def peers_probes(self) -> dict[str, list[str]]:
        """Read-only commands :meth:`read_peers` reads: the whole resource's state and settings."""
        return self._peers_plan().commands()

    def read_peers(self, results: Mapping[str, CommandResult]) -> QuorumSummary | None:
        """Every peer with its disk and role, the quorum and the margin (None: not configured here)."""
        return self._peers_plan().read(results)

    def peers(self) -> QuorumSummary | None:
        """:meth:`read_peers` in a round trip of its own."""
        return self.read_peers(run_batch(self._runner, self.peers_probes(), timeout=60))

    # -- event watch -----------------------------------------------------------------------
    def watch(self, run_id: str, name: str, *, max_duration_s: float) -> EventWatch:
        """The plan of an events2 watcher for one measurement window (see :mod:`harness.drbd.watch`)."""
        return EventWatch.plan(
            self.node,
            self.resource,
            run_id,
            name,
            max_duration_s=max_duration_s,
            root=self._watch_root,
            peers=self._pair.peer.names if self._pair is not None else (),
            diskless=self._diskless,
        )

    # -- configuration audit ---------------------------------------------------------------
    def _audit_plan(self) -> AuditPlan:
        return AuditPlan({self.resource: self.protocol}, {self.resource: self._pair} if self._pair else {})

    def audit_commands(self) -> dict[str, list[str]]:
        """Read-only commands of the configuration audit (:mod:`harness.drbd.audit`), named
        after the resource so the audits of several resources share one round trip."""
        return self._audit_plan().commands()

    def read_audit(self, results: Mapping[str, CommandResult]) -> NodeAudit:
        return self._audit_plan().evaluate(results)

    def audit(self) -> NodeAudit:
        """The audit in a round trip of its own."""
        return self.read_audit(run_batch(self._runner, self.audit_commands(), timeout=60))
