"""Split brain in the kernel log (``dmesg``), the one place DRBD always names it.

DRBD 9.2 prints no ``SplitBrain`` state in ``events2``, ``status --json`` or ``status
--verbose``: after it found split brain on a reconnect, the connection simply reads StandAlone,
as after a ``drbdadm disconnect``.  Its kernel log says it in so many words, on 8.4 and 9::

    [ 509.370000] block drbd0: Split-Brain detected but unresolved, dropping connection!
    [3050.800000] drbd r-ma/0 drbd11 b1: Split-Brain detected but unresolved, dropping connection!

and, when an ``after-sb-*`` policy resolved it, ``Split-Brain detected, N primaries,
automatically solved. Sync from ...``.  8.4 names only the minor; 9 names the resource, the
volume, the minor and the peer's connection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = ["KernelSplitBrain", "split_brains_in_kernel_log"]

_WHO: Final = (
    r"(?:block drbd(?P<minor84>\d+)"
    r"|drbd (?P<resource>[^\s/:]+)/(?P<volume>\d+) drbd(?P<minor>\d+)(?: (?P<peer>[^\s:]+))?)"
)
_SPLIT_BRAIN_RE: Final = re.compile(rf"{_WHO}: Split-Brain detected(?P<how>[^\n]*)")


@dataclass(frozen=True)
class KernelSplitBrain:
    """One split brain the kernel logged: where, with whom, and whether DRBD resolved it."""

    minor: int
    resolved: bool
    line: str
    resource: str | None = None
    volume: int | None = None
    peer: str | None = None

    def describe(self) -> str:
        where = f"{self.resource}/{self.volume} (minor {self.minor})" if self.resource else f"minor {self.minor}"
        peer = f" with {self.peer}" if self.peer else ""
        how = "resolved by an after-sb policy" if self.resolved else "unresolved, connection dropped"
        return f"split brain on {where}{peer}: {how}"


def split_brains_in_kernel_log(text: str, resource: str | None = None) -> tuple[KernelSplitBrain, ...]:
    """Every split brain in a kernel log, in order; with ``resource``, only that resource's
    (8.4 lines name no resource and are kept: the caller knows the minor)."""
    found: list[KernelSplitBrain] = []
    for line in text.splitlines():
        m = _SPLIT_BRAIN_RE.search(line)
        if m is None or (resource is not None and m["resource"] not in {None, resource}):
            continue
        found.append(
            KernelSplitBrain(
                minor=int(m["minor"] or m["minor84"]),
                resolved="automatically solved" in m["how"],
                line=line.strip(),
                resource=m["resource"],
                volume=int(m["volume"]) if m["volume"] else None,
                peer=m["peer"],
            )
        )
    return tuple(found)
