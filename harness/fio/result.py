"""fio's output, normalised: one :class:`FioResult` whatever fio version or format produced it.

Every number leaves this module in one unit system - bytes, bytes/s, IOPS, milliseconds of
runtime and **microseconds** of latency - so bounds, samples and reports never need to know that
fio changed units under them (ecosystem.md §3.4):

* ``io_bytes`` is KiB up to fio 2.20 and bytes from 2.21, which added ``io_kbytes`` - its
  presence is the tell, so no version table is needed;
* ``bw_bytes`` exists from 3.2; before that ``bw`` (KiB/s) is all there is;
* latencies are ``clat``/``lat`` in µs before 2.99 and ``clat_ns``/``lat_ns`` after;
* percentile maps were padded with duplicate ``"0.00": 0`` keys up to fio 3.3; they are dropped;
* terse (``--minimal``, version 3) is the only machine format of fio 2.0.9 and older.

Jobs are summed per ``groupid`` (several entries with one groupid ran concurrently without
``group_reporting``) and never across groupids (``stonewall`` phases ran one after another).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from harness.errors import HarnessError

__all__ = [
    "DirectionStats",
    "DiskUtil",
    "FioOutputError",
    "FioResult",
    "FioVersion",
    "GroupResult",
    "SteadyStateResult",
    "parse_fio_json",
    "parse_fio_json_stream",
    "parse_fio_terse",
    "parse_last_fio_report",
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


# -- field access with clear errors -----------------------------------------------------------


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise FioOutputError(f"fio JSON: {where} should be an object, got {type(value).__name__}")
    return value


def _number(d: Mapping[str, Any], key: str, where: str) -> float:
    value = d.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FioOutputError(f"fio JSON: {where}.{key} is missing or not a number ({value!r})")
    return float(value)


def _int(d: Mapping[str, Any], key: str, where: str) -> int:
    return int(_number(d, key, where))


def _opt_int(d: Mapping[str, Any], key: str, where: str) -> int | None:
    return _int(d, key, where) if key in d else None


# -- one direction of one job entry -----------------------------------------------------------

_FIXED_PERCENTILES: Final = (50.0, 90.0, 99.0, 99.9)


def _percentiles(raw: object, divisor: float, where: str) -> dict[float, float]:
    if raw is None:
        return {}
    out: dict[float, float] = {}
    for key, value in _mapping(raw, where).items():
        try:
            p = float(key)
        except ValueError as exc:
            raise FioOutputError(f"fio JSON: {where} has a non-numeric percentile key {key!r}") from exc
        if p <= 0:  # the "0.00": 0 padding of fio <= 3.3
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise FioOutputError(f"fio JSON: {where}[{key!r}] is not a number ({value!r})")
        out[p] = float(value) / divisor
    return out


def _stats(
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


def _direction(raw: object, where: str) -> DirectionStats:
    d = _mapping(raw, where)
    runtime_ms = _int(d, "runtime", where)
    io_raw = _int(d, "io_bytes", where)
    # fio 2.21 made io_bytes bytes and added io_kbytes in the same commit: its absence means KiB.
    io_bytes = io_raw if "io_kbytes" in d else io_raw * 1024
    bytes_per_s = _number(d, "bw_bytes", where) if "bw_bytes" in d else _number(d, "bw", where) * 1024
    total_ios = _opt_int(d, "total_ios", where)

    if "clat_ns" in d:
        clat_key, lat_key, divisor = "clat_ns", "lat_ns", 1000.0
    else:
        clat_key, lat_key, divisor = "clat", "lat", 1.0
    clat = _mapping(d[clat_key], f"{where}.{clat_key}") if clat_key in d else None
    lat = _mapping(d[lat_key], f"{where}.{lat_key}") if lat_key in d else None
    # No runtime means no timing: a verify_only run reports its replayed "phantom" writes with
    # runtime 0 and meaningless latencies (fio 3.33 printed a 116 ms clat mean for them).
    if clat is not None and "N" in clat:
        measured = runtime_ms > 0 and _number(clat, "N", f"{where}.{clat_key}") > 0
    else:
        measured = runtime_ms > 0 and (total_ios > 0 if total_ios is not None else io_bytes > 0)
    clat_mean = lat_mean = None
    percentiles: dict[float, float] = {}
    if measured and clat is not None:
        clat_mean = _number(clat, "mean", f"{where}.{clat_key}") / divisor
        percentiles = _percentiles(clat.get("percentile"), divisor, f"{where}.{clat_key}.percentile")
    if measured and lat is not None:
        lat_mean = _number(lat, "mean", f"{where}.{lat_key}") / divisor
    return _stats(
        bytes_per_s=bytes_per_s,
        iops=_number(d, "iops", where),
        io_bytes=io_bytes,
        total_ios=total_ios,
        runtime_ms=runtime_ms,
        clat_mean_us=clat_mean,
        lat_mean_us=lat_mean,
        percentiles=percentiles,
        exact=True,
    )


def _weighted_mean(values: Sequence[tuple[float | None, float]]) -> float | None:
    known = [(v, w) for v, w in values if v is not None]
    if not known:
        return None
    total = sum(w for _, w in known)
    if total <= 0:
        return sum(v for v, _ in known) / len(known)
    return sum(v * w for v, w in known) / total


def _sum_directions(parts: Sequence[DirectionStats]) -> DirectionStats:
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
    return _stats(
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


def _steady_state(raw: object, where: str) -> SteadyStateResult:
    d = _mapping(raw, where)
    return SteadyStateResult(
        setting=str(d.get("ss", "")),
        duration_s=_int(d, "duration", where),
        attained=bool(_number(d, "attained", where)),
        criterion=str(d.get("criterion", "")),
    )


def _groups(jobs: Sequence[Mapping[str, Any]]) -> tuple[GroupResult, ...]:
    by_group: dict[int, list[tuple[int, Mapping[str, Any]]]] = {}
    for index, job in enumerate(jobs):
        by_group.setdefault(_int(job, "groupid", f"jobs[{index}]"), []).append((index, job))
    groups = []
    for groupid, entries in by_group.items():
        directions: dict[str, list[DirectionStats]] = {"read": [], "write": [], "mixed": []}
        steady: list[SteadyStateResult] = []
        for index, job in entries:
            where = f"jobs[{index}]"
            for name, parts in directions.items():
                if name in job:
                    parts.append(_direction(job[name], f"{where}.{name}"))
            if "steadystate" in job:
                steady.append(_steady_state(job["steadystate"], f"{where}.steadystate"))
        if not directions["read"] and not directions["write"] and not directions["mixed"]:
            raise FioOutputError(f"fio JSON: group {groupid} has no read, write or mixed section")
        empty = _stats(
            bytes_per_s=0.0,
            iops=0.0,
            io_bytes=0,
            total_ios=0,
            runtime_ms=0,
            clat_mean_us=None,
            lat_mean_us=None,
            percentiles={},
            exact=True,
        )
        errors = [_int(job, "error", f"jobs[{i}]") for i, job in entries]
        ss = None
        if steady:
            ss = SteadyStateResult(
                setting=steady[0].setting,
                duration_s=steady[0].duration_s,
                attained=all(s.attained for s in steady),
                criterion=steady[0].criterion,
            )
        groups.append(
            GroupResult(
                groupid=groupid,
                jobname=str(entries[0][1].get("jobname", "")),
                job_entries=len(entries),
                error=next((e for e in errors if e), 0),
                read=_sum_directions(directions["read"]) if directions["read"] else empty,
                write=_sum_directions(directions["write"]) if directions["write"] else empty,
                mixed=_sum_directions(directions["mixed"]) if directions["mixed"] else None,
                steady_state=ss,
            )
        )
    return tuple(groups)


def _result_from_document(doc: object) -> FioResult:
    top = _mapping(doc, "top level")
    jobs_raw = top.get("jobs")
    if not isinstance(jobs_raw, list) or not jobs_raw:
        raise FioOutputError("fio JSON: no 'jobs' list (is this fio's JSON output, and did any job start?)")
    jobs = [_mapping(j, f"jobs[{i}]") for i, j in enumerate(jobs_raw)]
    disks = []
    for i, raw in enumerate(top.get("disk_util") or []):
        d = _mapping(raw, f"disk_util[{i}]")
        disks.append(DiskUtil(name=str(d.get("name", "")), util_percent=_number(d, "util", f"disk_util[{i}]")))
    return FioResult(
        fio_version=str(top.get("fio version", "")),
        timestamp=_opt_int(top, "timestamp", "top level"),
        timestamp_ms=_opt_int(top, "timestamp_ms", "top level"),
        job_entries=len(jobs),
        groups=_groups(jobs),
        disk_util=tuple(disks),
    )


# -- text → documents -------------------------------------------------------------------------

# fio starts every report with "{" in column 0; nested objects are indented, so this also
# finds where the next report of a --status-interval stream begins.
_DOC_START: Final = re.compile(r"^\{", re.MULTILINE)
_DECODER: Final = json.JSONDecoder()


def _next_document_start(text: str, pos: int) -> int | None:
    match = _DOC_START.search(text, pos)
    return None if match is None else match.end() - 1


def _snippet(text: str) -> str:
    text = text.strip()
    return repr(text[:200] + ("..." if len(text) > 200 else ""))


def _decode_at(text: str, start: int) -> tuple[object, int]:
    try:
        return _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        # Truncated: the parser ran out of text on the last line (fio killed mid-write).
        truncated = "\n" not in text[exc.pos :].rstrip()
        cause = "ends in the middle of a document (fio killed or output cut off?)" if truncated else exc.msg
        raise FioOutputError(
            f"fio JSON output is {'truncated' if truncated else 'invalid'} at line {exc.lineno} "
            f"column {exc.colno}: {cause} ({len(text)} characters read)"
        ) from exc


def parse_fio_json(text: str) -> FioResult:
    """Parse one fio JSON report (``--output-format=json``), 2.x or 3.x.

    Text before the first line that opens a JSON object is skipped (fio prints notes such as
    ``note: both iodepth >= 1 and synchronous I/O engine are selected`` on stdout).  A second
    document means ``--status-interval`` output: use :func:`parse_fio_json_stream`.
    """
    start = _next_document_start(text, 0)
    if start is None:
        raise FioOutputError(f"no JSON document in fio output: {_snippet(text)}")
    doc, end = _decode_at(text, start)
    if _next_document_start(text, end) is not None:
        raise FioOutputError(
            "fio output holds several JSON documents (--status-interval?); "
            "use parse_fio_json_stream or parse_last_fio_report"
        )
    return _result_from_document(doc)


def parse_fio_json_stream(text: str, *, allow_truncated_tail: bool = False) -> tuple[FioResult, ...]:
    """Every report of a ``--status-interval`` output file, oldest first.

    With ``allow_truncated_tail`` an incomplete *last* document is dropped instead of raising -
    the normal state of the file when the node running fio crashed mid-write, which is exactly
    when the failover scenario needs the last complete report.  A damaged document followed by
    another one is always an error.
    """
    results: list[FioResult] = []
    pos = 0
    while (start := _next_document_start(text, pos)) is not None:
        try:
            doc, pos = _decode_at(text, start)
        except FioOutputError:
            is_last = _next_document_start(text, start + 1) is None
            if allow_truncated_tail and is_last and results:
                break
            raise
        results.append(_result_from_document(doc))
    if not results:
        raise FioOutputError(f"no JSON document in fio output: {_snippet(text)}")
    return tuple(results)


def parse_last_fio_report(text: str, *, allow_truncated_tail: bool = False) -> FioResult:
    """The most recent complete report of a status-interval stream (or the only one)."""
    return parse_fio_json_stream(text, allow_truncated_tail=allow_truncated_tail)[-1]


# -- terse (--minimal) ------------------------------------------------------------------------

# Terse v3 layout (fio HOWTO "Terse output"): 5 header fields, then per direction 41 fields:
# KiB, KiB/s, IOPS, runtime ms, slat[4], clat[4] (µs), 20 clat percentiles "p%=µs", lat[4],
# bw[5].  Read starts at index 5, write at 46; CPU, depths and disk util follow.
_TERSE_HEADER: Final = 5
_TERSE_DIR_LEN: Final = 41
_TERSE_MIN_FIELDS: Final = _TERSE_HEADER + 2 * _TERSE_DIR_LEN


def _terse_direction(fields: Sequence[str], base: int) -> DirectionStats:
    def num(offset: int) -> float:
        text = fields[base + offset]
        try:
            return float(text.rstrip("%"))
        except ValueError as exc:
            raise FioOutputError(f"fio terse: field {base + offset} is not a number: {text!r}") from exc

    percentiles: dict[float, float] = {}
    for offset in range(12, 32):
        text = fields[base + offset]
        key, sep, value = text.partition("%=")
        if not sep:
            raise FioOutputError(f"fio terse: field {base + offset} should be 'P%=VALUE', got {text!r}")
        try:
            p, v = float(key), float(value)
        except ValueError as exc:
            raise FioOutputError(f"fio terse: bad percentile field {text!r}") from exc
        if p > 0:
            percentiles[p] = v
    io_bytes = int(num(0)) * 1024
    runtime_ms = int(num(3))
    measured = io_bytes > 0 and runtime_ms > 0
    return _stats(
        bytes_per_s=num(1) * 1024,
        iops=num(2),
        io_bytes=io_bytes,
        total_ios=None,
        runtime_ms=runtime_ms,
        clat_mean_us=num(10) if measured else None,
        lat_mean_us=num(34) if measured else None,
        percentiles=percentiles if measured else {},
        exact=True,
    )


def parse_fio_terse(line: str) -> FioResult:
    """Parse one ``--minimal`` line (terse version 3, fio's default and fio 2.0.9's only format).

    Terse has no ``total_ios``; sizes are KiB and latencies µs in every fio version.
    """
    text = line.strip()
    if "\n" in text:
        raise FioOutputError("parse_fio_terse takes one line; fio writes one line per job or group")
    fields = text.split(";")
    if len(fields) < _TERSE_HEADER or fields[0] != "3":
        version = fields[0] if fields else ""
        raise FioOutputError(
            f"not fio terse version 3 output (first field {version!r}); run fio with --minimal --terse-version=3"
        )
    if len(fields) < _TERSE_MIN_FIELDS:
        raise FioOutputError(f"fio terse line has {len(fields)} fields, need at least {_TERSE_MIN_FIELDS} (truncated?)")
    try:
        groupid, error = int(fields[3]), int(fields[4])
    except ValueError as exc:
        raise FioOutputError(f"fio terse: groupid/error fields are not integers: {fields[3:5]!r}") from exc
    group = GroupResult(
        groupid=groupid,
        jobname=fields[2],
        job_entries=1,
        error=error,
        read=_terse_direction(fields, _TERSE_HEADER),
        write=_terse_direction(fields, _TERSE_HEADER + _TERSE_DIR_LEN),
    )
    return FioResult(fio_version=fields[1], timestamp=None, job_entries=1, groups=(group,))
