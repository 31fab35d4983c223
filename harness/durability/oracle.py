"""The oracle of acknowledged writes: which write each block should hold after recovery, and
what it holds.

A job of a trial writes ``count`` blocks of ``bs`` bytes, in sequence-number order, each at an
offset :meth:`WriterSpec.offset` derives from the job's seed and the sequence number alone (a
node-side writer computes the same without any state), each stamped (:mod:`.stamp`).  The
writer logs, in order, the sequence numbers it saw complete: that log is the acknowledged set.

After recovery every block a job aimed at is read back and classified:

``acked-present``
    the newest acknowledged write to the block is there, whole;
``acked-lost``
    an acknowledged write is missing: the block holds an older write, or none of this trial;
``unacked-present``
    the block holds a write never acknowledged (issued when the crash came), whole: allowed;
``unacked-absent``
    no write to the block was acknowledged and none of them is there: allowed;
``torn``
    the block is not one whole write of its own: sectors of several writes, a damaged sector,
    or a write that belongs at another offset.

A torn block also counts as a lost acknowledged write when part of it is older than the newest
acknowledged write to it (:attr:`BlockVerdict.loses_acked`).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import BinaryIO, Final, Literal

from harness.durability.stamp import SECTOR, SectorStamp, read_sector

__all__ = [
    "CLASSES",
    "AckLogError",
    "BlockClass",
    "BlockVerdict",
    "OracleReport",
    "WriterSpec",
    "classify",
    "classify_all",
]

BlockClass = Literal["acked-present", "acked-lost", "unacked-present", "unacked-absent", "torn"]
CLASSES: Final[tuple[BlockClass, ...]] = ("acked-present", "acked-lost", "unacked-present", "unacked-absent", "torn")


class AckLogError(ValueError):
    """An acknowledgement log that cannot be of this job (a number it never wrote, twice)."""


@dataclass(frozen=True)
class WriterSpec:
    """One job's writes: what a node-side writer needs, and what the reader recomputes."""

    trial: int  # the trial's 64-bit id, stamped in every sector
    job: int
    seed: int
    bs: int
    #: the job's region: blocks ``first_block .. first_block + blocks - 1`` of the device
    first_block: int
    blocks: int
    count: int  # writes the job issues, sequence numbers 0 .. count - 1

    def __post_init__(self) -> None:
        if self.bs <= 0 or self.bs % SECTOR:
            raise ValueError(f"writer spec: bs {self.bs} is not a positive multiple of {SECTOR}")
        if self.blocks <= 0 or self.count < 0 or self.first_block < 0:
            raise ValueError(f"writer spec: blocks {self.blocks}, count {self.count}, first_block {self.first_block}")
        if not 0 <= self.trial < 2**64:
            raise ValueError(f"writer spec: trial id {self.trial} does not fit 64 bits")

    def offset(self, seq: int) -> int:
        """The byte offset of write ``seq``: a block of the region drawn from (seed, job, seq)."""
        digest = hashlib.blake2b(f"{self.seed}/{self.job}/{seq}".encode(), digest_size=8).digest()
        return (self.first_block + int.from_bytes(digest, "big") % self.blocks) * self.bs

    def targets(self) -> dict[int, list[int]]:
        """Per offset aimed at, the sequence numbers written there, in order."""
        out: dict[int, list[int]] = {}
        for seq in range(self.count):
            out.setdefault(self.offset(seq), []).append(seq)
        return out


@dataclass(frozen=True)
class BlockVerdict:
    offset: int
    klass: BlockClass
    #: the newest acknowledged write aimed here (None: none acknowledged)
    expected: int | None
    #: the sequence numbers of this trial and block found in its sectors (sorted)
    found: tuple[int, ...]
    loses_acked: bool


@dataclass(frozen=True)
class OracleReport:
    """A job's (or a trial's) blocks, classified."""

    acked_writes: int
    counts: Counter[str] = field(default_factory=Counter)
    #: the blocks that lost an acknowledged write or are torn, for the notes
    bad: tuple[BlockVerdict, ...] = ()

    @property
    def lost_acked(self) -> int:
        """Blocks whose newest acknowledged write is not there whole (torn ones included)."""
        return sum(1 for v in self.bad if v.loses_acked)

    def merged(self, other: OracleReport) -> OracleReport:
        return OracleReport(self.acked_writes + other.acked_writes, self.counts + other.counts, self.bad + other.bad)


def _acked(spec: WriterSpec, log: Sequence[int]) -> set[int]:
    seen: set[int] = set()
    for seq in log:
        if not 0 <= seq < spec.count:
            raise AckLogError(f"job {spec.job}: acknowledged write {seq} was never issued (0..{spec.count - 1})")
        if seq in seen:
            raise AckLogError(f"job {spec.job}: write {seq} acknowledged twice")
        seen.add(seq)
    return seen


def _sectors(data: bytes) -> list[SectorStamp | None]:
    return [read_sector(data[i : i + SECTOR]) for i in range(0, len(data), SECTOR)]


def _whole(stamps: list[SectorStamp | None], spec: WriterSpec, offset: int) -> int | None:
    """The write the block holds whole (every sector valid, one seq, this trial and offset)."""
    seqs = set()
    for index, stamp in enumerate(stamps):
        if stamp is None or not stamp.valid or stamp.trial != spec.trial or stamp.sector != index:
            return None
        if stamp.offset != offset:
            return None
        seqs.add(stamp.seq)
    return seqs.pop() if len(seqs) == 1 else None


def _ours(stamps: list[SectorStamp | None], spec: WriterSpec) -> bool:
    """Any sector written by this trial (or damaged: a damaged sector may have been ours)."""
    return any(s is not None and (not s.valid or s.trial == spec.trial) for s in stamps)


def _verdict(offset: int, seqs: list[int], acked: set[int], data: bytes, spec: WriterSpec) -> BlockVerdict:
    expected = max((s for s in seqs if s in acked), default=None)
    stamps = _sectors(data)
    found = tuple(sorted({s.seq for s in stamps if s is not None and s.valid and s.trial == spec.trial}))
    whole = _whole(stamps, spec, offset)
    if whole is not None and whole in seqs:
        if expected is not None and whole < expected:
            return BlockVerdict(offset, "acked-lost", expected, found, True)
        klass: BlockClass = "acked-present" if whole == expected else "unacked-present"
        return BlockVerdict(offset, klass, expected, found, False)
    if whole is None and not _ours(stamps, spec):
        if expected is None:
            return BlockVerdict(offset, "unacked-absent", None, found, False)
        return BlockVerdict(offset, "acked-lost", expected, found, True)
    # every sector must hold the acknowledged write or a newer one for nothing acked to be lost
    intact = all(
        s is not None and s.valid and s.trial == spec.trial and s.offset == offset and s.seq in seqs for s in stamps
    )
    loses = expected is not None and not (intact and min(found) >= expected)
    return BlockVerdict(offset, "torn", expected, found, loses)


def classify(spec: WriterSpec, ack_log: Sequence[int], device: BinaryIO) -> OracleReport:
    """Classify every block ``spec`` aimed at, reading them from ``device`` (a file or block
    device opened for binary reading, positioned anywhere) one block at a time."""
    acked = _acked(spec, ack_log)
    counts: Counter[str] = Counter()
    bad: list[BlockVerdict] = []
    for offset, seqs in sorted(spec.targets().items()):
        device.seek(offset)
        data = device.read(spec.bs)
        if len(data) != spec.bs:
            raise ValueError(f"job {spec.job}: the device ends before block offset {offset} + {spec.bs}")
        verdict = _verdict(offset, seqs, acked, data, spec)
        counts[verdict.klass] += 1
        if verdict.klass in ("acked-lost", "torn"):
            bad.append(verdict)
    return OracleReport(len(acked), counts, tuple(bad))


def classify_all(jobs: Iterable[tuple[WriterSpec, Sequence[int]]], device: BinaryIO) -> OracleReport:
    """A trial's jobs classified on one device, their reports merged."""
    report = OracleReport(0)
    for spec, log in jobs:
        report = report.merged(classify(spec, log, device))
    return report
