"""A node transport that answers from a recording of a live session, for runs without the nodes.

A recording is what nodes answered to the commands the harness sent: per node, each command
(an argv, or a script the harness wrote) with its stdout, stderr, exit code and duration.
:class:`ReplayNode` is a :class:`~harness.remote.Runner` that serves them, so the code above the
seam runs as it did live and must reach the same verdicts.  A command the recording lacks, or
asked more often than it was recorded, fails the replay naming the node and the command: the
code has diverged from the session and its verdicts would be guesses.  A command asked more
than once gets its answers in the order they were recorded (a state polled until it changes).

The file is JSON: ``{"format": 1, "commands": [{"node", "argv" | "script", "exit_code",
"stdout" | "stdout_file", "stderr" | "stderr_file", "duration_s"}, ...]}``; a ``*_file`` names a
file beside the recording (an output kept once, as it was captured), and a ``duration_s`` of
null says the capture did not time the command (it replays as 0 s).  A live session writes one
through :mod:`harness.remote.recorder`.
"""

from __future__ import annotations

import shlex
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from harness.errors import CommandFailed, CommandTimeout, ConfigError, InfraError
from harness.remote.command import CommandResult, timed_out
from harness.userfiles.jsonsafe import loads
from harness.userfiles.userfile import read_config_text

__all__ = ["FORMAT", "Recorded", "Recording", "ReplayMissing", "ReplayNode", "ReplayPool"]

#: the version of the file layout this module reads
FORMAT: Final = 1


class ReplayMissing(InfraError):
    """The replayed code sent a command the recorded session never answered (or not that often)."""


@dataclass(frozen=True)
class Recorded:
    """One answer of one node, as the session got it; ``command`` is the argv as shell words
    (``shlex.join``) or the script's text."""

    node: str
    script: bool
    command: str
    exit_code: int
    stdout: str
    stderr: str
    duration_s: float


def _text(entry: Mapping[str, Any], key: str, base: Path, where: str) -> str:
    inline, named = entry.get(key), entry.get(f"{key}_file")
    if inline is not None and named is not None:
        raise ConfigError(f"{where}: give {key} or {key}_file, not both")
    if named is None:
        if not isinstance(inline, str | None):
            raise ConfigError(f"{where}: {key} must be a string")
        return inline or ""
    if not isinstance(named, str) or not named:
        raise ConfigError(f"{where}: {key}_file must name a file beside the recording")
    return read_config_text(base / named, f"{where} {key}_file")


def _entry(entry: object, base: Path, where: str) -> Recorded:
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: expected an object with node, argv or script, exit_code")
    node, argv, script = entry.get("node"), entry.get("argv"), entry.get("script")
    if not isinstance(node, str) or not node:
        raise ConfigError(f"{where}: node must be a node name")
    if (argv is None) == (script is None):
        raise ConfigError(f"{where}: give argv (a list of words) or script (a string), one of them")
    if argv is not None and not (isinstance(argv, list) and argv and all(isinstance(w, str) for w in argv)):
        raise ConfigError(f"{where}: argv must be a non-empty list of strings")
    if script is not None and not isinstance(script, str):
        raise ConfigError(f"{where}: script must be a string")
    code, duration = entry.get("exit_code"), entry.get("duration_s")
    if not isinstance(code, int) or isinstance(code, bool) or not 0 <= code <= 255:
        raise ConfigError(f"{where}: exit_code must be a whole number 0..255")
    if duration is not None and (not isinstance(duration, int | float) or isinstance(duration, bool) or duration < 0):
        raise ConfigError(f"{where}: duration_s must be a number of seconds >= 0, or null (not timed)")
    command = shlex.join(argv) if argv is not None else str(script)
    stdout, stderr = _text(entry, "stdout", base, where), _text(entry, "stderr", base, where)
    return Recorded(node, script is not None, command, code, stdout, stderr, float(duration or 0.0))


class Recording:
    """The answers of a recorded session, each served once, in the order they were recorded."""

    def __init__(self, answers: Sequence[Recorded]) -> None:
        self._queues: dict[tuple[str, bool, str], deque[Recorded]] = {}
        for answer in answers:
            self._queues.setdefault((answer.node, answer.script, answer.command), deque()).append(answer)
        self._counts = {key: len(queue) for key, queue in self._queues.items()}
        self._lock = threading.Lock()  # the harness asks several nodes at once, a thread each

    @classmethod
    def load(cls, path: Path) -> Recording:
        """The recording in ``path``; a ConfigError naming the file and the entry otherwise."""
        try:
            data = loads(read_config_text(path, "recording"))
        except ValueError as exc:
            raise ConfigError(f"{path}: not a JSON recording: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ConfigError(
                f"{path}: expected a recording of format {FORMAT} ({{'format': {FORMAT}, 'commands': []}})"
            )
        commands = data.get("commands")
        if not isinstance(commands, list):
            raise ConfigError(f"{path}: commands must be a list")
        return cls([_entry(entry, path.parent, f"{path}: commands[{i}]") for i, entry in enumerate(commands)])

    def node(self, name: str) -> ReplayNode:
        return ReplayNode(name, self)

    def take(self, node: str, script: bool, command: str) -> Recorded:
        """The next answer ``node`` gave to ``command``; :class:`ReplayMissing` if none is left."""
        key = (node, script, command)
        with self._lock:
            queue = self._queues.get(key)
            if queue:
                return queue.popleft()
        label = command if len(command) < 200 else command[:197] + "..."
        if key not in self._counts:
            raise ReplayMissing(f"{node}: the recording has no answer to `{label}`")
        times = "once" if self._counts[key] == 1 else f"{self._counts[key]} times"
        raise ReplayMissing(f"{node}: `{label}` was recorded {times} and is asked once more")

    def unused(self) -> list[str]:
        """What the session answered and the replay never asked for, as ``node: command``."""
        with self._lock:
            return [f"{node}: {command}" for (node, _, command), queue in self._queues.items() for _ in queue]


class ReplayNode:
    """A :class:`~harness.remote.Runner` whose node is a recording: the same results, the same
    failures (a non-zero exit under ``check``, a deadline hit) as the session saw."""

    def __init__(self, name: str, recording: Recording) -> None:
        self.name = name
        self._recording = recording

    def _serve(self, script: bool, command: str, timeout: float, check: bool) -> CommandResult:
        answer = self._recording.take(self.name, script, command)
        label = command if len(command) < 120 else command[:117] + "..."
        result = CommandResult(self.name, label, answer.exit_code, answer.stdout, answer.stderr, answer.duration_s)
        if timed_out(result, timeout):
            raise CommandTimeout(self.name, label, timeout)
        if check and not result.ok:
            raise CommandFailed(result)
        return result

    def run(self, argv: Sequence[str], *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        return self._serve(False, shlex.join(argv), timeout, check)

    def run_script(self, script: str, *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        return self._serve(True, script, timeout, check)


class ReplayPool:
    """What :class:`~harness.remote.pool.ConnectionPool` gives the harness, for the nodes of an
    inventory, each a :class:`ReplayNode` of one recording (a reconnect keeps its place in it)."""

    def __init__(self, recording: Recording, names: Sequence[str]) -> None:
        self._nodes = {name: ReplayNode(name, recording) for name in names}

    def get(self, name: str) -> ReplayNode:
        if name not in self._nodes:
            raise ConfigError(f"unknown node {name!r} (inventory has {sorted(self._nodes)})")
        return self._nodes[name]

    def open_all(self, names: list[str]) -> dict[str, ReplayNode]:
        return {name: self.get(name) for name in names}

    def reset(self, name: str) -> None:
        """Nothing to reconnect: the recording goes on where it was."""

    def close_all(self) -> None:
        """Nothing to close."""
