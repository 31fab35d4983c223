"""One shell kept open per node on its own SSH session (:class:`WarmShell`).

A command over a fresh SSH channel costs a channel open, a session fork in sshd and the login
shell's start: about 0.09 s on a UML guest, and a cell makes several round trips.  A warm shell
is started once per connection and fed one command at a time on its stdin; each command is
exactly the text a fresh channel would have run (``sudo -n -- timeout ... argv``, from
:func:`~harness.remote.command.render_command`), so the node-side deadline, sudo and quoting
are unchanged, and nothing a command does changes the shell itself (every command runs in a
child: ``timeout`` or ``sudo``).

The framing (:class:`Framing`) puts a random token after each command on stdout (with its exit
code) and on stderr, each after a newline of its own; what came before the token is the
command's output.  The command's stdin is ``/dev/null``: it can never read the commands that
follow it.
"""

from __future__ import annotations

import secrets
import select
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

import paramiko

__all__ = ["Framing", "WarmShell", "WarmShellBroken", "WarmShellTimeout"]

_MARK: Final = "__harness_warm_"
_CHUNK: Final = 65536
#: longest a read waits before looking at the clock again (interrupts land between waits)
_POLL_S: Final = 0.5


class WarmShellBroken(Exception):
    """The warm shell's session ended or failed before the command's end was seen."""


class WarmShellTimeout(Exception):
    """The command's end was not seen in time; the shell was closed (the node-side deadline
    still stops the command itself)."""


@dataclass(frozen=True)
class Framing:
    """The text that runs one command in the warm shell, and where its output ends."""

    token: str = field(default_factory=lambda: secrets.token_hex(8))

    @property
    def mark(self) -> str:
        return f"{_MARK}{self.token}"

    def wrap(self, command: str) -> bytes:
        # `$?` right after the group is the command's own exit code; both marks follow a
        # newline of their own, so output without a final newline still ends cleanly
        m = self.mark
        return f"{{ {command}\n}} </dev/null; printf '\\n{m}:%s\\n' $?; printf '\\n{m}\\n' >&2\n".encode()

    def stdout_end(self, data: bytes) -> tuple[bytes, int] | None:
        """``(the command's stdout, its exit code)`` once ``data`` holds the end mark."""
        if not data.endswith(b"\n"):
            return None
        at = data.rfind(f"\n{self.mark}:".encode())
        if at < 0:
            return None
        code = data[at + len(self.mark) + 2 : -1]
        if not code.isdigit():
            return None
        return data[:at], int(code)

    def stderr_end(self, data: bytes) -> bytes | None:
        """The command's stderr once ``data`` holds the end mark."""
        tail = f"\n{self.mark}\n".encode()
        return data[: -len(tail)] if data.endswith(tail) else None


class WarmShell:
    """A ``sh`` on one session of an open SSH transport, running one command at a time.

    Not thread-safe: the owner (:class:`~harness.remote.ssh.SshNode`) lets one thread use it
    and sends the others over fresh channels."""

    def __init__(self, transport: paramiko.Transport, *, open_timeout_s: float = 30.0) -> None:
        self._chan = transport.open_session(timeout=open_timeout_s)
        self._chan.exec_command("exec sh")

    @property
    def usable(self) -> bool:
        return not self._chan.closed and not self._chan.exit_status_ready()

    def close(self) -> None:
        self._chan.close()

    def run(self, command: str, *, timeout_s: float, abandon_on_interrupt: bool = False) -> tuple[int, str, str]:
        """Run ``command``; ``(exit code, stdout, stderr)``.  A Ctrl-C/SIGTERM while it runs is
        raised once the command ended (an undo never races the change it undoes), or at once
        when ``abandon_on_interrupt`` (a command that only waits)."""
        framing = Framing()
        try:
            self._chan.sendall(framing.wrap(command))
        except (OSError, EOFError, paramiko.SSHException) as exc:
            self.close()
            raise WarmShellBroken(f"{type(exc).__name__}: {exc}") from None
        deadline = time.monotonic() + timeout_s
        out, err = bytearray(), bytearray()
        interrupted: KeyboardInterrupt | None = None
        try:
            while True:
                try:
                    done = self._read(framing, out, err, deadline, timeout_s)
                except KeyboardInterrupt as exc:
                    if abandon_on_interrupt or interrupted is not None:
                        raise
                    interrupted = exc
                    continue
                if done is not None:
                    break
        except BaseException:
            self.close()
            raise
        if interrupted is not None:
            raise interrupted
        return done

    def _read(
        self, framing: Framing, out: bytearray, err: bytearray, deadline: float, timeout_s: float
    ) -> tuple[int, str, str] | None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise WarmShellTimeout(f"no end of the command within {timeout_s:g} s")
        chan = self._chan
        if not (chan.recv_ready() or chan.recv_stderr_ready()):
            select.select([chan], [], [], min(remaining, _POLL_S))
        got = _drain(chan.recv_ready, chan.recv, out)
        got = _drain(chan.recv_stderr_ready, chan.recv_stderr, err) or got
        end = framing.stdout_end(bytes(out))
        errors = framing.stderr_end(bytes(err)) if end is not None else None
        if end is not None and errors is not None:
            stdout, code = end
            return code, stdout.decode(errors="replace"), errors.decode(errors="replace")
        if not got and (chan.closed or chan.eof_received or chan.exit_status_ready()):
            raise WarmShellBroken("the session ended before the command's end was seen")
        return None


def _drain(ready: Callable[[], bool], recv: Callable[[int], bytes], into: bytearray) -> bool:
    """Append what one of the channel's streams holds now; whether anything came."""
    got = False
    while ready():
        data = recv(_CHUNK)
        if not data:
            break
        into += data
        got = True
    return got
