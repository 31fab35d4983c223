"""Capturing a live session for :mod:`harness.remote.replay`: :class:`RecordingNode` passes every
command to the real node and keeps what it answered, :class:`RecordingPool` hands out such nodes
in place of a :class:`~harness.remote.pool.ConnectionPool`'s, and :class:`Capture` writes them
as a recording.

A command whose node-side deadline hit is kept as ``timeout`` ended it (exit 124 after the whole
deadline), so its replay fails the same way; a command whose connection was lost has no answer
to keep, and its replay fails naming it.  A streamed command is kept with what arrived before it
ended or its connection broke (exit code 0: it completed, 255: it did not).  Each entry also
keeps when it started (``at_s``, seconds after the capture began) and how long the harness
waited for it (``took_s``), which a replay's clock follows.
"""

from __future__ import annotations

import hashlib
import shlex
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.errors import CommandFailed, CommandTimeout
from harness.remote.command import TIMEOUT_EXIT_CODES, CommandResult, Runner
from harness.remote.pool import NodePool
from harness.remote.replay import FORMAT
from harness.userfiles.jsonsafe import dumps
from harness.userfiles.outfile import write_replacing

__all__ = ["INLINE_LIMIT", "Capture", "RecordingNode", "RecordingPool", "keep_outputs_beside"]

#: the exit code a streamed command is kept with when its connection broke before it ended
STREAM_BROKEN = 255
#: an output longer than this (characters) is kept in a file beside the recording
INLINE_LIMIT = 4096


class Capture:
    """The answers of every node of one session, in the order they came (threads included),
    and ``session``: what the run chose for itself that its replay must reuse."""

    def __init__(self) -> None:
        self.session: dict[str, Any] = {}
        self._entries: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._began = time.monotonic()

    def node(self, node: Runner) -> RecordingNode:
        return RecordingNode(node, self)

    def since(self) -> float:
        """Seconds since the capture began (when a command starts)."""
        return round(time.monotonic() - self._began, 3)

    def keep(self, node: str, what: dict[str, Any], result: CommandResult, at_s: float | None = None) -> None:
        """Keep ``result``; ``at_s`` is when the harness sent it (it has been waiting since)."""
        took = None if at_s is None else round(self.since() - at_s, 3)
        entry = {
            "node": node,
            **what,
            "exit_code": result.exit_code,
            "stdout": result.stdout,
            "stderr": result.stderr,
            "duration_s": result.duration_s,
            "at_s": at_s,
            "took_s": took,
        }
        with self._lock:
            self._entries.append(entry)

    def write(self, path: Path, *, inline_limit: int | None = INLINE_LIMIT) -> None:
        """The recording :meth:`harness.remote.replay.Recording.load` reads; outputs longer than
        ``inline_limit`` go to files beside it (:func:`keep_outputs_beside`; None: all inline)."""
        with self._lock:
            entries = [dict(entry) for entry in self._entries]
        if inline_limit is not None:
            keep_outputs_beside(entries, path, inline_limit)
        data = {"format": FORMAT, "session": dict(self.session), "commands": entries}
        write_replacing(path, dumps(data, indent=1) + "\n", option="--record-session")


def keep_outputs_beside(entries: list[dict[str, Any]], path: Path, limit: int) -> None:
    """Move each stdout or stderr longer than ``limit`` out of ``entries`` into a file of
    ``<recording's stem>.outputs/`` named by its content (an output the nodes gave several
    times, such as the same kernel log, is kept once), and name it in ``*_file``."""
    folder = path.with_name(f"{path.stem}.outputs")
    for entry in entries:
        for key in ("stdout", "stderr"):
            text = entry.get(key)
            if not isinstance(text, str) or len(text) <= limit:
                continue
            name = hashlib.sha256(text.encode()).hexdigest()[:16] + ".txt"
            folder.mkdir(exist_ok=True)
            if not (folder / name).exists():
                (folder / name).write_text(text)
            del entry[key]
            entry[f"{key}_file"] = f"{folder.name}/{name}"


class RecordingNode:
    """A :class:`~harness.remote.pool.Node` that sends every command to ``node`` and keeps its
    answer in ``capture``; what it returns and raises is the node's."""

    def __init__(self, node: Runner, capture: Capture) -> None:
        self.name = node.name
        self._node = node
        self._capture = capture

    def _keep(
        self, what: dict[str, Any], label: str, timeout: float, run: Callable[[], CommandResult]
    ) -> CommandResult:
        at = self._capture.since()
        try:
            result = run()
        except CommandFailed as exc:  # kept, and raised as the node raised it
            if isinstance(exc.result, CommandResult):
                self._capture.keep(self.name, what, exc.result, at)
            raise
        except CommandTimeout:
            timed_out = CommandResult(self.name, label, TIMEOUT_EXIT_CODES[0], "", "", timeout)
            self._capture.keep(self.name, what, timed_out, at)
            raise
        self._capture.keep(self.name, what, result, at)
        return result

    def run(self, argv: Sequence[str], *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        words = list(argv)
        return self._keep(
            {"argv": words},
            shlex.join(words),
            timeout,
            lambda: self._node.run(words, timeout=timeout, check=check, sudo=sudo),
        )

    def run_script(self, script: str, *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        return self._keep(
            {"script": script},
            script[:120],
            timeout,
            lambda: self._node.run_script(script, timeout=timeout, check=check, sudo=sudo),
        )

    def stream(
        self, argv: Sequence[str], *, timeout: float, sudo: bool = True, sink: list[bytes] | None = None
    ) -> tuple[str, bool]:
        stream = getattr(self._node, "stream", None)  # every node of a pool streams; a bare Runner not
        if stream is None:
            raise TypeError(f"{self.name}: {type(self._node).__name__} cannot stream a command")
        words, at, start = list(argv), self._capture.since(), time.monotonic()
        text, completed = stream(words, timeout=timeout, sudo=sudo, sink=sink)
        result = CommandResult(
            self.name, shlex.join(words), 0 if completed else STREAM_BROKEN, text, "", time.monotonic() - start
        )
        self._capture.keep(self.name, {"argv": words, "stream": True}, result, at)
        return text, completed


class RecordingPool:
    """A :class:`~harness.remote.pool.NodePool` whose nodes are ``pool``'s, each recorded into
    ``capture``; a reset node is wrapped again when next asked for."""

    def __init__(self, pool: NodePool, capture: Capture) -> None:
        self._pool = pool
        self._capture = capture

    def get(self, name: str) -> RecordingNode:
        return RecordingNode(self._pool.get(name), self._capture)

    def open_all(self, names: list[str]) -> Mapping[str, RecordingNode]:
        return {name: RecordingNode(node, self._capture) for name, node in self._pool.open_all(names).items()}

    def reset(self, name: str) -> None:
        self._pool.reset(name)

    def close_all(self) -> None:
        self._pool.close_all()
