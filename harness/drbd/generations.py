"""DRBD's data generation UUIDs (``drbdadm get-gi``) and the split-brain rule they decide.

Each node keeps a *current* UUID, the *bitmap* UUID (the current UUID it had when it lost its
peer: the base its out-of-sync bitmap counts from) and two *history* UUIDs.  The lowest bit
is a flag (DRBD masks it in every comparison).  On reconnect, DRBD compares them:
equal currents are in sync; one side's current equal to the other's bitmap makes a resync;
**both bitmaps equal and not zero** means both nodes moved on from the same base while apart
(rule 90: "Split-Brain detected").  A real get-gi line::

    774FD772FA03CC11:C446E4D35A37505B:349A9389F1722A62:34999389F1722A62:1:1:1:0:0:0:0

(tests/data/drbd/84-get-gi-primary-split-brain.txt, recorded on the lab after both nodes
wrote during a partition).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from harness.drbd.errors import DrbdOutputError

__all__ = ["DataGenerations", "diverged", "parse_gi"]

_GI_RE: Final = re.compile(r"\A\s*((?:[0-9A-Fa-f]{16}:){3}[0-9A-Fa-f]{16})(?::[01])*\s*\Z")
_FLAG: Final = ~1


@dataclass(frozen=True)
class DataGenerations:
    current: int
    bitmap: int
    history: tuple[int, int]

    def describe(self) -> str:
        return f"current {self.current:016X}, bitmap {self.bitmap:016X}"


def parse_gi(text: str) -> DataGenerations:
    line = text.strip().splitlines()[-1] if text.strip() else ""
    match = _GI_RE.match(line)
    if match is None:
        raise DrbdOutputError(f"not a get-gi line: {line[:80]!r}")
    current, bitmap, h1, h2 = (int(u, 16) for u in match.group(1).split(":"))
    return DataGenerations(current, bitmap, (h1, h2))


def diverged(a: DataGenerations, b: DataGenerations) -> bool:
    """Both sides wrote since they parted from the same base (DRBD's rule 90): no resync
    direction exists without throwing one side's writes away."""
    if a.current & _FLAG == b.current & _FLAG:
        return False
    return a.bitmap & _FLAG != 0 and a.bitmap & _FLAG == b.bitmap & _FLAG
