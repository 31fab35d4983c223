"""A dm-log-writes log read back, and a disk rebuilt from it at any entry: a power cut replayed
write by write.

The format is the one the Linux kernel's dm-log-writes target writes (its ``struct
log_write_super`` and ``struct log_write_entry``, all fields little-endian):

* the super at sector 0: ``magic`` (u64, 0x6a736677736872), ``version`` (u64, 1),
  ``nr_entries`` (u64, the entries logged when the super was last written: at every FUA and
  mark, and when the target is removed) and ``sectorsize`` (u32, the data device's logical
  block size, usually 512);
* from byte ``sectorsize`` on, each entry takes one ``sectorsize`` block holding ``sector``,
  ``nr_sectors``, ``flags`` and ``data_len`` (four u64; sectors in ``sectorsize`` units), with a
  mark's text (``data_len`` bytes) right after them; unless it is a discard, the
  ``nr_sectors × sectorsize`` bytes the write carried follow it;
* flags: FLUSH 1, FUA 2, DISCARD 4, MARK 8, METADATA 16.

The target logs a write once it is known to be on stable storage (after the flush that covers
it, or at once for FUA), so the log's order is the order writes became durable: rebuilding the
disk at entry *k* gives what a power cut just then could leave.  Everything here streams: a log
of any size is read one entry header at a time and its data copied in bounded chunks.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final

__all__ = [
    "DISCARD",
    "FLUSH",
    "FUA",
    "MAGIC",
    "MARK",
    "METADATA",
    "LogEntry",
    "LogFormatError",
    "LogSuper",
    "Replayer",
    "entries",
    "flush_points",
    "read_super",
    "used_bytes",
]

MAGIC: Final = 0x6A736677736872
VERSION: Final = 1
FLUSH: Final = 1 << 0
FUA: Final = 1 << 1
DISCARD: Final = 1 << 2
MARK: Final = 1 << 3
METADATA: Final = 1 << 4
_SUPER: Final = struct.Struct("<QQQI")
_ENTRY: Final = struct.Struct("<QQQQ")
_CHUNK: Final = 1 << 20


class LogFormatError(ValueError):
    """Not a dm-log-writes log, or one cut short."""


@dataclass(frozen=True)
class LogSuper:
    nr_entries: int
    sectorsize: int


@dataclass(frozen=True)
class LogEntry:
    """One logged write, flush, discard or mark: ``offset`` and ``length`` on the disk in bytes
    (the entry's ``sector`` and ``nr_sectors`` times the sector size); ``data_at``: where its
    data starts in the log."""

    index: int
    offset: int
    length: int
    flags: int
    mark: str
    data_at: int

    @property
    def durable_point(self) -> bool:
        """A flush or FUA: what the disk held once it completed is what a caller was promised."""
        return bool(self.flags & (FLUSH | FUA))


def read_super(log: BinaryIO, where: str = "log") -> LogSuper:
    log.seek(0)
    raw = log.read(_SUPER.size)
    if len(raw) < _SUPER.size:
        raise LogFormatError(f"{where}: {len(raw)} bytes, too short for a dm-log-writes super")
    magic, version, nr_entries, sectorsize = _SUPER.unpack(raw)
    if magic != MAGIC:
        raise LogFormatError(f"{where}: magic {magic:#x} is not dm-log-writes' {MAGIC:#x}")
    if version != VERSION:
        raise LogFormatError(f"{where}: version {version}, this reader knows {VERSION}")
    if sectorsize < 512 or sectorsize & (sectorsize - 1):
        raise LogFormatError(f"{where}: sector size {sectorsize} is not a power of two from 512")
    return LogSuper(nr_entries, sectorsize)


def entries(log: BinaryIO, where: str = "log") -> Iterator[LogEntry]:
    """The log's entries in order, as many as its super counts; data is not read."""
    head = read_super(log, where)
    position = head.sectorsize
    for index in range(head.nr_entries):
        log.seek(position)
        block = log.read(head.sectorsize)
        if len(block) < head.sectorsize:
            raise LogFormatError(f"{where}: entry {index} at byte {position} is cut short")
        sector, nr_sectors, flags, data_len = _ENTRY.unpack_from(block)
        mark = ""
        if flags & MARK:
            if data_len > head.sectorsize - _ENTRY.size:
                raise LogFormatError(f"{where}: entry {index}: a mark of {data_len} bytes overruns its sector")
            mark = block[_ENTRY.size : _ENTRY.size + data_len].decode(errors="replace")
        position += head.sectorsize
        entry = LogEntry(index, sector * head.sectorsize, nr_sectors * head.sectorsize, flags, mark, position)
        if not flags & DISCARD:
            position += entry.length
        yield entry


def flush_points(path: Path) -> list[int]:
    """The entry counts at which the log reaches a flush or FUA: replaying that many entries
    rebuilds the disk as the flush (or FUA write) left it."""
    with path.open("rb") as log:
        return [e.index + 1 for e in entries(log, str(path)) if e.durable_point]


def used_bytes(path: Path) -> int:
    """How many bytes of the log its entries take (the super included): the part of a log
    device worth keeping."""
    with path.open("rb") as log:
        head = read_super(log, str(path))
        end = head.sectorsize
        for e in entries(log, str(path)):
            end = e.data_at + (0 if e.flags & DISCARD else e.length)
    return end


def _copy(log: BinaryIO, image: BinaryIO, entry: LogEntry, where: str) -> None:
    log.seek(entry.data_at)
    image.seek(entry.offset)
    left = entry.length
    while left:
        chunk = log.read(min(left, _CHUNK))
        if not chunk:
            raise LogFormatError(f"{where}: entry {entry.index}'s data is cut short")
        image.write(chunk)
        left -= len(chunk)


def _zero(image: BinaryIO, entry: LogEntry) -> None:
    image.seek(entry.offset)
    left = entry.length
    while left:
        step = min(left, _CHUNK)
        image.write(bytes(step))
        left -= step


class Replayer:
    """Applies a log's entries to a disk image, in order, from where it last stopped: a run of
    replay points costs one pass over the log (copy the image at each point to keep it).  A
    discard is replayed as zeroes (what a zeroing or thinly provisioned disk reads after one)."""

    def __init__(self, log: Path, image: BinaryIO) -> None:
        self.where = str(log)
        self._log = log.open("rb")
        self._entries = entries(self._log, self.where)
        self._image = image
        self.applied = 0
        self.last: LogEntry | None = None

    def close(self) -> None:
        self._log.close()

    def __enter__(self) -> Replayer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def advance_to(self, count: int) -> int:
        """Apply entries until ``count`` are applied (or the log ends); the count applied."""
        if count < self.applied:
            raise ValueError(f"{self.where}: {self.applied} entries applied already, cannot go back to {count}")
        while self.applied < count:
            entry = next(self._entries, None)
            if entry is None:
                break
            if entry.flags & DISCARD:
                _zero(self._image, entry)
            elif entry.length:
                _copy(self._log, self._image, entry, self.where)
            self.applied += 1
            self.last = entry
        self._image.flush()
        return self.applied
