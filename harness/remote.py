"""SSH transport to cluster nodes: a thin, strict wrapper over fabric 3.

Rules it enforces on every call (see ../shared/reference/ecosystem.md §1):

* commands are argv lists rendered with :func:`shlex.join`; shell syntax only through
  :meth:`SshNode.run_script`, where the caller writes the script on purpose;
* ``in_stream=False`` (pytest's captured stdin otherwise breaks invoke);
* the deadline is enforced *on the node* by coreutils ``timeout`` (fabric's own timeout only
  closes the channel and leaves the remote process running); fabric's timeout is a backstop;
* host keys are checked against the inventory's ``known_hosts`` with paramiko's
  ``RejectPolicy`` (fabric would otherwise auto-add unknown keys); no ssh_config, no agent;
* privileged commands go through ``sudo -n`` so a password prompt fails at once;
* failures are told apart: :class:`CommandFailed` (ran, non-zero exit),
  :class:`CommandTimeout` (deadline hit) and :class:`ConnectionLost` (no usable SSH).
"""

from __future__ import annotations

import logging
import os
import shlex
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import paramiko
from fabric import Config, Connection
from invoke.exceptions import CommandTimedOut, ThreadException

from harness.errors import ConfigError, InfraError, RefusedError
from harness.inventory.models import SshSpec
from harness.netns import connect_in_netns
from harness.redact import redact

__all__ = [
    "CommandFailed",
    "CommandResult",
    "CommandTimeout",
    "ConnectionLost",
    "HostKeyRefused",
    "Runner",
    "Shell",
    "SshNode",
    "render_command",
    "run_batch",
]

log = logging.getLogger("harness.remote")

# coreutils timeout exits 124 when the deadline hits and 137 when it had to SIGKILL.
_TIMEOUT_CODES = (124, 137)
# Extra seconds fabric waits beyond the node-side deadline before declaring the link dead.
_BACKSTOP = 20.0


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


class CommandFailed(InfraError):
    """The command ran and exited non-zero."""

    def __init__(self, result: CommandResult) -> None:
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


class Runner(Protocol):
    """What the rest of the harness needs from a node connection (a seam for tests)."""

    name: str

    def run(self, argv: Sequence[str], *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult: ...

    def run_script(self, script: str, *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult: ...


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


class SshNode:
    """One SSH connection to one node.  Not shared across processes; one per xdist worker."""

    def __init__(self, name: str, spec: SshSpec, *, env: dict[str, str] | None = None) -> None:
        self.name = name
        self.spec = spec
        self._env = os.environ if env is None else env
        self._lock = threading.Lock()
        self._conn: Connection | None = None

    # -- connection -------------------------------------------------------------------------
    def _key_path(self) -> Path | None:
        if self.spec.key is not None:
            return self.spec.key
        if self.spec.key_env is not None:
            value = self._env.get(self.spec.key_env)
            if not value:
                raise ConfigError(f"{self.name}: environment variable {self.spec.key_env} (ssh key path) is not set")
            return Path(value)
        return None

    def _new_connection(self) -> Connection:
        key = self._key_path()
        if key is not None and not key.is_file():
            raise ConfigError(f"{self.name}: ssh key file {key} does not exist")
        if not self.spec.known_hosts.is_file():
            raise HostKeyRefused(
                f"{self.name}: known_hosts file {self.spec.known_hosts} does not exist; "
                "pin the host keys first (harness trust --inventory FILE writes it after you check the fingerprints)"
            )
        config = Config(
            system_ssh_path=None,
            user_ssh_path=None,
            overrides={
                "load_ssh_configs": False,
                "run": {"in_stream": False, "hide": True, "warn": True, "pty": False},
            },
        )
        connect_kwargs: dict[str, object] = {
            "allow_agent": False,
            "look_for_keys": False,
            "banner_timeout": self.spec.connect_timeout,
            "auth_timeout": self.spec.connect_timeout,
        }
        if key is not None:
            connect_kwargs["key_filename"] = [str(key)]
        conn = Connection(
            self.spec.host,
            user=self.spec.user,
            port=self.spec.port,
            config=config,
            connect_timeout=None if self.spec.netns else self.spec.connect_timeout,
            connect_kwargs=connect_kwargs,
        )
        # fabric installs AutoAddPolicy; replace it before anything connects.
        conn.client.set_missing_host_key_policy(paramiko.RejectPolicy())
        conn.client.load_host_keys(str(self.spec.known_hosts))
        return conn

    def open(self) -> None:
        """Connect now (eagerly), so failures show up before any workload starts."""
        with self._lock:
            if self._conn is not None and self._conn.is_connected:
                return
            conn = self._new_connection()
            try:
                if self.spec.netns:
                    conn.connect_kwargs["sock"] = connect_in_netns(
                        self.spec.netns, self.spec.host, self.spec.port, self.spec.connect_timeout
                    )
                conn.open()
            except paramiko.BadHostKeyException as exc:
                raise HostKeyRefused(
                    f"{self.name}: host key of {self.spec.host} CHANGED (got {exc.key.get_fingerprint().hex()}); "
                    f"refusing to connect. If the node was rebuilt, check and re-pin it in {self.spec.known_hosts}"
                ) from None
            except paramiko.SSHException as exc:
                if "not found in known_hosts" in str(exc):
                    raise HostKeyRefused(
                        f"{self.name}: host key of {self.spec.host} is not in {self.spec.known_hosts}; refusing to "
                        "connect (pin it with `harness trust` after checking the fingerprint)"
                    ) from None
                if isinstance(exc, paramiko.AuthenticationException):
                    raise ConnectionLost(
                        self.name, f"authentication failed for {self.spec.user}@{self.spec.host}"
                    ) from None
                raise ConnectionLost(self.name, f"{type(exc).__name__}: {exc}") from None
            except (OSError, EOFError) as exc:
                raise ConnectionLost(self.name, f"cannot connect to {self.spec.host}:{self.spec.port}: {exc}") from None
            transport = conn.transport
            if transport is not None:
                transport.set_keepalive(15)
            self._conn = conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                try:
                    self._conn.close()
                finally:
                    self._conn = None

    def __enter__(self) -> SshNode:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def connected(self) -> bool:
        return self._conn is not None and bool(self._conn.is_connected)

    # -- commands ---------------------------------------------------------------------------
    def _use_sudo(self, sudo: bool) -> bool:
        return sudo and self.spec.sudo and self.spec.user != "root"

    def run(self, argv: Sequence[str], *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        """Run ``argv`` on the node under a node-side deadline of ``timeout`` seconds."""
        command = render_command(argv, timeout=timeout, sudo=self._use_sudo(sudo))
        return self._execute(command, shlex.join(argv), timeout, check)

    def run_script(self, script: str, *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        """Run a shell script written by the harness (never built from unquoted input)."""
        argv = ["sh", "-c", script]
        command = render_command(argv, timeout=timeout, sudo=self._use_sudo(sudo))
        label = script if len(script) < 120 else script[:117] + "..."
        return self._execute(command, label, timeout, check)

    def _execute(self, command: str, label: str, timeout: float, check: bool) -> CommandResult:
        self.open()
        conn = self._conn
        assert conn is not None
        start = time.monotonic()
        try:
            res = conn.run(command, timeout=timeout + _BACKSTOP)
        except CommandTimedOut:
            self.close()
            raise ConnectionLost(
                self.name, f"`{label}` got no answer {timeout + _BACKSTOP:g} s after its node-side deadline"
            ) from None
        except (TimeoutError, ThreadException, paramiko.SSHException, EOFError, OSError) as exc:
            self.close()
            raise ConnectionLost(self.name, f"during `{label}`: {type(exc).__name__}: {exc}") from None
        duration = time.monotonic() - start
        result = CommandResult(self.name, label, int(res.exited), res.stdout, res.stderr, duration)
        log.debug("%s: %s -> %s in %.2fs", self.name, label, result.exit_code, duration)
        if res.exited in _TIMEOUT_CODES and duration >= timeout * 0.95:
            raise CommandTimeout(self.name, label, timeout)
        if res.exited == 255 and not res.stdout and not self.connected:
            raise ConnectionLost(self.name, f"during `{label}`")
        if check and result.exit_code != 0:
            if self._use_sudo(True) and "a password is required" in result.stderr:
                raise RefusedError(f"{self.name}: sudo needs a password; the harness only uses `sudo -n`")
            raise CommandFailed(result)
        return result

    def stream(self, argv: Sequence[str], *, timeout: float, sudo: bool = True) -> tuple[str, bool]:
        """Run ``argv`` and return everything it printed, reading as it comes.

        For commands on a node that may die mid-way (the failover scenario kills the primary
        while fio reports to us): returns ``(output, completed)``; ``completed`` is False when
        the connection broke before the command finished.  Output received until then is
        kept — it is the evidence of which writes were acknowledged.
        """
        self.open()
        conn = self._conn
        assert conn is not None
        transport = conn.transport
        if transport is None:
            raise ConnectionLost(self.name, "no transport")
        command = render_command(argv, timeout=timeout, sudo=self._use_sudo(sudo))
        chunks: list[bytes] = []
        completed = False
        try:
            chan = transport.open_session(timeout=30)
            chan.settimeout(timeout + _BACKSTOP)
            chan.exec_command(command)
            while True:
                data = chan.recv(65536)
                if not data:
                    break
                chunks.append(data)
            completed = chan.recv_exit_status() == 0
            chan.close()
        except (paramiko.SSHException, OSError, EOFError):
            self.close()
        return b"".join(chunks).decode(errors="replace"), completed

    # -- files ------------------------------------------------------------------------------
    def put_text(self, path: str, text: str, *, mode: int = 0o644, timeout: float = 30.0) -> None:
        """Write ``text`` to ``path`` on the node (atomically, through a temp file)."""
        tmp = f"{path}.tmp.{os.getpid()}"
        qtmp, qpath = shlex.quote(tmp), shlex.quote(path)
        script = f"umask 077; cat > {qtmp} && chmod {mode:o} {qtmp} && mv -f {qtmp} {qpath}"
        self._stdin_script(script, text, timeout)

    def _stdin_script(self, script: str, stdin_text: str, timeout: float) -> None:
        self.open()
        conn = self._conn
        assert conn is not None
        transport = conn.transport
        if transport is None:
            raise ConnectionLost(self.name, "no transport")
        command = render_command(["sh", "-c", script], timeout=timeout, sudo=self._use_sudo(True))
        try:
            chan = transport.open_session(timeout=timeout)
            chan.settimeout(timeout + _BACKSTOP)
            chan.exec_command(command)
            chan.sendall(stdin_text.encode())
            chan.shutdown_write()
            err = chan.makefile_stderr("rb").read().decode(errors="replace")
            code = chan.recv_exit_status()
            chan.close()
        except (paramiko.SSHException, OSError, EOFError) as exc:
            self.close()
            raise ConnectionLost(self.name, f"while writing a file: {exc}") from None
        if code != 0:
            raise CommandFailed(CommandResult(self.name, script, code, "", err, 0.0))

    def get_text(self, path: str, *, timeout: float = 30.0) -> str:
        """Contents of ``path`` on the node."""
        return self.run(["cat", "--", path], timeout=timeout).stdout


_BATCH_MARK = "@@harness-batch@@"


class Shell(str):
    """A shell snippet written by the harness itself (never from input), run verbatim in a
    batch — for probes that shell builtins answer without a fork (teuthology's ``Raw``)."""

    __slots__ = ()


def run_batch(
    node: Runner, commands: Mapping[str, Sequence[str] | Shell], *, timeout: float
) -> dict[str, CommandResult]:
    """Run several independent commands in one SSH round trip (each on a slow node costs
    ~0.2 s of fork/exec and channel setup), returning one result per command.

    Each command's stdout, stderr and exit code are kept apart; one failing does not stop
    the others.  Names must be simple words.
    """
    # stderr of each command goes to its own file, printed back with shell builtins only
    # (`read`/`printf`): on a UML guest every extra fork+exec costs ~22 ms.
    # The files are named after the remote shell's pid ($$); one `rm` removes them all.
    parts = ["d=/tmp/.harness-batch.$$"]
    for i, (name, argv) in enumerate(commands.items()):
        if not name.isidentifier():
            raise ValueError(f"batch command name must be an identifier, got {name!r}")
        command = f"{{ {argv}\n}}" if isinstance(argv, Shell) else shlex.join(argv)
        parts.append(
            f'echo {_BATCH_MARK}begin:{name}; {command} 2>"$d.{i}"; rc=$?; '
            f"printf '\\n%s\\n' {_BATCH_MARK}stderr:{name}; "
            f'while IFS= read -r l; do printf \'%s\\n\' "$l"; done < "$d.{i}"; '
            f"echo {_BATCH_MARK}rc:{name}:$rc"
        )
    parts.append('rm -f "$d".*')
    res = node.run_script("\n".join(parts), timeout=timeout, check=False)
    out: dict[str, CommandResult] = {}
    text = res.stdout
    for name, argv in commands.items():
        begin = f"{_BATCH_MARK}begin:{name}\n"
        mid = f"\n{_BATCH_MARK}stderr:{name}\n"
        end_mark = f"{_BATCH_MARK}rc:{name}:"
        b = text.find(begin)
        m = text.find(mid, b + len(begin)) if b >= 0 else -1
        e = text.find(end_mark, m + len(mid)) if m >= 0 else -1
        if e < 0:
            continue
        code_text = text[e + len(end_mark) :].split("\n", 1)[0]
        out[name] = CommandResult(
            node.name,
            str(argv) if isinstance(argv, Shell) else shlex.join(argv),
            int(code_text) if code_text.lstrip("-").isdigit() else -1,
            text[b + len(begin) : m],
            text[m + len(mid) : e].rstrip("\n"),
            res.duration_s,
        )
    missing = [n for n in commands if n not in out]
    if missing:
        raise ConnectionLost(node.name, f"batch output incomplete (missing {missing}); exit {res.exit_code}")
    return out
