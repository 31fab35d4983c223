"""A node-side watcher of an md-nbd replica for one measurement window.

md has no event stream like DRBD's ``events2``: the watcher samples the state probe every
200 ms on the node, writes a sample only when it changed, and stops at its own deadline.  It
runs as a :class:`~harness.remote.detached.DetachedJob` and is stopped by the job's
:meth:`~harness.remote.detached.DetachedJob.collect_script`, as DRBD's watcher is.  The window is
valid when every sample was healthy and the watcher was still running at the end.
"""

from __future__ import annotations

import math
import secrets
import shlex
from dataclasses import dataclass
from typing import Final

from harness.errors import ConfigError
from harness.mdnbd.state import MdNbdOutputError, parse_state
from harness.remote.detached import DetachedJob
from harness.remote.nodefiles import node_run_dir, safe_token

__all__ = ["MdNbdWatch", "WatchVerdict"]

_MARK: Final = "mdnbd-watch-alive="
_SAMPLE: Final = "--sample--"
MAX_WATCH_S: Final = 6 * 3600


@dataclass(frozen=True)
class WatchVerdict:
    valid: bool
    reason: str


@dataclass(frozen=True)
class MdNbdWatch:
    node: str
    array: str
    state_script: str
    log_path: str
    max_duration_s: float
    #: written by a stop before it looks, so a start still on its way never launches (one per plan)
    cancel_path: str | None = None

    @classmethod
    def plan(
        cls, node: str, array: str, state_script: str, run_id: str, name: str, *, max_duration_s: float
    ) -> MdNbdWatch:
        if not 0 < max_duration_s <= MAX_WATCH_S:
            raise ConfigError(f"watch duration must be within (0, {MAX_WATCH_S}] s, got {max_duration_s!r}")
        log = f"{node_run_dir(run_id)}/mdnbd-watch-{safe_token(name)}.log"
        return cls(node, array, state_script, log, max_duration_s, f"{log}.{secrets.token_hex(4)}.cancel")

    @property
    def pid_path(self) -> str:
        return f"{self.log_path}.pid"

    @property
    def job(self) -> DetachedJob:
        """The sampling loop on the node; it bounds itself (it ends at its own deadline)."""
        q = shlex.quote
        loop = (
            f"end=$(( $(date +%s) + {math.ceil(self.max_duration_s)} )); last=; "
            f'while [ "$(date +%s)" -le "$end" ]; do s=$( {{ {self.state_script}; }} 2>&1 ); '
            f'if [ "$s" != "$last" ]; then printf "%s\\n%s\\n" {q(_SAMPLE)} "$s"; last=$s; fi; sleep 0.2; done'
        )
        return DetachedJob.of_script(
            loop, deadline_s=None, pid_file=self.pid_path, log=self.log_path, cancel_file=self.cancel_path
        )

    def start_script(self) -> str:
        directory = self.log_path.rsplit("/", 1)[0]
        return f"umask 077; mkdir -p {shlex.quote(directory)} && {self.job.start_script()}"

    def stop_script(self) -> str:
        return self.job.collect_script(_MARK)

    def judge(self, output: str) -> WatchVerdict:
        head, _, capture = output.partition("\n")
        alive = head.strip() == f"{_MARK}1"
        samples = [s for s in capture.split(_SAMPLE) if s.strip()]
        if not samples:
            return WatchVerdict(False, f"no md-nbd state sampled on {self.node} during the run")
        for sample in samples:
            try:
                status = parse_state(sample)
            except MdNbdOutputError as exc:
                return WatchVerdict(False, f"md-nbd state unreadable during the run: {exc}")
            if not status.healthy:
                return WatchVerdict(False, f"md-nbd state changed during the run: {status.describe()}")
        if not alive:
            return WatchVerdict(
                False,
                f"the md-nbd watcher of {self.array} on {self.node} had exited before the window ended; "
                "the end of the window was not observed",
            )
        kind = "array" if parse_state(samples[0]).assembled else "export"
        return WatchVerdict(True, f"md-nbd {kind} stayed healthy")
