"""SSH transport to one node: a thin, strict wrapper over fabric 3 (:class:`SshNode`).

Rules it enforces on every call (fabric's defaults would trust unknown host keys and leave
timed-out commands running):

* commands are argv lists rendered with :func:`~harness.remote.command.render_command`; shell
  syntax only through :meth:`SshNode.run_script`, where the caller writes the script on purpose;
* ``in_stream=False`` (pytest's captured stdin otherwise breaks invoke);
* the deadline is enforced *on the node* by coreutils ``timeout`` (fabric's own timeout only
  closes the channel and leaves the remote process running); fabric's timeout is a backstop;
* host keys are checked against the inventory's ``known_hosts`` with paramiko's
  ``RejectPolicy`` (fabric would otherwise auto-add unknown keys); no ssh_config, no agent;
* privileged commands go through ``sudo -n`` so a password prompt fails at once;
* failures are told apart (:mod:`harness.errors`): :class:`CommandFailed` (ran, non-zero
  exit), :class:`CommandTimeout` (deadline hit) and :class:`ConnectionLost` (no usable SSH).
"""

from __future__ import annotations

import logging
import os
import shlex
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import paramiko
from fabric import Config, Connection
from fabric.runners import Remote
from invoke.exceptions import CommandTimedOut, ThreadException

from harness.errors import (
    CommandFailed,
    CommandTimeout,
    ConfigError,
    ConnectionLost,
    HostKeyRefused,
    RefusedError,
)
from harness.remote.command import WAIT_ONLY_MARK, CommandResult, render_command, timed_out
from harness.remote.knownhosts import host_entry, read_known_hosts
from harness.remote.netns import connect_in_netns
from harness.remote.spec import SshSpec
from harness.remote.warmshell import WarmShell, WarmShellBroken, WarmShellTimeout

__all__ = ["SshNode"]

log = logging.getLogger("harness.remote")

# Extra seconds fabric waits beyond the node-side deadline before declaring the link dead.
_BACKSTOP = 20.0


#: connects tried in all before a node counts as unreachable, and the pause after the n-th
CONNECT_ATTEMPTS = 3
CONNECT_BACKOFF_S = 0.5


class _TransientConnect(Exception):
    """A connect that failed in a way another try may not (refused, timed out, cut off)."""


class _AbandoningRemote(Remote):  # type: ignore[misc]  # fabric ships no type hints
    """fabric's runner, except that Ctrl-C/SIGTERM during a command that only waits
    (:data:`~harness.remote.command.WAIT_ONLY_MARK`) closes its channel at once: invoke would
    otherwise join its reader threads until the remote wait ends (up to a whole wait chunk)."""

    _wait_only = False

    def start(self, command: str, shell: str, env: dict[str, str], timeout: int | None = None) -> None:
        self._wait_only = WAIT_ONLY_MARK in command
        super().start(command, shell, env, timeout=timeout)

    def send_interrupt(self, interrupt: KeyboardInterrupt) -> None:
        if self._wait_only:
            self.channel.close()
        super().send_interrupt(interrupt)


class SshNode:
    """One SSH connection to one node.  Not shared across processes; one per xdist worker."""

    def __init__(self, name: str, spec: SshSpec, *, env: dict[str, str] | None = None) -> None:
        self.name = name
        self.spec = spec
        self._env = os.environ if env is None else env
        self._lock = threading.Lock()
        self._conn: Connection | None = None
        # one thread at a time uses the warm shell; the others take a fresh channel
        self._warm_lock = threading.Lock()
        self._warm: WarmShell | None = None

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
                "runners": {"remote": _AbandoningRemote},
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
        # the harness's reader, not paramiko's: bounded, linear, a damaged line one refusal
        entry = host_entry(self.spec.host, self.spec.port)
        for pinned in (read_known_hosts(self.spec.known_hosts).lookup(entry) or {}).values():
            conn.client.get_host_keys().add(entry, pinned.get_name(), pinned)
        return conn

    def open(self) -> None:
        """Connect now (eagerly), so failures show up before any workload starts.

        A refused or cut-off connect (a node's sshd restarting) is tried :data:`CONNECT_ATTEMPTS`
        times in all; a silent one is not, having cost the whole ``connect_timeout`` already; a
        refused host key or failed authentication is final at once (retrying cannot change them)."""
        with self._lock:
            if self._conn is not None and self._conn.is_connected:
                return
            for attempt in range(1, CONNECT_ATTEMPTS + 1):
                started = time.monotonic()
                try:
                    conn = self._connect_once()
                    break
                except _TransientConnect as exc:
                    # a silent host already cost the whole connect timeout: not tried again
                    silent = time.monotonic() - started >= self.spec.connect_timeout * 0.9
                    if attempt == CONNECT_ATTEMPTS or silent:
                        raise ConnectionLost(self.name, f"{exc} ({attempt} attempt{'s' * (attempt > 1)})") from None
                    time.sleep(CONNECT_BACKOFF_S * attempt)
            transport = conn.transport
            if transport is not None:
                transport.set_keepalive(15)
            self._conn = conn

    def _connect_once(self) -> Connection:
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
            raise _TransientConnect(f"{type(exc).__name__}: {exc}") from None
        except (OSError, EOFError) as exc:
            raise _TransientConnect(f"cannot connect to {self.spec.host}:{self.spec.port}: {exc}") from None
        return conn

    def close(self) -> None:
        with self._lock:
            warm, self._warm = self._warm, None
            if warm is not None:
                warm.close()
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
        if self._warm_lock.acquire(blocking=False):
            try:
                exited, stdout, stderr = self._on_warm_shell(conn, command, label, timeout)
            finally:
                self._warm_lock.release()
        else:
            exited, stdout, stderr = self._on_new_channel(conn, command, label, timeout)
        duration = time.monotonic() - start
        result = CommandResult(self.name, label, exited, stdout, stderr, duration)
        log.debug("%s: %s -> %s in %.2fs", self.name, label, result.exit_code, duration)
        if timed_out(result, timeout):
            raise CommandTimeout(self.name, label, timeout)
        if exited == 255 and not stdout and not self.connected:
            raise ConnectionLost(self.name, f"during `{label}`")
        if check and result.exit_code != 0:
            if self._use_sudo(True) and "a password is required" in result.stderr:
                raise RefusedError(f"{self.name}: sudo needs a password; the harness only uses `sudo -n`")
            raise CommandFailed(result)
        return result

    def _on_new_channel(self, conn: Connection, command: str, label: str, timeout: float) -> tuple[int, str, str]:
        try:
            res = conn.run(command, timeout=timeout + _BACKSTOP)
        except CommandTimedOut:
            raise self._no_answer(label, timeout) from None
        except (TimeoutError, ThreadException, paramiko.SSHException, EOFError, OSError) as exc:
            raise self._dropped(label, exc) from None
        return int(res.exited), str(res.stdout), str(res.stderr)

    def _on_warm_shell(self, conn: Connection, command: str, label: str, timeout: float) -> tuple[int, str, str]:
        """The command on the node's warm shell (:mod:`harness.remote.warmshell`), started on
        first use; a connection without a paramiko transport takes a fresh channel."""
        transport = getattr(conn, "transport", None)
        if not isinstance(transport, paramiko.Transport):
            return self._on_new_channel(conn, command, label, timeout)
        try:
            if self._warm is None or not self._warm.usable:
                self._warm = WarmShell(transport)
            return self._warm.run(
                command, timeout_s=timeout + _BACKSTOP, abandon_on_interrupt=WAIT_ONLY_MARK in command
            )
        except WarmShellTimeout:
            raise self._no_answer(label, timeout) from None
        except (WarmShellBroken, paramiko.SSHException, EOFError, OSError) as exc:
            raise self._dropped(label, exc) from None

    def _no_answer(self, label: str, timeout: float) -> ConnectionLost:
        """The connection, closed: nothing came back within the node-side deadline and the backstop."""
        self.close()
        return ConnectionLost(
            self.name, f"`{label}` got no answer {timeout + _BACKSTOP:g} s after its node-side deadline"
        )

    def _dropped(self, label: str, exc: BaseException) -> ConnectionLost:
        """The connection, closed: it failed while ``label`` ran."""
        self.close()
        return ConnectionLost(self.name, f"during `{label}`: {type(exc).__name__}: {exc}")

    def stream(
        self, argv: Sequence[str], *, timeout: float, sudo: bool = True, sink: list[bytes] | None = None
    ) -> tuple[str, bool]:
        """Run ``argv`` and return everything it printed, reading as it comes (into ``sink`` as
        well when given, so another thread can follow the output while it arrives).

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
        chunks: list[bytes] = [] if sink is None else sink
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

    def channel(self, argv: Sequence[str], *, timeout: float, sudo: bool = True) -> paramiko.Channel:
        """A session running ``argv``, for a caller that writes its stdin while reading its
        output (:mod:`harness.remote.duplex`); the caller closes it."""
        self.open()
        transport = self._conn.transport if self._conn is not None else None
        if transport is None:
            raise ConnectionLost(self.name, "no transport")
        chan: paramiko.Channel = transport.open_session(timeout=30)
        chan.settimeout(timeout + _BACKSTOP)
        chan.exec_command(render_command(argv, timeout=timeout, sudo=self._use_sudo(sudo)))
        return chan

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
