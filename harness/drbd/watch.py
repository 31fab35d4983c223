"""The event watch: ``drbdsetup events2`` streamed on a node while a measurement runs.

An :class:`EventWatch` is a plan, pure until a caller runs its scripts.  The cell runs them
inside round trips it makes anyway: :meth:`EventWatch.start_script` in the one that starts fio,
:meth:`EventWatch.stop_script` in the one that collects fio's output once it has exited, so the
watch costs no round trip of its own.

* start: ``drbdsetup events2 --timestamps --statistics RES`` runs as a
  :class:`~harness.remote.detached.DetachedJob` (its own session, stdin from /dev/null, output
  to ``/run/harness/<run-id>/events-<name>.log``) under a node-side deadline (``timeout``), so
  it cannot outlive a crashed harness by more than that deadline.  The session id goes to
  ``<log>.pid``, where the leftover sweep (:mod:`harness.safety.leftovers`) finds it.  The
  script returns at once.
* stop: the job's :meth:`~harness.remote.detached.DetachedJob.collect_script`, which signals the
  session only while its leader still is a drbdsetup watcher (a pid from a stale file may have
  been recycled by something else), prints whether the watcher was still alive, then the
  capture.  drbdsetup flushes after every event (it is meant to be read through pipes), so the
  file is current when it is read.
* :meth:`EventWatch.judge` turns that output into the window's verdict
  (:mod:`harness.drbd.validity`); a watcher that had exited before the end of the window did
  not see it, so such a window is inconclusive too.
"""

from __future__ import annotations

import math
import re
import secrets
import shlex
from collections.abc import Collection
from dataclasses import dataclass
from typing import Final

from harness.drbd import commands
from harness.drbd.validity import RunWatch, Verdict
from harness.errors import ConfigError
from harness.remote.detached import DetachedJob
from harness.remote.nodefiles import NODE_ROOT, safe_token
from harness.runfiles.runid import validate_run_id

__all__ = ["MAX_WATCH_S", "EventWatch", "watch_paths"]

MAX_WATCH_S: Final = 24 * 3600
_MARK: Final = "harness-watch alive="
_ROOT_RE: Final = re.compile(r"\A(?:/[A-Za-z0-9_][A-Za-z0-9_.-]*)+\Z")


def watch_paths(run_id: str, name: str, *, root: str = NODE_ROOT) -> tuple[str, str]:
    """(directory, log) of a watch, after validating every part that goes into them.

    The run id follows :mod:`harness.runfiles.runid` (one path component, no option look-alike); the
    name is a safe token and only ever appears after the ``events-`` prefix, so it cannot
    leave the directory."""
    validate_run_id(run_id)
    if not _ROOT_RE.match(root) or any(part in {".", ".."} for part in root.split("/")):
        raise ConfigError(f"watch root {root!r} must be a normalised absolute path of letters, digits and '_.-'")
    directory = f"{root}/{run_id}"
    return directory, f"{directory}/events-{safe_token(name)}.log"


@dataclass(frozen=True)
class EventWatch:
    """The events2 watcher of one resource on one node, for one measurement window."""

    node: str
    resource: str
    directory: str
    log_path: str
    max_duration_s: float
    #: the pair's peer: a DRBD 9 resource's other links are judged as RunWatch says
    peers: frozenset[str] = frozenset()
    #: written by a stop before it looks, so a start still on its way never launches (one per plan)
    cancel_path: str | None = None
    #: peers diskless by configuration (tie-breakers), or None when the configuration is not known
    diskless: frozenset[str] | None = None

    @classmethod
    def plan(
        cls,
        node: str,
        resource: str,
        run_id: str,
        name: str,
        *,
        max_duration_s: float,
        root: str = NODE_ROOT,
        peers: Collection[str] = (),
        diskless: Collection[str] | None = None,
    ) -> EventWatch:
        if not 0 < max_duration_s <= MAX_WATCH_S:
            raise ConfigError(f"watch duration must be within (0, {MAX_WATCH_S}] s, got {max_duration_s!r}")
        directory, log = watch_paths(run_id, name, root=root)
        resource = commands.check_resource_name(resource)
        cancel = f"{log}.{secrets.token_hex(4)}.cancel"
        tie_breakers = None if diskless is None else frozenset(diskless)
        return cls(node, resource, directory, log, max_duration_s, frozenset(peers), cancel, tie_breakers)

    @property
    def pid_path(self) -> str:
        return f"{self.log_path}.pid"

    @property
    def job(self) -> DetachedJob:
        """The watcher on the node: SIGKILL 5 s after its deadline's SIGTERM if still there."""
        return DetachedJob.of_argv(
            commands.events2_watch_argv(self.resource),
            deadline_s=math.ceil(self.max_duration_s),
            kill_after_s=5,
            pid_file=self.pid_path,
            log=self.log_path,
            cancel_file=self.cancel_path,
        )

    def start_script(self) -> str:
        """Shell that starts the watcher detached and returns at once."""
        directory = shlex.quote(self.directory)
        return f"umask 077; {{ [ -d {directory} ] || mkdir -p {directory}; }} && {self.job.start_script()}"

    def stop_script(self) -> str:
        """Shell that stops the watcher if it still runs and prints ``alive=0|1`` and the capture."""
        return self.job.collect_script(_MARK, leader_holds="drbdsetup")

    def judge(self, output: str) -> Verdict:
        """The window's verdict from what :meth:`stop_script` printed."""
        head, _, capture = output.partition("\n")
        alive = head.startswith(_MARK) and head[len(_MARK) :].strip() == "1"
        if not head.startswith(_MARK):
            capture = output  # not our script's output: judged as a capture, which it is not
        if not capture.strip():
            return Verdict(False, "no DRBD events captured during the run")
        run_watch = RunWatch(self.resource, self.peers, self.diskless)
        run_watch.feed_text(capture)
        verdict = run_watch.verdict()
        if not verdict.valid:
            # the verdict's text names every disturbance, not only the first
            return Verdict(False, f"DRBD state changed during the run: {verdict}", verdict.event, verdict.disturbances)
        if not alive:
            return Verdict(
                False,
                f"the DRBD event watcher of {self.resource} on {self.node} had exited before the window ended "
                f"(deadline {self.max_duration_s:g} s too short, or it was killed); the end of the window was "
                "not observed",
            )
        return Verdict(True, "DRBD stayed Connected/UpToDate")
