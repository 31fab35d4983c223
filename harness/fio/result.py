"""fio's output, normalised: one :class:`FioResult` whatever fio version or format produced it.

Every number in these records is in one unit system - bytes, bytes/s, IOPS, milliseconds of
runtime and **microseconds** of latency - so bounds, samples and reports never need to know that
fio changed units under them.  :mod:`harness.fio.report` reads fio's JSON reports and
status-interval streams into them, :mod:`harness.fio.terse` its terse (``--minimal``) lines.

Jobs are summed per ``groupid`` (several entries with one groupid ran concurrently without
``group_reporting``) and never across groupids (``stonewall`` phases ran one after another).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from harness.errors import HarnessError

__all__ = [
    "DirectionStats",
    "DiskUtil",
    "FioOutputError",
    "FioResult",
    "FioVersion",
    "GroupResult",
    "SteadyStateResult",
    "direction_stats",
    "sum_directions",
]


class FioOutputError(HarnessError):
    """fio's output could not be read: missing, truncated, not JSON, or not fio's shape.

    Usually fio was killed before it finished writing (deadline, crash) or the wrong file was
    fetched; the message says which and where.
    """


_VERSION_RE: Final = re.compile(r"\A\s*fio[- ]?v?(\d+)\.(\d+)(?:\.(\d+))?(\S*)\s*\Z")


@dataclass(frozen=True, order=True)
class FioVersion:
    """A fio release, comparable: ``FioVersion.parse("fio-2.2.10") < FioVersion.parse("fio-2.21")``."""

    major: int
    minor: int
    patch: int = 0
    raw: str = field(default="", compare=False)

    @classmethod
    def parse(cls, text: str) -> FioVersion:
        """Parse ``fio-3.33``, ``fio-2.2.10``, ``fio-3.33-12-gabc123`` (git builds) and the like."""
        match = _VERSION_RE.match(text)
        if not match:
            raise FioOutputError(f"not a fio version: {text!r} (expected e.g. 'fio-3.33')")
        return cls(int(match[1]), int(match[2]), int(match[3] or 0), text.strip())

    def __str__(self) -> str:
        return self.raw or f"fio-{self.major}.{self.minor}.{self.patch}"


@dataclass(frozen=True)
class DirectionStats:
    """One I/O direction (read, write or unified ``mixed``) of one group, in fixed units.

    Latency fields are ``None`` when the direction did no measured I/O.  When several job
    entries were summed, ``clat_mean_us``/``lat_mean_us`` are I/O-weighted means and the
    percentiles are the per-job maximum - an upper bound of the true merged percentile - and
    ``percentiles_exact`` is ``False``.  ``total_ios`` is ``None`` for fio older than 2.1.14.
    In a ``verify_only`` run fio reports the replayed writes as "phantom" writes with
    ``runtime_ms == 0``; the verification reads are the read direction.
    """

    bytes_per_s: float
    iops: float
    io_bytes: int
    total_ios: int | None
    runtime_ms: int
    clat_mean_us: float | None
    clat_p50_us: float | None
    clat_p90_us: float | None
    clat_p99_us: float | None
    clat_p99_9_us: float | None
    lat_mean_us: float | None
    clat_percentiles_us: tuple[tuple[float, float], ...] = ()
    percentiles_exact: bool = True

    @property
    def active(self) -> bool:
        """True when this direction moved data."""
        return self.io_bytes > 0 or bool(self.total_ios)

    def clat_percentile_us(self, percentile: float) -> float | None:
        """Completion latency at ``percentile`` (as listed in ``percentile_list``), or ``None``."""
        for p, value in self.clat_percentiles_us:
            if abs(p - percentile) < 1e-6:
                return value
        return None


@dataclass(frozen=True)
class SteadyStateResult:
    """fio's ``steadystate`` section: whether the ``--ss`` criterion was met."""

    setting: str
    duration_s: int
    attained: bool
    criterion: str


@dataclass(frozen=True)
class GroupResult:
    """All job entries that share one ``groupid``, summed (they ran concurrently)."""

    groupid: int
    jobname: str
    job_entries: int
    error: int
    read: DirectionStats
    write: DirectionStats
    mixed: DirectionStats | None = None
    steady_state: SteadyStateResult | None = None


@dataclass(frozen=True)
class DiskUtil:
    """A ``disk_util`` entry: how busy the kernel saw a device during the run (percent)."""

    name: str
    util_percent: float


@dataclass(frozen=True)
class FioResult:
    """One fio report.  Most jobs have one group: use :attr:`read`/:attr:`write` directly."""

    fio_version: str
    timestamp: int | None
    job_entries: int
    groups: tuple[GroupResult, ...]
    disk_util: tuple[DiskUtil, ...] = ()
    timestamp_ms: int | None = None

    @property
    def version(self) -> FioVersion | None:
        """Parsed :attr:`fio_version`, ``None`` if fio printed something unexpected."""
        try:
            return FioVersion.parse(self.fio_version)
        except FioOutputError:
            return None

    @property
    def error(self) -> int:
        """First non-zero job error (an errno such as 28 ENOSPC or 84 EILSEQ for verify), else 0."""
        return next((g.error for g in self.groups if g.error), 0)

    @property
    def ok(self) -> bool:
        """True when no job reported an error."""
        return self.error == 0

    def group(self, groupid: int) -> GroupResult:
        """The group with this id (``stonewall`` phases are separate groups)."""
        for g in self.groups:
            if g.groupid == groupid:
                return g
        raise FioOutputError(f"fio result has no group {groupid} (groups: {[g.groupid for g in self.groups]})")

    @property
    def only_group(self) -> GroupResult:
        """The single group of a one-phase job; refuses to guess when there are several."""
        if len(self.groups) != 1:
            raise FioOutputError(
                f"fio result has {len(self.groups)} groups {[g.groupid for g in self.groups]}; "
                "sequential phases must not be summed - pick one with .group(id)"
            )
        return self.groups[0]

    @property
    def read(self) -> DirectionStats:
        """Read direction of the only group."""
        return self.only_group.read

    @property
    def write(self) -> DirectionStats:
        """Write direction of the only group."""
        return self.only_group.write


# -- building and summing one direction -----------------------------------------------------

_FIXED_PERCENTILES: Final = (50.0, 90.0, 99.0, 99.9)


def direction_stats(
    *,
    bytes_per_s: float,
    iops: float,
    io_bytes: int,
    total_ios: int | None,
    runtime_ms: int,
    clat_mean_us: float | None,
    lat_mean_us: float | None,
    percentiles: Mapping[float, float],
    exact: bool,
) -> DirectionStats:
    """One direction from its raw figures; the fixed p50/p90/p99/p99.9 fields come from ``percentiles``."""

    def at(p: float) -> float | None:
        return next((v for k, v in percentiles.items() if abs(k - p) < 1e-6), None)

    p50, p90, p99, p999 = (at(p) for p in _FIXED_PERCENTILES)
    return DirectionStats(
        bytes_per_s=bytes_per_s,
        iops=iops,
        io_bytes=io_bytes,
        total_ios=total_ios,
        runtime_ms=runtime_ms,
        clat_mean_us=clat_mean_us,
        clat_p50_us=p50,
        clat_p90_us=p90,
        clat_p99_us=p99,
        clat_p99_9_us=p999,
        lat_mean_us=lat_mean_us,
        clat_percentiles_us=tuple(sorted(percentiles.items())),
        percentiles_exact=exact,
    )


def _weighted_mean(values: Sequence[tuple[float | None, float]]) -> float | None:
    known = [(v, w) for v, w in values if v is not None]
    if not known:
        return None
    total = sum(w for _, w in known)
    if total <= 0:
        return sum(v for v, _ in known) / len(known)
    return sum(v * w for v, w in known) / total


def sum_directions(parts: Sequence[DirectionStats]) -> DirectionStats:
    """Concurrent jobs of one group: throughput adds up, runtime is the longest."""
    if len(parts) == 1:
        return parts[0]

    def weight(s: DirectionStats) -> float:
        return float(s.total_ios) if s.total_ios is not None else s.iops * s.runtime_ms / 1000

    merged: dict[float, float] = {}
    for s in parts:
        for p, v in s.clat_percentiles_us:
            merged[p] = max(merged.get(p, v), v)
    totals = [s.total_ios for s in parts]
    return direction_stats(
        bytes_per_s=sum(s.bytes_per_s for s in parts),
        iops=sum(s.iops for s in parts),
        io_bytes=sum(s.io_bytes for s in parts),
        total_ios=None if any(t is None for t in totals) else sum(t or 0 for t in totals),
        runtime_ms=max(s.runtime_ms for s in parts),
        clat_mean_us=_weighted_mean([(s.clat_mean_us, weight(s)) for s in parts]),
        lat_mean_us=_weighted_mean([(s.lat_mean_us, weight(s)) for s in parts]),
        percentiles=merged,
        exact=False,
    )
