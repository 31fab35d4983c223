"""A node transport that answers from a recording of a live session, for runs without the nodes.

A recording is what nodes answered to the commands the harness sent: per node, each command
(an argv, a script the harness wrote, or an argv whose output was streamed) with its stdout,
stderr, exit code and duration.  :class:`ReplayNode` is a :class:`~harness.remote.Runner` that
serves them, so the code above the seam runs as it did live and must reach the same verdicts.
A command the recording lacks, or asked more often than it was recorded, fails the replay
naming the node and the command: the code has diverged from the session and its verdicts would
be guesses.  A command asked more than once gets its answers in the order they were recorded (a
state polled until it changes).

The file is JSON: ``{"format": 1, "session": {...}, "commands": [{"node", "argv" | "script",
"stream", "exit_code", "stdout" | "stdout_file", "stderr" | "stderr_file", "duration_s",
"at_s", "took_s"}, ...]}``.  A ``*_file`` names a file beside the recording (an output kept
once, as it was captured); a ``duration_s`` of null says the capture did not time the command
(it replays as 0 s); ``at_s`` is when the command started, in seconds after the session began,
and ``took_s`` how long the harness waited for it (null: not known); ``stream`` (default false)
marks an argv whose output was read as it came, and its ``exit_code`` 0 says the command
completed (any other: the connection broke first).  ``session`` holds what the recorded run
chose for itself and its replay reuses (its run id, the lock owner it wrote on the nodes, its
start); a live session writes it all through :mod:`harness.remote.recorder`.

Matching is exact on the command's text except for what no replay can reproduce, each
replaced by a placeholder on both sides: the wall clock where an impairment carries it (its
record's ``"deadline_epoch": <seconds>``, and the second that ends its token,
``<node>-<iface>-<seq>-<seconds>``) and the random suffix of a fio cancel file
(``-<8 hex>.cancel``).  Everything else, a run id, a seed, a size, a path, must be the
recorded one.
"""

from __future__ import annotations

import re
import shlex
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from harness.errors import CommandFailed, CommandTimeout, ConfigError, InfraError
from harness.remote.command import CommandResult, timed_out
from harness.userfiles.jsonsafe import loads
from harness.userfiles.userfile import read_config_text

__all__ = ["FORMAT", "Recorded", "Recording", "ReplayMissing", "ReplayNode", "ReplayPool", "matchable"]

#: the version of the file layout this module reads
FORMAT: Final = 1
#: what a replay cannot reproduce in a command's text (see the module's docstring)
_VOLATILE: Final = (
    (re.compile(r'("deadline_epoch": )[0-9]+(?:\.[0-9]+)?'), r"\1<epoch>"),
    (re.compile(r"(-[0-9]+-)1[5-9][0-9]{8}(?![0-9])"), r"\1<epoch>"),
    (re.compile(r"-[0-9a-f]{8}\.cancel\b"), "-<token>.cancel"),
)
#: how a command was sent: an argv, a script, or an argv whose output was streamed
Kind = str
KINDS: Final = ("argv", "script", "stream")


def matchable(command: str) -> str:
    """``command`` with what a replay cannot reproduce replaced by placeholders."""
    for pattern, placeholder in _VOLATILE:
        command = pattern.sub(placeholder, command)
    return command


class ReplayMissing(InfraError):
    """The replayed code sent a command the recorded session never answered (or not that often)."""


@dataclass(frozen=True)
class Recorded:
    """One answer of one node, as the session got it; ``command`` is the argv as shell words
    (``shlex.join``) or the script's text."""

    node: str
    kind: Kind
    command: str
    exit_code: int
    stdout: str
    stderr: str
    duration_s: float
    #: when it started, seconds after the session began (None: not known)
    at_s: float | None = None
    #: how long the harness waited for it at the transport seam (None: not timed there)
    took_s: float | None = None


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
    code = entry.get("exit_code")
    if not isinstance(code, int) or isinstance(code, bool) or not 0 <= code <= 255:
        raise ConfigError(f"{where}: exit_code must be a whole number 0..255")
    duration = _seconds(entry, "duration_s", where)
    at = _seconds(entry, "at_s", where)
    stream = entry.get("stream", False)
    if not isinstance(stream, bool) or (stream and argv is None):
        raise ConfigError(f"{where}: stream must be true or false, and true only with argv")
    kind = "stream" if stream else "argv" if argv is not None else "script"
    command = shlex.join(argv) if argv is not None else str(script)
    stdout, stderr = _text(entry, "stdout", base, where), _text(entry, "stderr", base, where)
    took = _seconds(entry, "took_s", where)
    return Recorded(node, kind, command, code, stdout, stderr, duration or 0.0, at, took)


def _seconds(entry: Mapping[str, Any], key: str, where: str) -> float | None:
    value = entry.get(key)
    if value is not None and (not isinstance(value, int | float) or isinstance(value, bool) or value < 0):
        raise ConfigError(f"{where}: {key} must be a number of seconds >= 0, or null (not timed)")
    return None if value is None else float(value)


class Recording:
    """The answers of a recorded session, each served once, in the order they were recorded;
    ``session`` is what the recorded run chose for itself (its run id, its lock owner), and
    ``on_answer`` (a replay clock) hears of every answer served."""

    def __init__(self, answers: Sequence[Recorded], session: Mapping[str, Any] | None = None) -> None:
        self.session: Mapping[str, Any] = dict(session or {})
        self.on_answer: Callable[[Recorded], None] | None = None
        self._queues: dict[tuple[str, Kind, str], deque[Recorded]] = {}
        for answer in answers:
            key = (answer.node, answer.kind, matchable(answer.command))
            self._queues.setdefault(key, deque()).append(answer)
        self._counts = {key: len(queue) for key, queue in self._queues.items()}
        self._lock = threading.Lock()  # the harness asks several nodes at once, a thread each
        #: every question the recording could not answer, as its ReplayMissing said it, in order
        #: (kept here too: a thread of the harness, or a broad ``except``, may swallow the error)
        self.missed: list[str] = []

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
        commands, session = data.get("commands"), data.get("session", {})
        if not isinstance(commands, list):
            raise ConfigError(f"{path}: commands must be a list")
        if not isinstance(session, dict):
            raise ConfigError(f"{path}: session must be an object (the run id and lock owner the run used)")
        answers = [_entry(entry, path.parent, f"{path}: commands[{i}]") for i, entry in enumerate(commands)]
        return cls(answers, session)

    def node(self, name: str) -> ReplayNode:
        return ReplayNode(name, self)

    def take(self, node: str, kind: Kind, command: str) -> Recorded:
        """The next answer ``node`` gave to ``command``; :class:`ReplayMissing` if none is left."""
        key = (node, kind, matchable(command))
        with self._lock:
            queue = self._queues.get(key)
            answer = queue.popleft() if queue else None
        if answer is not None:
            if self.on_answer is not None:
                self.on_answer(answer)
            return answer
        label = command if len(command) < 200 else command[:197] + "..."
        if key not in self._counts:
            missing = ReplayMissing(f"{node}: the recording has no answer to `{label}`")
        else:
            times = "once" if self._counts[key] == 1 else f"{self._counts[key]} times"
            missing = ReplayMissing(f"{node}: `{label}` was recorded {times} and is asked once more")
        with self._lock:
            self.missed.append(str(missing))
        raise missing

    def unused(self) -> list[str]:
        """What the session answered and the replay never asked for, as ``node: command``."""
        with self._lock:
            return [f"{answer.node}: {answer.command}" for queue in self._queues.values() for answer in queue]


class ReplayNode:
    """A :class:`~harness.remote.Runner` whose node is a recording: the same results, the same
    failures (a non-zero exit under ``check``, a deadline hit) as the session saw."""

    def __init__(self, name: str, recording: Recording) -> None:
        self.name = name
        self._recording = recording

    def _serve(self, kind: Kind, command: str, timeout: float, check: bool) -> CommandResult:
        answer = self._recording.take(self.name, kind, command)
        label = command if len(command) < 120 else command[:117] + "..."
        result = CommandResult(self.name, label, answer.exit_code, answer.stdout, answer.stderr, answer.duration_s)
        if timed_out(result, timeout):
            raise CommandTimeout(self.name, label, timeout)
        if check and not result.ok:
            raise CommandFailed(result)
        return result

    def run(self, argv: Sequence[str], *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        return self._serve("argv", shlex.join(argv), timeout, check)

    def run_script(self, script: str, *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        return self._serve("script", script, timeout, check)

    def stream(
        self, argv: Sequence[str], *, timeout: float, sudo: bool = True, sink: list[bytes] | None = None
    ) -> tuple[str, bool]:
        """What the streamed command printed (into ``sink`` too), and whether it completed."""
        answer = self._recording.take(self.name, "stream", shlex.join(argv))
        if sink is not None:
            sink.append(answer.stdout.encode())
        return answer.stdout, answer.exit_code == 0


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
