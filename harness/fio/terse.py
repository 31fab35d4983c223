"""fio's terse output (``--minimal``, version 3): the only machine format of fio 2.0.9 and
older, read into :class:`~harness.fio.result.FioResult`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from harness.fio.result import DirectionStats, FioOutputError, FioResult, GroupResult, direction_stats

__all__ = ["parse_fio_terse"]

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
    return direction_stats(
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
