"""The replication seam, and DRBD behind it.

Scenarios talk to a :class:`Replication` — the device to write to, its state, wait until
healthy, promote/demote, and an event watch around a measurement window — so a plain device
(:class:`NoReplication`, for disk-only studies) and, later, other products (SIOS DataKeeper)
plug in without touching the scenarios (DESIGN.md, ``drbd`` row).

:class:`DrbdReplication` works through a :class:`~harness.remote.Runner` (the real one is
:class:`~harness.remote.SshNode`; unit tests use a fake that replays recorded output).  It only
ever runs the argv lists of :mod:`harness.drbd.commands`, so nothing here can discard data or
force a role (SAFE-5).

The event watch (REQ-07): ``start_watch`` launches ``drbdsetup events2 --timestamps
--statistics RES`` on the node, detached (``setsid``, stdin from /dev/null, output to
``/run/harness/<run-id>/events-<RES>.log``) and under a node-side deadline (``timeout``), so it
cannot outlive a crashed harness by more than that deadline (CLEAN-4).  Its pid is recorded
next to the log.  ``stop_watch`` stops that process group — after checking the pid still is a
drbdsetup, so a recycled pid is never signalled — and reads the capture back for
:mod:`harness.drbd.validity`.  drbdsetup flushes after every event (it is meant to be read
through pipes), so the file is current when it is read.
"""

from __future__ import annotations

import math
import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Protocol

from harness.drbd import commands
from harness.drbd.errors import DrbdNotReady, DrbdOutputError
from harness.drbd.events import Event, EventFold, parse_events
from harness.drbd.state import ResourceState
from harness.drbd.validity import RunWatch, Verdict
from harness.errors import ConfigError, RefusedError
from harness.remote import CommandFailed, CommandResult, CommandTimeout, Runner
from harness.runid import validate_run_id

__all__ = [
    "DRBD_DEVICE_PATTERN",
    "DrbdReplication",
    "EventWatch",
    "NoReplication",
    "PlainDeviceState",
    "ReplicaStatus",
    "Replication",
    "WatchReport",
    "watch_paths",
]

DRBD_DEVICE_PATTERN: Final = r"^/dev/drbd[0-9]{1,4}$"
_DRBD_DEVICE_RE: Final = re.compile(r"\A/dev/drbd[0-9]{1,4}\Z")
_PLAIN_DEVICE_RE: Final = re.compile(r"\A/dev/[A-Za-z0-9][A-Za-z0-9_+-]*(?:/[A-Za-z0-9][A-Za-z0-9_.+-]*)*\Z")
_WATCH_ROOT_RE: Final = re.compile(r"\A(?:/[A-Za-z0-9_][A-Za-z0-9_.-]*)+\Z")
_MAX_WATCH_S: Final = 24 * 3600
_WATCH_MARK: Final = "harness-watch alive="


# ---------------------------------------------------------------------------------------------
# the seam
# ---------------------------------------------------------------------------------------------
class ReplicaStatus(Protocol):
    """What a scenario may ask of any replication product's state."""

    @property
    def role(self) -> str: ...

    @property
    def healthy(self) -> bool: ...

    @property
    def out_of_sync_kib(self) -> int: ...

    def describe(self) -> str: ...


@dataclass(frozen=True)
class EventWatch:
    """A running (or, for a plain device, trivial) event watch on one node."""

    node: str
    resource: str
    run_id: str
    log_path: str
    pid_path: str
    pid: int | None
    max_duration_s: float


@dataclass(frozen=True)
class WatchReport:
    """What the watch saw: the verdict for the window, the events and the raw capture."""

    verdict: Verdict
    events: tuple[Event, ...]
    capture: str
    watcher_alive_at_stop: bool


class Replication(Protocol):
    """A replicated (or plain) block device on one node, as scenarios use it."""

    @property
    def node(self) -> str: ...

    @property
    def device(self) -> str: ...

    def state(self) -> ReplicaStatus: ...

    def healthy(self) -> bool: ...

    def wait_healthy(self, deadline_s: float) -> ReplicaStatus: ...

    def promote(self) -> ReplicaStatus: ...

    def demote(self) -> ReplicaStatus: ...

    def start_watch(self, run_id: str, *, max_duration_s: float) -> EventWatch: ...

    def stop_watch(self, watch: EventWatch) -> WatchReport: ...


def watch_paths(run_id: str, resource: str, *, root: str = "/run/harness") -> tuple[str, str, str]:
    """(directory, log, pid file) of a watch, after validating every part that goes into them.

    The run id follows :mod:`harness.runid` (one path component, no option look-alike); the
    resource name is checked by :func:`~harness.drbd.commands.check_resource_name`
    and only ever appears after the ``events-`` prefix, so it cannot leave the directory.
    """
    validate_run_id(run_id)
    if not _WATCH_ROOT_RE.match(root) or any(part in {".", ".."} for part in root.split("/")):
        raise ConfigError(f"watch root {root!r} must be a normalised absolute path of letters, digits and '_.-'")
    commands.check_resource_name(resource)
    directory = f"{root}/{run_id}"
    return directory, f"{directory}/events-{resource}.log", f"{directory}/events-{resource}.pid"


# ---------------------------------------------------------------------------------------------
# DRBD
# ---------------------------------------------------------------------------------------------
class DrbdReplication:
    """One DRBD resource on one node."""

    def __init__(
        self,
        runner: Runner,
        resource: str,
        *,
        device: str | None = None,
        poll_interval_s: float = 1.0,
        command_timeout_s: float = 30.0,
        watch_root: str = "/run/harness",
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._runner = runner
        self.resource = commands.check_resource_name(resource)
        if device is not None and not _DRBD_DEVICE_RE.match(device):
            raise ConfigError(f"{runner.name}: {device!r} is not a DRBD device path (expected /dev/drbdN)")
        self._device = device
        if poll_interval_s <= 0 or command_timeout_s <= 0:
            raise ConfigError("poll_interval_s and command_timeout_s must be positive")
        self._poll_interval_s = poll_interval_s
        self._command_timeout_s = command_timeout_s
        watch_paths("probe", self.resource, root=watch_root)  # validate the root once, early
        self._watch_root = watch_root
        self._clock = clock
        self._sleep = sleep

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
        """``drbdadm sh-dev`` on the node; must equal the inventory's device (SAFE-1)."""
        out = self._run(commands.sh_dev_argv(self.resource)).stdout.strip()
        if not _DRBD_DEVICE_RE.match(out):
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

    def version(self) -> commands.DrbdVersion:
        return commands.parse_drbdadm_version(self._run(commands.version_argv(), sudo=False).stdout)

    def show(self) -> str:
        """``drbdsetup show RES``: the effective configuration, kept as run metadata."""
        return self._run(commands.show_argv(self.resource)).stdout

    # -- state -----------------------------------------------------------------------------
    def _run(self, argv: list[str], *, timeout: float | None = None, sudo: bool = True) -> CommandResult:
        return self._runner.run(argv, timeout=timeout or self._command_timeout_s, sudo=sudo)

    def state(self, *, timeout: float | None = None) -> ResourceState:
        """The resource now, from ``drbdsetup events2 --now --statistics RES``."""
        out = self._run(commands.events2_now_argv(self.resource), timeout=timeout).stdout
        try:
            fold = EventFold().apply_all(parse_events(out))
        except DrbdOutputError as exc:
            raise DrbdOutputError(f"{self.node}: {exc}") from None
        state = fold.resource(self.resource)
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

        ``max_out_of_sync_kib`` also requires out-of-sync to be back at a baseline (CLEAN-6).
        Failed or timed-out probes are retried until the deadline; a lost SSH connection is
        not (the node is gone, waiting will not help).  Split brain fails at once: it never
        heals by itself and the harness does not resolve it (reliability.md §4 row 32).
        """
        end = self._clock() + max(deadline_s, 0.0)
        last_state: ResourceState | None = None
        last_error: Exception | None = None
        while True:
            remaining = end - self._clock()
            timeout = max(1.0, min(self._command_timeout_s, remaining))
            try:
                last_state, last_error = self.state(timeout=timeout), None
            except (CommandFailed, CommandTimeout, DrbdNotReady, DrbdOutputError) as exc:
                last_error = exc
            if last_state is not None and last_error is None:
                if last_state.split_brain:
                    raise DrbdNotReady(
                        f"{self.node}: DRBD resource {self.resource} is in split brain "
                        f"({last_state.describe()}); the harness does not resolve it — a human must"
                    )
                oos_ok = max_out_of_sync_kib is None or last_state.out_of_sync_kib <= max_out_of_sync_kib
                if last_state.healthy and oos_ok:
                    return last_state
            if self._clock() >= end:
                break
            self._sleep(min(self._poll_interval_s, max(0.0, end - self._clock())))
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

    # -- roles and connection (lab and failover scenarios) ---------------------------------
    def promote(self) -> ResourceState:
        self._run(commands.primary_argv(self.resource))
        return self._expect_role("Primary")

    def demote(self) -> ResourceState:
        self._run(commands.secondary_argv(self.resource))
        return self._expect_role("Secondary")

    def _expect_role(self, role: str) -> ResourceState:
        state = self.state()
        if state.role != role:
            raise DrbdNotReady(f"{self.node}: DRBD resource {self.resource} is {state.role}, expected {role}")
        return state

    def disconnect(self) -> None:
        self._run(commands.disconnect_argv(self.resource))

    def connect(self) -> None:
        self._run(commands.connect_argv(self.resource))

    def down(self) -> None:
        self._run(commands.down_argv(self.resource))

    def up(self) -> None:
        self._run(commands.up_argv(self.resource))

    # -- event watch -----------------------------------------------------------------------
    def start_watch(self, run_id: str, *, max_duration_s: float) -> EventWatch:
        """Start the detached events2 watcher; it stops itself after ``max_duration_s``."""
        if not 0 < max_duration_s <= _MAX_WATCH_S:
            raise ConfigError(f"watch duration must be within (0, {_MAX_WATCH_S}] s, got {max_duration_s!r}")
        directory, log, pidfile = watch_paths(run_id, self.resource, root=self._watch_root)
        q = shlex.quote
        watcher = shlex.join(
            ["timeout", "--kill-after=5", str(math.ceil(max_duration_s)), *commands.events2_watch_argv(self.resource)]
        )
        # The inner shell writes its own pid before exec'ing timeout, so the pid file is right
        # whether or not setsid had to fork; after setsid that pid also names the process group.
        inner = f"echo $$ > {q(pidfile)}; exec {watcher} > {q(log)} 2>&1 < /dev/null"
        script = "\n".join(
            [
                "set -e",
                "umask 077",
                f"mkdir -p {q(directory)}",
                f"rm -f {q(pidfile)}",
                f"setsid sh -c {q(inner)} < /dev/null > /dev/null 2>&1 &",
                "i=0",
                f'while [ ! -s {q(pidfile)} ] && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done',
                f"cat {q(pidfile)}",
            ]
        )
        out = self._runner.run_script(script, timeout=self._command_timeout_s).stdout.strip()
        last = out.splitlines()[-1] if out else ""
        if not last.isdigit():
            raise DrbdOutputError(f"{self.node}: event watcher for {self.resource} did not report a pid (got {out!r})")
        return EventWatch(self.node, self.resource, run_id, log, pidfile, int(last), max_duration_s)

    def stop_watch(self, watch: EventWatch) -> WatchReport:
        """Stop the watcher (if it still runs) and judge the window from what it captured."""
        _, log, pidfile = watch_paths(watch.run_id, watch.resource, root=self._watch_root)
        if (log, pidfile) != (watch.log_path, watch.pid_path):
            raise ConfigError(f"{self.node}: watch paths {watch.log_path!r} do not belong to this harness")
        q = shlex.quote
        script = "\n".join(
            [
                f"pid=$(cat {q(pidfile)} 2>/dev/null || true)",
                "case \"$pid\" in ''|*[!0-9]*) pid='' ;; esac",
                "alive=0",
                # Signal only a process that still is our drbdsetup watcher: a pid from a stale
                # file may have been recycled by something else.
                'if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null'
                ' && grep -q drbdsetup "/proc/$pid/cmdline" 2>/dev/null; then',
                "  alive=1",
                '  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true',
                "fi",
                f"rm -f {q(pidfile)}",
                f'echo "{_WATCH_MARK}$alive"',
                f"cat {q(log)} 2>/dev/null || true",
            ]
        )
        out = self._runner.run_script(script, timeout=self._command_timeout_s).stdout
        head, _, capture = out.partition("\n")
        if not head.startswith(_WATCH_MARK):
            raise DrbdOutputError(f"{self.node}: stopping the event watcher printed {head!r}")
        alive = head[len(_WATCH_MARK) :].strip() == "1"
        run_watch = RunWatch(watch.resource)
        run_watch.feed_text(capture)
        verdict = run_watch.verdict()
        if verdict.valid and not alive:
            verdict = Verdict(
                False,
                f"{watch.resource}: the event watcher on {self.node} had exited before the window ended "
                f"(deadline {watch.max_duration_s:g} s too short, or it was killed); the end of the window "
                "was not observed",
            )
        return WatchReport(verdict, run_watch.events, capture, alive)


# ---------------------------------------------------------------------------------------------
# no replication
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PlainDeviceState:
    """The state of an unreplicated device: always "healthy", nothing out of sync."""

    device: str
    role: str = "Primary"

    @property
    def healthy(self) -> bool:
        return True

    @property
    def out_of_sync_kib(self) -> int:
        return 0

    def describe(self) -> str:
        return f"plain device {self.device} (no replication)"


class NoReplication:
    """A plain block device for disk-only studies: the seam with nothing behind it."""

    def __init__(self, device: str, *, node: str = "local") -> None:
        if not _PLAIN_DEVICE_RE.match(device) or ".." in device.split("/"):
            raise ConfigError(f"{node}: {device!r} is not a device path under /dev")
        self._device = device
        self._node = node

    @property
    def node(self) -> str:
        return self._node

    @property
    def device(self) -> str:
        return self._device

    def state(self) -> PlainDeviceState:
        return PlainDeviceState(self._device)

    def healthy(self) -> bool:
        return True

    def wait_healthy(self, deadline_s: float) -> PlainDeviceState:
        return self.state()

    def promote(self) -> PlainDeviceState:
        return self.state()

    def demote(self) -> PlainDeviceState:
        return self.state()

    def start_watch(self, run_id: str, *, max_duration_s: float) -> EventWatch:
        return EventWatch(self._node, "-", run_id, "", "", None, max_duration_s)

    def stop_watch(self, watch: EventWatch) -> WatchReport:
        verdict = Verdict(True, f"{self._device}: no replication, nothing to watch")
        return WatchReport(verdict, (), "", True)
