"""What the rest of the harness sees of a node: a :class:`Runner`, the :class:`CommandResult` it
returns, and the exact shell text an argv becomes (:func:`render_command`).

Every argv element is quoted with :func:`shlex.join`, so no value from an inventory can break
out of its token; the deadline is coreutils ``timeout`` on the node itself (fabric's own
timeout only closes the channel and leaves the remote process running).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol

__all__ = ["TIMEOUT_EXIT_CODES", "WAIT_ONLY_MARK", "CommandResult", "Runner", "render_command", "timed_out"]

#: coreutils ``timeout`` exits 124 when the deadline hits and 137 when it had to SIGKILL.
TIMEOUT_EXIT_CODES: Final = (124, 137)
#: A script holding this no-op only waits (for a detached job to end): changes nothing and
#: may be abandoned half-way.  On Ctrl-C/SIGTERM the SSH transport closes the channel of such
#: a command at once instead of waiting for it to end (the interrupt path must fit in the 7 s
#: a CI runner gives after SIGTERM); every other command is waited for, so an undo never
#: races the change it undoes.
WAIT_ONLY_MARK: Final = ": harness-wait-only;"


@dataclass(frozen=True)
class CommandResult:
    """What a remote command did."""

    node: str
    command: str
    exit_code: int
    stdout: str
    stderr: str
    duration_s: float

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


class Runner(Protocol):
    """What the rest of the harness needs from a node connection (a seam for tests)."""

    name: str

    def run(self, argv: Sequence[str], *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult: ...

    def run_script(self, script: str, *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult: ...


def timed_out(result: CommandResult, timeout: float) -> bool:
    """Whether the node-side deadline of ``timeout`` seconds ended the command: ``timeout``'s
    exit code, after (nearly) that long; the command's own 124 ends sooner."""
    return result.exit_code in TIMEOUT_EXIT_CODES and result.duration_s >= timeout * 0.95


def render_command(argv: Sequence[str], *, timeout: float, sudo: bool, kill_after: float = 5.0) -> str:
    """The exact shell text sent to the node for ``argv``.

    Every element is quoted, so no value from an inventory can break out of its token.

    >>> render_command(["tc", "qdisc", "show", "dev", "eth1"], timeout=10, sudo=True)
    'sudo -n -- timeout --kill-after=5 10 tc qdisc show dev eth1'
    """
    if not argv:
        raise ValueError("empty command")
    if timeout <= 0:
        raise ValueError(f"timeout must be positive, got {timeout}")
    prefix = ["sudo", "-n", "--"] if sudo else []
    deadline = ["timeout", f"--kill-after={kill_after:g}", f"{timeout:g}"]
    return shlex.join([*prefix, *deadline, *argv])
