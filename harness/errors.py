"""Error types shared across the harness, each with the exit code the CLI uses for it.

Exit codes of the ``harness`` command (the README's table; tests/unit/test_exit_codes.py
checks every row against a real invocation): 1 checked and not good (a verdict, not an
error), 2 bad input or configuration, 3 refused by a safety or preflight check before anything
changed, 5 infrastructure trouble (SSH, a node, the lab), 70 internal error (a bug: an
exception that is none of these), 130 interrupted.

The transport's failures are told apart (teuthology's split): :class:`CommandFailed` (the
command ran and exited non-zero), :class:`CommandTimeout` (its node-side deadline hit),
:class:`ConnectionLost` (no usable SSH: the command's fate is unknown) and
:class:`HostKeyRefused` (an unknown or changed host key; nothing was sent).
"""

from __future__ import annotations

import re
from typing import Final, Protocol

from harness.limits import MAX_ECHO_CHARS, MAX_ERROR_LINE_CHARS
from harness.redact import redact

#: An exception the harness did not expect (``EX_SOFTWARE`` of sysexits.h): never 1, which is
#: a verdict ("regressed"), so a crash cannot pass for a result.
INTERNAL_ERROR_EXIT_CODE: Final = 70


_LONG_VALUE: Final = re.compile(rf"\S{{{MAX_ECHO_CHARS + 1},}}")
_HEAD: Final = MAX_ECHO_CHARS // 2


def _cut_value(match: re.Match[str]) -> str:
    value = match.group(0)
    return f"{value[:_HEAD]}…[{len(value)} characters]"


def _cut_line(line: str) -> str:
    if len(line) <= MAX_ERROR_LINE_CHARS:
        return line
    return f"{line[:MAX_ERROR_LINE_CHARS]}…[{len(line) - MAX_ERROR_LINE_CHARS} more characters]"


def clip(text: str) -> str:
    """``text`` with every value longer than MAX_ECHO_CHARS and every line longer than
    MAX_ERROR_LINE_CHARS cut, saying how long it was."""
    if len(text) <= MAX_ECHO_CHARS:
        return text
    return "\n".join(_cut_line(line) for line in _LONG_VALUE.sub(_cut_value, text).split("\n"))


def invalid(what: str, problems: list[str]) -> str:
    """``invalid WHAT: PROBLEM`` on one line when a schema finds one problem; several are a list,
    one problem (``file:line: key: what is wrong``) a line."""
    if len(problems) == 1:
        return f"invalid {what}: {problems[0]}"
    return f"invalid {what}:\n  " + "\n  ".join(problems)


class HarnessError(Exception):
    """Base class: a failure the harness can explain in one message.

    The message is redacted when the error is made: errors quote what was refused (an
    Ansible variable, a node's stderr), and whoever prints, logs or re-raises the error (the
    CLI, pytest's usage error, a JUnit message) then never sees a secret inside it.  It is
    clipped too (:func:`clip`): a refused value of a megabyte is quoted by its first characters
    and its length.
    """

    exit_code = 5

    def __init__(self, *args: object) -> None:
        super().__init__(*(clip(redact(a)) if isinstance(a, str) else a for a in args))


class ConfigError(HarnessError):
    """Bad input: inventory, command-line option or lab configuration."""

    exit_code = 2


class RefusedError(HarnessError):
    """A safety or preflight check refused to go on; nothing was changed."""

    exit_code = 3


class SplitBrain(RefusedError):
    """Both replicas took writes while apart: no resync direction keeps both.  The harness
    never resolves it (that throws one side's writes away, a human's decision); a run that
    finds one stops its further tests."""


class InfraError(HarnessError):
    """The environment failed: a node, the lab, a missing package."""

    exit_code = 5


# -- the transport's failures (raised by harness.remote; teuthology's three-way split) --------
class CommandOutcome(Protocol):
    """What :class:`CommandFailed` quotes: a finished command (``harness.remote.CommandResult``)."""

    @property
    def node(self) -> str: ...
    @property
    def command(self) -> str: ...
    @property
    def exit_code(self) -> int: ...
    @property
    def stdout(self) -> str: ...
    @property
    def stderr(self) -> str: ...


class CommandFailed(InfraError):
    """The command ran and exited non-zero."""

    def __init__(self, result: CommandOutcome) -> None:
        self.result = result
        tail = (result.stderr.strip() or result.stdout.strip()).splitlines()[-3:]
        detail = redact(" | ".join(tail)) if tail else "no output"
        super().__init__(f"{result.node}: `{result.command}` exited {result.exit_code}: {detail}")


class CommandTimeout(InfraError):
    """The command did not finish before its deadline (it was stopped on the node)."""

    def __init__(self, node: str, command: str, timeout_s: float) -> None:
        self.node, self.command, self.timeout_s = node, command, timeout_s
        super().__init__(f"{node}: `{command}` timed out after {timeout_s:g} s (stopped on the node)")


class ConnectionLost(InfraError):
    """SSH to the node failed or broke; the command's fate on the node is unknown."""

    def __init__(self, node: str, reason: str) -> None:
        self.node = node
        super().__init__(f"{node}: SSH connection lost or refused: {reason}")


class HostKeyRefused(RefusedError):
    """The node's host key is unknown or differs from the pinned one."""
