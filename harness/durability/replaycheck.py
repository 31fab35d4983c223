"""Power cuts replayed from a dm-log-writes log: at every flush or FUA point, and at seeded
random points between them, the disk is rebuilt as a power cut just then would leave it, and
the oracle checks that every write made durable before the point is there.

A write is *durable at point k* (the first ``k`` log entries applied) when each of its sectors
was logged before a flush entry among those ``k`` (the target logs every write completed
before a flush ahead of the flush itself), or by a FUA write among them.  The writes of the
job's :class:`~harness.durability.oracle.WriterSpec` are recognised in the log by their
stamps (:mod:`.stamp`), sector by sector, so a write the block layer split over several
entries counts once all its sectors are in.

At each point the oracle is handed the durable writes as the acknowledgement log (a writer
with ``dsync`` acknowledges a write only once it is durable, so a correct stack acknowledges
no more than that): none of them may be lost.  The negative control at each point claims,
besides, the next write the log makes durable after the point: it is not on the rebuilt disk
yet, so the oracle must find it lost, or the check proves nothing.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass, field
from pathlib import Path

from harness.durability.logwrites import DISCARD, FLUSH, FUA, LogEntry, Replayer, entries
from harness.durability.oracle import WriterSpec, classify
from harness.durability.stamp import SECTOR, read_sector

__all__ = ["DurableIndex", "PointFailure", "ReplayCheck", "durable_index", "replay_check", "replay_points"]


@dataclass(frozen=True)
class DurableIndex:
    """Per write of the job found in the log: the replay point (entry count) from which it is
    durable; writes never made durable are absent."""

    durable_at: dict[int, int]
    #: per write, the entry count from which all its sectors are on the rebuilt disk
    logged_at: dict[int, int]
    #: the entry counts that end on a flush or FUA
    flush_points: tuple[int, ...]
    entries: int
    extent: int  # bytes of the disk the log touches

    def durable(self, point: int) -> list[int]:
        """The writes durable once ``point`` entries are applied, in sequence order."""
        return sorted(seq for seq, at in self.durable_at.items() if at <= point)

    def next_after(self, point: int) -> int | None:
        """The first write the log holds whose data is not yet on the disk rebuilt at
        ``point`` (None: the log holds no more)."""
        later = [(at, seq) for seq, at in self.logged_at.items() if at > point]
        return min(later)[1] if later else None


def _stamps(log: io.BufferedReader, entry: LogEntry, spec: WriterSpec) -> list[tuple[int, int]]:
    """(seq, sector index) of every sector of ``entry`` this job's writes stamped."""
    log.seek(entry.data_at)
    data = log.read(entry.length)
    out = []
    for at in range(0, len(data) - SECTOR + 1, SECTOR):
        stamp = read_sector(data[at : at + SECTOR])
        if stamp is None or not stamp.valid or stamp.trial != spec.trial or not 0 <= stamp.seq < spec.count:
            continue
        if spec.offset(stamp.seq) == stamp.offset:
            out.append((stamp.seq, stamp.sector))
    return out


def durable_index(log_path: Path, spec: WriterSpec) -> DurableIndex:
    """When each of ``spec``'s writes became durable in the log at ``log_path``."""
    per_write = spec.bs // SECTOR
    logged: dict[int, set[int]] = {}  # seq -> sectors logged, not yet durable
    durable_sectors: dict[int, set[int]] = {}
    durable_at: dict[int, int] = {}
    seen: dict[int, set[int]] = {}
    logged_at: dict[int, int] = {}
    flushes: list[int] = []
    extent = 0
    count = 0

    def settle(seq: int, sectors: set[int], point: int) -> None:
        have = durable_sectors.setdefault(seq, set())
        have |= sectors
        if len(have) == per_write and seq not in durable_at:
            durable_at[seq] = point

    with log_path.open("rb") as log:
        for entry in entries(log, str(log_path)):
            count = entry.index + 1
            extent = max(extent, entry.offset + entry.length)
            if entry.flags & FLUSH:
                # the target logs a flush after every write completed before it
                for seq, sectors in logged.items():
                    settle(seq, sectors, count)
                logged = {}
            if entry.length and not entry.flags & DISCARD:
                mine: dict[int, set[int]] = {}
                for seq, sector in _stamps(log, entry, spec):
                    mine.setdefault(seq, set()).add(sector)
                for seq, sectors in mine.items():
                    got = seen.setdefault(seq, set())
                    got |= sectors
                    if len(got) == per_write:
                        logged_at.setdefault(seq, count)
                    if entry.flags & FUA:
                        settle(seq, sectors, count)
                    else:
                        logged.setdefault(seq, set()).update(sectors)
            if entry.flags & (FLUSH | FUA):
                flushes.append(count)
    return DurableIndex(durable_at, logged_at, tuple(flushes), count, extent)


def replay_points(index: DurableIndex, between: int, seed: int) -> list[int]:
    """Every flush point, and ``between`` points drawn uniformly (seeded) over the whole log,
    sorted, each once."""
    rng = random.Random(seed)
    drawn = {rng.randint(0, index.entries) for _ in range(between)} if index.entries else set()
    return sorted(set(index.flush_points) | drawn)


@dataclass(frozen=True)
class PointFailure:
    point: int
    lost: int


@dataclass(frozen=True)
class ReplayCheck:
    """What the replay found: ``points`` checked (``at_flushes`` of them flush or FUA points),
    the durable writes the last point held, the points that lost one, and the points whose
    negative control went unnoticed."""

    points: int
    at_flushes: int
    durable_writes: int
    failures: tuple[PointFailure, ...] = field(default=())
    controls: int = 0
    blind: tuple[int, ...] = field(default=())


def replay_check(log_path: Path, spec: WriterSpec, *, between: int, seed: int) -> ReplayCheck:
    """Rebuild the disk at every replay point and classify ``spec``'s blocks on it."""
    index = durable_index(log_path, spec)
    points = replay_points(index, between, seed)
    size = max(index.extent, (spec.first_block + spec.blocks) * spec.bs)
    image = io.BytesIO(bytes(size))
    failures: list[PointFailure] = []
    blind: list[int] = []
    controls = 0
    durable: list[int] = []
    with Replayer(log_path, image) as replay:
        for point in points:
            replay.advance_to(point)
            durable = index.durable(point)
            report = classify(spec, durable, image)
            if report.lost_acked:
                failures.append(PointFailure(point, report.lost_acked))
            claimed = index.next_after(point)
            if claimed is not None:
                controls += 1
                if not classify(spec, sorted([*durable, claimed]), image).lost_acked:
                    blind.append(point)
    flush_set = set(index.flush_points)
    return ReplayCheck(
        points=len(points),
        at_flushes=sum(1 for p in points if p in flush_set),
        durable_writes=len(durable),
        failures=tuple(failures),
        controls=controls,
        blind=tuple(blind),
    )
