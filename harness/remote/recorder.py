"""Capturing a live session for :mod:`harness.remote.replay`: :class:`RecordingNode` passes every
command to the real node and keeps what it answered, :class:`Capture` writes them as a recording.

A command whose node-side deadline hit is kept as ``timeout`` ended it (exit 124 after the whole
deadline), so its replay fails the same way; a command whose connection was lost has no answer
to keep, and its replay fails naming it.
"""

from __future__ import annotations

import shlex
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness.errors import CommandFailed, CommandTimeout
from harness.remote.command import TIMEOUT_EXIT_CODES, CommandResult, Runner
from harness.remote.replay import FORMAT
from harness.userfiles.jsonsafe import dumps

__all__ = ["Capture", "RecordingNode"]


class Capture:
    """The answers of every node of one session, in the order they came (threads included)."""

    def __init__(self) -> None:
        self._entries: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def node(self, node: Runner) -> RecordingNode:
        return RecordingNode(node, self)

    def keep(self, node: str, what: dict[str, Any], result: CommandResult) -> None:
        entry = {
            "node": node,
            **what,
            "exit_code": result.exit_code,
            "stdout": result.stdout,
            "stderr": result.stderr,
            "duration_s": result.duration_s,
        }
        with self._lock:
            self._entries.append(entry)

    def write(self, path: Path) -> None:
        """The recording :meth:`harness.remote.replay.Recording.load` reads."""
        with self._lock:
            text = dumps({"format": FORMAT, "commands": list(self._entries)}, indent=1)
        path.write_text(text + "\n")


class RecordingNode:
    """A :class:`~harness.remote.Runner` that sends every command to ``node`` and keeps its
    answer in ``capture``; what it returns and raises is the node's."""

    def __init__(self, node: Runner, capture: Capture) -> None:
        self.name = node.name
        self._node = node
        self._capture = capture

    def _keep(
        self, what: dict[str, Any], label: str, timeout: float, run: Callable[[], CommandResult]
    ) -> CommandResult:
        try:
            result = run()
        except CommandFailed as exc:  # kept, and raised as the node raised it
            if isinstance(exc.result, CommandResult):
                self._capture.keep(self.name, what, exc.result)
            raise
        except CommandTimeout:
            self._capture.keep(self.name, what, CommandResult(self.name, label, TIMEOUT_EXIT_CODES[0], "", "", timeout))
            raise
        self._capture.keep(self.name, what, result)
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
