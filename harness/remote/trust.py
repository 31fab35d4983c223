"""Trust on first use, made explicit: fetch each node's host key, show its fingerprint, and
pin it in the inventory's ``known_hosts`` — never silently, never over a changed key.

The harness itself always connects with paramiko's ``RejectPolicy`` against that file; this
command is the only way a key gets into it, and only after a person (``--yes`` in
automation that has verified fingerprints out of band) accepts it.

``known_hosts`` is read as untrusted input (:mod:`harness.remote.knownhosts`: a FIFO, a
directory, a damaged or endless line is refused in one line, never waited on); a server that
speaks no SSH is one error line too, paramiko's own traceback of it never reaching the
terminal.  A key is pinned on a line of its own, even after a last line without its newline.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import socket
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import paramiko

from harness.errors import InfraError
from harness.remote.knownhosts import host_entry, read_known_hosts
from harness.remote.netns import connect_in_netns
from harness.remote.spec import SshSpec

__all__ = [
    "HostKeyStatus",
    "fetch_host_key",
    "fingerprint",
    "pin_host_key",
    "pinned_keys",
    "read_known_hosts",
    "shared_host_keys",
    "trust_status",
]


@dataclass(frozen=True)
class HostKeyStatus:
    node: str
    host_entry: str
    key: paramiko.PKey
    state: str  # "pinned" | "new" | "CHANGED"

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.key)


def fingerprint(key: paramiko.PKey) -> str:
    """OpenSSH-style ``SHA256:...`` fingerprint."""
    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def fetch_host_key(spec: SshSpec) -> paramiko.PKey:
    """The key the node's sshd presents (no authentication is attempted)."""
    # paramiko's transport thread logs a broken handshake with its traceback; the error below says it
    logger = logging.getLogger("paramiko")
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
    try:
        if spec.netns:
            sock = connect_in_netns(spec.netns, spec.host, spec.port, spec.connect_timeout)
        else:
            sock = socket.create_connection((spec.host, spec.port), timeout=spec.connect_timeout)
        transport = paramiko.Transport(sock)
        try:
            transport.start_client(timeout=spec.connect_timeout)
            return transport.get_remote_server_key()
        except (EOFError, ValueError, LookupError, struct.error, MemoryError) as exc:
            # paramiko re-raises whatever its reader thread met: a server that closed after its
            # banner (EOFError), sent a packet that does not parse, or announced one of gigabytes
            # (paramiko asks for the whole buffer at once: MemoryError, nothing read yet)
            detail = str(exc) or ("a packet too large to read" if isinstance(exc, MemoryError) else "no more data")
            raise paramiko.SSHException(f"{type(exc).__name__}: {detail}") from None
        finally:
            transport.close()
    except (OSError, paramiko.SSHException) as exc:
        raise InfraError(f"{spec.host}:{spec.port}: cannot fetch the host key: {exc}") from None


def trust_status(node: str, spec: SshSpec, fetch: Callable[[SshSpec], paramiko.PKey] = fetch_host_key) -> HostKeyStatus:
    known = read_known_hosts(spec.known_hosts)  # before connecting: a bad file needs no node
    key = fetch(spec)
    entry = host_entry(spec.host, spec.port)
    pinned: dict[str, paramiko.PKey] = dict(known.lookup(entry) or {})
    if key.get_name() in pinned:
        state = "pinned" if pinned[key.get_name()] == key else "CHANGED"
    elif pinned:
        state = "CHANGED"  # a key of another type is pinned: treat as a change, never add beside it
    else:
        state = "new"
    return HostKeyStatus(node, entry, key, state)


def pinned_keys(spec: SshSpec) -> list[paramiko.PKey]:
    """The host keys the node's ``known_hosts`` pins for its address (none when absent)."""
    known = read_known_hosts(spec.known_hosts)
    return list((known.lookup(host_entry(spec.host, spec.port)) or {}).values())


def shared_host_keys(specs: Mapping[str, SshSpec]) -> list[tuple[str, list[str]]]:
    """Pinned host keys that more than one node presents: (fingerprint, the nodes), each a
    machine the inventory names twice (two addresses or DNS names of one host)."""
    owners: dict[str, set[str]] = {}
    for node, spec in specs.items():
        for key in pinned_keys(spec):
            owners.setdefault(fingerprint(key), set()).add(node)
    return sorted((fp, sorted(nodes)) for fp, nodes in owners.items() if len(nodes) > 1)


def pin_host_key(spec: SshSpec, status: HostKeyStatus) -> None:
    if status.state != "new":
        raise InfraError(f"{status.node}: refusing to pin a key in state {status.state}")
    spec.known_hosts.parent.mkdir(parents=True, exist_ok=True)
    line = f"{status.host_entry} {status.key.get_name()} {status.key.get_base64()}\n"
    with Path(spec.known_hosts).open("a+b") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - 1))
        lead = b"\n" if size and f.read(1) != b"\n" else b""  # a last line without its newline
        f.write(lead + line.encode())
