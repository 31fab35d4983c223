"""TCP sockets that live in another network namespace, for reaching the lab's guests.

The embedded lab keeps all its addresses inside a namespace it owns, so nothing is added to
the host's own network (no veth, route or address that could clash with a CI network).  To
talk to a guest, the harness creates the socket *inside* that namespace: a short-lived thread
calls ``setns(CLONE_NEWNET)`` (which only affects the calling thread), creates the socket
and exits.  A socket keeps the namespace it was created in for its whole life, so the rest
of the process (and paramiko) can use it normally.  Needs root (CAP_SYS_ADMIN).
"""

from __future__ import annotations

import ctypes
import os
import socket
import threading
from pathlib import Path

__all__ = ["NETNS_RUN_DIR", "connect_in_netns", "netns_exists"]

NETNS_RUN_DIR = Path("/run/netns")
_CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def netns_exists(name: str) -> bool:
    """True if ``ip netns`` knows a namespace called ``name``."""
    return (NETNS_RUN_DIR / name).exists()


def _socket_in_netns(name: str) -> socket.socket:
    made: list[socket.socket] = []
    failed: list[BaseException] = []

    def work() -> None:
        try:
            fd = os.open(NETNS_RUN_DIR / name, os.O_RDONLY | os.O_CLOEXEC)
            try:
                if _libc.setns(fd, _CLONE_NEWNET) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, f"setns into network namespace {name!r}: {os.strerror(err)}")
            finally:
                os.close(fd)
            made.append(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
        except BaseException as exc:  # handed back to the caller's thread below
            failed.append(exc)

    # The thread ends right after, so its changed namespace never leaks into other work.
    worker = threading.Thread(target=work, name=f"netns-{name}", daemon=True)
    worker.start()
    worker.join()
    if failed:
        raise failed[0]
    return made[0]


def connect_in_netns(name: str, host: str, port: int, timeout: float) -> socket.socket:
    """A TCP socket connected to ``host:port`` from inside namespace ``name``."""
    if not netns_exists(name):
        raise ConnectionRefusedError(f"network namespace {name!r} does not exist (is the lab up?)")
    sock = _socket_in_netns(name)
    try:
        sock.settimeout(timeout)
        sock.connect((host, port))
        sock.settimeout(None)
    except BaseException:
        sock.close()
        raise
    return sock
