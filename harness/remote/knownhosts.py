"""A ``known_hosts`` file as untrusted input: the host keys it pins, read in time linear in the
file, every line paramiko cannot represent refused in one line naming it.

The file is read as any file a user names (regular, bounded, UTF-8: a FIFO or a directory is
refused, never waited on).  Each line is at most :data:`~harness.limits.MAX_KNOWN_HOSTS_LINE`
characters before paramiko decodes its key (it converts a key's numbers in time quadratic in
their length: a 1 MB key line took 40 s).  A line whose key paramiko knows no type for is
skipped, as OpenSSH and paramiko's own loader skip it; a key that is no base64 or does not
parse is refused (paramiko's loader would stop the session on it with an internal error).
``@cert-authority`` lines pin no host key the harness checks (paramiko verifies no host
certificates) and are skipped; ``@revoked`` is refused: the harness does not check
revocations, and a revoked key pinned on another line must not pass for a good one.

Keys are kept by host name in a dict, hashed names (``|1|salt|hash``) in a list matched by
hashing the name asked for: paramiko's ``HostKeys`` searches every entry on every line added,
and a 1.4 MB file took 6 s.  A hashed name whose salt or hash is no base64 is refused (paramiko
stopped on it at the first lookup).
"""

from __future__ import annotations

import base64
import binascii
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import paramiko
from paramiko.hostkeys import HostKeyEntry, InvalidHostKey

from harness.errors import ConfigError
from harness.limits import MAX_KNOWN_HOSTS_LINE
from harness.redact import redact_head
from harness.userfiles.userfile import read_config_text

__all__ = ["KnownHosts", "host_entry", "read_known_hosts"]

_HASHED: Final = "|1|"
_SKIPPED_MARKERS: Final = frozenset({"@cert-authority"})


def host_entry(host: str, port: int) -> str:
    """How known_hosts (and paramiko) name the server at ``host``:``port``."""
    return host if port == 22 else f"[{host}]:{port}"


@dataclass
class KnownHosts:
    """The host keys a ``known_hosts`` file pins, by host entry (``host`` or ``[host]:port``)."""

    plain: dict[str, dict[str, paramiko.PKey]] = field(default_factory=dict)
    hashed: list[tuple[str, dict[str, paramiko.PKey]]] = field(default_factory=list)

    def add(self, name: str, key: paramiko.PKey) -> None:
        if name.startswith(_HASHED):
            self.hashed.append((name, {key.get_name(): key}))
        else:
            self.plain.setdefault(name, {})[key.get_name()] = key

    def lookup(self, entry: str) -> Mapping[str, paramiko.PKey] | None:
        """The keys pinned for ``entry``, by key type; ``None`` when none is."""
        found = dict(self.plain.get(entry, {}))
        for name, keys in self.hashed:
            if paramiko.HostKeys.hash_host(entry, name.split("|")[2]) == name:
                found.update(keys)
        return found or None


def _hashed(name: str) -> bool:
    """Whether ``name`` is a hashed host name paramiko can match (``|1|salt|hash``, base64)."""
    parts = name.split("|")
    try:
        return len(parts) == 4 and all(base64.b64decode(part, validate=True) for part in parts[2:])
    except binascii.Error:
        return False


def _entry(line: str, where: str) -> HostKeyEntry | None:
    try:
        return HostKeyEntry.from_line(line)
    except paramiko.SSHException:  # a key paramiko cannot load: its own loader skips the line
        return None
    except InvalidHostKey:
        raise ConfigError(f"{where}: not a known_hosts line: its key is not base64") from None
    except (ValueError, TypeError, ArithmeticError, LookupError, struct.error) as exc:
        kind = line.split()[1] if len(line.split()) > 1 else "?"
        raise ConfigError(f"{where}: not a known_hosts line: its {kind} key does not parse ({exc})") from None


def read_known_hosts(path: Path) -> KnownHosts:
    """The keys ``path`` pins (none when it is not there); ConfigError naming the file and line
    for a file or line the harness refuses (the module's docstring)."""
    known = KnownHosts()
    if not path.exists() and not path.is_symlink():
        return known
    text = read_config_text(path, "known_hosts file")
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path}:{number}"
        if len(line) > MAX_KNOWN_HOSTS_LINE:
            raise ConfigError(
                f"{where}: a line of {len(line)} characters; a known_hosts line has at most {MAX_KNOWN_HOSTS_LINE}"
            )
        marker = line.split()[0]
        if marker in _SKIPPED_MARKERS:
            continue
        if marker.startswith("@"):
            raise ConfigError(
                f"{where}: {redact_head(marker, 40)!r}: the harness checks no revocations or other markers; "
                "keep the nodes' keys in a known_hosts file without them"
            )
        entry = _entry(line, where)
        if entry is not None and entry.key is not None:
            for name in entry.hostnames:
                if name.startswith(_HASHED) and not _hashed(name):
                    raise ConfigError(
                        f"{where}: a hashed host name is |1|salt|hash, both base64; not {redact_head(name, 60)!r}"
                    )
                known.add(name, entry.key)
    return known
