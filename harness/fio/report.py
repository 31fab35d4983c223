"""fio's JSON reports (``--output-format=json``, 2.x and 3.x) and ``--status-interval`` streams
of them, read into :class:`~harness.fio.result.FioResult`.

fio changed units under its JSON over the years; every one is normalised here from what the
report itself holds, with no table of fio versions to keep up to date:

* ``io_bytes`` is KiB up to fio 2.20 and bytes from 2.21, which added ``io_kbytes`` - its
  presence is the tell;
* ``bw_bytes`` exists from 3.2; before that ``bw`` (KiB/s) is all there is;
* latencies are ``clat``/``lat`` in µs before 2.99 and ``clat_ns``/``lat_ns`` after;
* percentile maps were padded with duplicate ``"0.00": 0`` keys up to fio 3.3; they are dropped.

fio in client/server mode (``fio --client=HOST job.fio``, recorded with 3.25 and 3.33 in
tests/data/fio/) prints ``client_stats`` instead of ``jobs``: the same job objects plus
``hostname``/``port``, and with more than one server an ``"All clients"`` sum.  One server's
report is read like a local one; several servers' are refused, naming them, because a
harness result is one node's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from harness.fio.result import (
    DirectionStats,
    DiskUtil,
    FioOutputError,
    FioResult,
    GroupResult,
    SteadyStateResult,
    direction_stats,
    sum_directions,
)

__all__ = ["parse_fio_json", "parse_fio_json_stream", "parse_last_fio_report"]


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
    return direction_stats(
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
        empty = direction_stats(
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
                read=sum_directions(directions["read"]) if directions["read"] else empty,
                write=sum_directions(directions["write"]) if directions["write"] else empty,
                mixed=sum_directions(directions["mixed"]) if directions["mixed"] else None,
                steady_state=ss,
            )
        )
    return tuple(groups)


_ALL_CLIENTS: Final = "All clients"


def _client_jobs(raw: object) -> list[object]:
    """The job objects of a client/server report, if they come from one server."""
    if not isinstance(raw, list):
        raise FioOutputError("fio JSON: 'client_stats' should be a list")
    jobs = [j for j in raw if not (isinstance(j, dict) and j.get("jobname") == _ALL_CLIENTS)]
    servers = sorted({f"{j.get('hostname')}:{j.get('port')}" for j in jobs if isinstance(j, dict)})
    if len(servers) > 1:
        raise FioOutputError(
            f"fio JSON from client/server mode with {len(servers)} servers ({', '.join(servers)}): "
            "a harness result is one node's; run one --client per report"
        )
    return jobs


def _result_from_document(doc: object) -> FioResult:
    top = _mapping(doc, "top level")
    jobs_raw = top.get("jobs")
    if jobs_raw is None and "client_stats" in top:
        jobs_raw = _client_jobs(top["client_stats"])
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
