"""The identity every trial write carries: a stamp at the head of each 512-byte sector of the
block, so a block read back after a crash names the write it came from, and a block made of
two writes (a crash lands between a write's sectors) shows as such.

A sector is laid out (little-endian)::

    0   4  magic   b"HAw1"
    4   4  crc32   of bytes 8..512 of the sector (zlib's CRC-32)
    8   8  trial   the trial's 64-bit id
    16  8  seq     the write's sequence number in its job (0, 1, 2, ... in issue order)
    24  8  offset  the block's byte offset on the device
    32  4  sector  this sector's index in the block
    36 476 fill    a pattern of (trial, seq, sector), so the checksum covers real bytes

A writer on a node produces exactly :func:`block_bytes`; the stamp is the harness's own, not
fio's verify header, so it also records the sequence number the acknowledgement log names.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import Final

__all__ = ["MAGIC", "SECTOR", "STAMP", "SectorStamp", "block_bytes", "read_sector"]

SECTOR: Final = 512
MAGIC: Final = b"HAw1"
#: trial, seq, offset, sector index
STAMP: Final = struct.Struct("<QQQI")
_HEAD: Final = 8  # magic + crc
_FILL_UNIT: Final = struct.Struct("<QQI")


@dataclass(frozen=True)
class SectorStamp:
    """What one sector read back says: ``valid`` when its magic and checksum hold."""

    valid: bool
    trial: int = 0
    seq: int = 0
    offset: int = 0
    sector: int = 0


def _sector(trial: int, seq: int, offset: int, index: int) -> bytes:
    stamp = STAMP.pack(trial, seq, offset, index)
    unit = _FILL_UNIT.pack(trial, seq, index)
    fill_len = SECTOR - _HEAD - len(stamp)
    fill = (unit * (fill_len // len(unit) + 1))[:fill_len]
    body = stamp + fill
    return MAGIC + struct.pack("<I", zlib.crc32(body)) + body


def block_bytes(trial: int, seq: int, offset: int, bs: int) -> bytes:
    """The ``bs`` bytes write ``seq`` of trial ``trial`` puts at byte ``offset``."""
    if bs <= 0 or bs % SECTOR:
        raise ValueError(f"block size {bs} is not a positive multiple of {SECTOR}")
    return b"".join(_sector(trial, seq, offset, i) for i in range(bs // SECTOR))


def read_sector(data: bytes) -> SectorStamp | None:
    """The stamp of one sector: None when it carries none (no magic: never written by a
    trial), invalid when the magic is there but the checksum fails (a torn or damaged sector)."""
    if len(data) != SECTOR:
        raise ValueError(f"a sector is {SECTOR} bytes, got {len(data)}")
    if data[:4] != MAGIC:
        return None
    (crc,) = struct.unpack_from("<I", data, 4)
    if zlib.crc32(data[_HEAD:]) != crc:
        return SectorStamp(valid=False)
    trial, seq, offset, index = STAMP.unpack_from(data, _HEAD)
    return SectorStamp(True, trial, seq, offset, index)
