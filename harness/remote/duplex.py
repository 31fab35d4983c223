"""A command on a node whose stdin the controller writes while its output streams back: the
durability writer takes its stamped blocks this way and prints each acknowledgement as it
completes, so the acknowledgement log lives here, not on a node that may crash."""

from __future__ import annotations

import threading
import time

import paramiko

__all__ = ["Duplex"]


class Duplex:
    """The two directions of one SSH session (:meth:`harness.remote.ssh.SshNode.channel`):
    :meth:`send` writes stdin, a thread gathers stdout (:meth:`output`, as far as it came)."""

    def __init__(self, chan: paramiko.Channel) -> None:
        self._chan = chan
        self._lock = threading.Lock()
        self._out = bytearray()
        self.broken = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        try:
            while True:
                data = self._chan.recv(65536)
                if not data:
                    return
                with self._lock:
                    self._out += data
        except (paramiko.SSHException, OSError, EOFError):
            self.broken = True

    def send(self, data: bytes) -> bool:
        """Write ``data`` to the command's stdin; False once the session is gone."""
        try:
            self._chan.sendall(data)
        except (paramiko.SSHException, OSError, EOFError):
            self.broken = True
            return False
        return True

    def output(self) -> bytes:
        with self._lock:
            return bytes(self._out)

    def close_input(self) -> None:
        try:
            self._chan.shutdown_write()
        except (paramiko.SSHException, OSError, EOFError):
            self.broken = True

    def finish(self, timeout: float) -> int | None:
        """Wait up to ``timeout`` s for the command to end; its exit status (None: it did not)."""
        deadline = time.monotonic() + timeout
        self._reader.join(timeout)
        while not self._chan.exit_status_ready() and time.monotonic() < deadline:
            time.sleep(0.05)
        status = self._chan.recv_exit_status() if self._chan.exit_status_ready() else None
        self._chan.close()
        return status
