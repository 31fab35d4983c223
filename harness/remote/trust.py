"""Trust on first use, made explicit: fetch each node's host key, show its fingerprint, and
pin it in the inventory's ``known_hosts`` — never silently, never over a changed key.

The harness itself always connects with paramiko's ``RejectPolicy`` against that file; this
command is the only way a key gets into it, and only after a person (``--yes`` in
automation that has verified fingerprints out of band) accepts it.

``known_hosts`` is read as any file a user names (regular, bounded, UTF-8: a FIFO or a
directory is refused in one line, never waited on); a server that speaks no SSH is one
error line too, paramiko's own traceback of it never reaching the terminal.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import socket
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import paramiko

from harness.errors import InfraError
from harness.remote.netns import connect_in_netns
from harness.remote.spec import SshSpec
from harness.userfiles.userfile import read_config_text

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


def _host_entry(spec: SshSpec) -> str:
    return spec.host if spec.port == 22 else f"[{spec.host}]:{spec.port}"


def read_known_hosts(path: Path) -> paramiko.HostKeys:
    """The keys a ``known_hosts`` file pins (none when it is not there); ConfigError for a file
    that is not a regular, bounded UTF-8 file.  Lines paramiko cannot read are skipped, as its
    own loader skips them."""
    known = paramiko.HostKeys()
    if not path.exists() and not path.is_symlink():
        return known
    text = read_config_text(path, "known_hosts file")
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            entry = paramiko.hostkeys.HostKeyEntry.from_line(line, number)
        except (paramiko.SSHException, ValueError, TypeError):
            continue
        if entry is not None and entry.key is not None:
            for name in entry.hostnames:
                known.add(name, entry.key.get_name(), entry.key)
    return known


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
    entry = _host_entry(spec)
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
    return list((known.lookup(_host_entry(spec)) or {}).values())


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
    with Path(spec.known_hosts).open("a", encoding="utf-8") as f:
        f.write(line)
