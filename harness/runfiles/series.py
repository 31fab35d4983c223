"""Per-second bandwidth of a cell: ``series.ndjson`` records and fio's bandwidth logs.

A run directory may hold ``series.ndjson``: one JSON object per line per measured cell (and
repeat), written by the cell runner::

    {"test_id": "...", "scenario": "failover_integrity", "pair": "single-az",
     "workload": "failover-randwrite-4k", "impairment": "crash", "mode": "replicated",
     "repeat": 0, "interval_s": 1.0, "bw_mib_s": [41.0, 40.2, 0.0, ...],
     "windows": [{"start_s": 2.5, "end_s": 6.0, "label": "primary crashed"}]}

Value ``i`` of ``bw_mib_s`` covers seconds ``[i * interval_s, (i + 1) * interval_s)`` after fio
started; fault ``windows`` use the same clock and may start before 0 or end after the series.

The series is built from fio's ``write_bw_log`` files (fio 3.33): one file per job, named
``<prefix>_bw.<N>.log`` (N from 1, also with one job), lines ``time_ms, value, ddir, bs,
offset``; with ``log_avg_msec`` the value is the job's mean bandwidth in KiB/s over the window
that ends at ``time_ms``, and ``bs`` is 0.  What the recorded logs show (``tests/data/fio/bwlog``):

* a window in which a job did no I/O has **no line** (not a 0): a stall is a gap;
* stamps jitter by a few ms around the window's end (``999``, ``2001``), and after the process
  was stopped they keep a new phase (``4694``, ``5694``);
* the last window races with the job's exit: sometimes one job of two logs it, sometimes none;
* with ``ramp_time`` the clock starts after the ramp (log time 0 = end of ramp).

This module is pure apart from :func:`read_series` and :func:`read_bw_logs`, which read files.
"""

from __future__ import annotations

import glob
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from harness.errors import ConfigError
from harness.runfiles.ndjson import NdjsonFile, read_ndjson
from harness.runfiles.samples import cell_key
from harness.userfiles.jsonsafe import dumps, loads

__all__ = [
    "LOG_HEADER",
    "BwLogEntry",
    "CellSeries",
    "Ddir",
    "FaultWindow",
    "SeriesStore",
    "bw_log_files",
    "bw_logs_script",
    "parse_bw_log",
    "read_bw_logs",
    "read_series",
    "series_from_framed_logs",
    "sum_job_logs",
]

Ddir = Literal["read", "write", "trim"]
#: fio's ``ddir`` column: 0 read, 1 write, 2 trim.
_DDIR_CODES: Final[Mapping[Ddir, int]] = {"read": 0, "write": 1, "trim": 2}
_KIB_PER_MIB: Final = 1024.0
_JOB_LOG: Final = re.compile(r"_bw\.(\d+)\.log\Z")


@dataclass(frozen=True)
class FaultWindow:
    """A time span, in seconds after fio started, during which a fault was in place."""

    start_s: float
    end_s: float
    label: str

    def __post_init__(self) -> None:
        if not (math.isfinite(self.start_s) and math.isfinite(self.end_s)) or self.end_s < self.start_s:
            raise ValueError(f"fault window {self.label!r}: need finite start_s <= end_s")


@dataclass(frozen=True)
class CellSeries:
    """One cell's (one repeat's) bandwidth over time; a line of ``series.ndjson``."""

    test_id: str
    scenario: str
    pair: str
    workload: str
    impairment: str
    mode: str
    repeat: int
    interval_s: float
    bw_mib_s: tuple[float, ...]
    windows: tuple[FaultWindow, ...] = ()

    def __post_init__(self) -> None:
        if not (math.isfinite(self.interval_s) and self.interval_s > 0):
            raise ValueError(f"{self.test_id}: interval_s must be > 0")
        if any(not math.isfinite(v) or v < 0 for v in self.bw_mib_s):
            raise ValueError(f"{self.test_id}: bandwidth values must be finite and >= 0")

    @property
    def key(self) -> str:
        """The cell key, the same as the samples' (:func:`harness.runfiles.samples.cell_key`)."""
        return cell_key(
            {
                "scenario": self.scenario,
                "pair": self.pair,
                "mode": self.mode,
                "workload": self.workload,
                "impairment": self.impairment,
            }
        )

    @property
    def duration_s(self) -> float:
        return len(self.bw_mib_s) * self.interval_s

    def to_json(self) -> str:
        """One ``series.ndjson`` line (no newline)."""
        return dumps(
            {
                "test_id": self.test_id,
                "scenario": self.scenario,
                "pair": self.pair,
                "workload": self.workload,
                "impairment": self.impairment,
                "mode": self.mode,
                "repeat": self.repeat,
                "interval_s": self.interval_s,
                "bw_mib_s": list(self.bw_mib_s),
                "windows": [{"start_s": w.start_s, "end_s": w.end_s, "label": w.label} for w in self.windows],
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, line: str) -> CellSeries:
        """One NDJSON line, checked (ValueError, KeyError or TypeError naming what is wrong)."""
        data: Any = loads(line)
        if not isinstance(data, dict):
            raise TypeError("not a JSON object")
        return cls(
            test_id=str(data["test_id"]),
            scenario=str(data["scenario"]),
            pair=str(data["pair"]),
            workload=str(data["workload"]),
            # The writer may record "no impairment" as null; the samples call it "none".
            impairment=str(data.get("impairment") or "none"),
            mode=str(data["mode"]),
            repeat=int(data.get("repeat") or 0),
            interval_s=_positive(data["interval_s"], "interval_s"),
            # a gap is written as null (harness.userfiles.jsonsafe); read back as NaN
            bw_mib_s=tuple(math.nan if v is None else float(v) for v in data["bw_mib_s"]),
            windows=tuple(
                FaultWindow(float(w["start_s"]), float(w["end_s"]), str(w["label"])) for w in data.get("windows") or ()
            ),
        )


def _positive(raw: Any, what: str) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 < raw < math.inf:
        raise ValueError(f"{what} {raw!r} is not a positive number")
    return float(raw)


def read_series(path: Path) -> list[CellSeries]:
    """All records of a ``series.ndjson``; a malformed line is a ConfigError naming file:line."""
    return read_ndjson(path, CellSeries.from_json, what="series", missing="no series file")


# ---------------------------------------------------------------------------------------------
# fio bandwidth logs


@dataclass(frozen=True)
class BwLogEntry:
    """One line of a fio bandwidth log."""

    time_ms: int
    kib_s: float
    ddir: int


def parse_bw_log(text: str, *, where: str = "bw log") -> tuple[BwLogEntry, ...]:
    """The entries of one job's ``<prefix>_bw.<N>.log``; a malformed line is a ConfigError.

    Only the first three columns are read: later fio versions append more (priority) and
    with ``log_avg_msec`` the block size and offset columns are 0 anyway.
    """
    out: list[BwLogEntry] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(",")]
        try:
            if len(fields) < 3:
                raise ValueError(f"{len(fields)} fields, expected at least 3")
            entry = BwLogEntry(int(fields[0]), float(fields[1]), int(fields[2]))
        except ValueError as exc:
            raise ConfigError(f"{where}:{n}: not a fio bandwidth log line ({exc}): {line!r}") from None
        if entry.time_ms < 0 or not math.isfinite(entry.kib_s) or entry.kib_s < 0:
            raise ConfigError(f"{where}:{n}: negative or non-finite value: {line!r}")
        out.append(entry)
    return tuple(out)


def _window_index(time_ms: int, interval_ms: float) -> int:
    # An entry is stamped at the end of its window, give or take a few ms of jitter (or a new
    # phase after a stop): the nearest window end names the window.
    return max(round(time_ms / interval_ms) - 1, 0)


def sum_job_logs(jobs: Sequence[Sequence[BwLogEntry]], *, interval_s: float = 1.0, ddir: Ddir = "write") -> list[float]:
    """Total bandwidth (MiB/s) per window over all jobs, for one direction.

    ``jobs`` are the parsed logs of one fio run, one per job; ``interval_s`` is the run's
    ``log_avg_msec`` in seconds.  Value ``i`` covers ``[i * interval_s, (i + 1) * interval_s)``
    of fio's log clock.  A window a job has no line for counts 0 for that job (fio logs
    nothing for a window without I/O), except at the end: the series ends at the last window any
    job logged, and that window is dropped when some job did not log it, because fio's last
    window races with job exit and half the jobs' sum would look like a collapse at the end.
    Two lines of one job in one window (not seen, but possible around a stop) are averaged.
    """
    if not (math.isfinite(interval_s) and interval_s > 0):
        raise ValueError("interval_s must be > 0")
    interval_ms = interval_s * 1000.0
    code = _DDIR_CODES[ddir]
    per_job: list[dict[int, float]] = []
    for entries in jobs:
        windows: dict[int, list[float]] = {}
        for e in entries:
            if e.ddir == code:
                windows.setdefault(_window_index(e.time_ms, interval_ms), []).append(e.kib_s)
        per_job.append({i: sum(v) / len(v) for i, v in windows.items()})
    length = max((max(w) + 1 for w in per_job if w), default=0)
    if length and any(length - 1 not in w for w in per_job):
        length -= 1
    return [sum(w.get(i, 0.0) for w in per_job) / _KIB_PER_MIB for i in range(length)]


def bw_log_files(directory: Path, prefix: str) -> list[Path]:
    """The per-job logs ``<prefix>_bw.<N>.log`` in ``directory``, in job order (N numerically)."""
    found: list[tuple[int, Path]] = []
    for path in directory.glob(f"{glob.escape(prefix)}_bw.*.log"):
        match = _JOB_LOG.search(path.name)
        if match and path.name == f"{prefix}_bw.{match.group(1)}.log":
            found.append((int(match.group(1)), path))
    return [p for _, p in sorted(found)]


def read_bw_logs(directory: Path, prefix: str, *, interval_s: float = 1.0, ddir: Ddir = "write") -> list[float]:
    """:func:`sum_job_logs` of the job logs ``<prefix>_bw.<N>.log`` in ``directory``.

    ConfigError when there are none: a run asked for a bandwidth log and fio wrote nothing.
    """
    paths = bw_log_files(directory, prefix)
    if not paths:
        raise ConfigError(f"{directory}: no fio bandwidth logs {prefix}_bw.<N>.log")
    jobs = [parse_bw_log(p.read_text(encoding="utf-8"), where=str(p)) for p in paths]
    return sum_job_logs(jobs, interval_s=interval_s, ddir=ddir)


#: separator line in front of each log file when a node prints several in one round trip
LOG_HEADER: Final = "==> "


def bw_logs_script(prefix: str) -> str:
    """Shell that prints every ``<prefix>_bw.<N>.log`` after a ``==> <path>`` line (builtins only)."""
    return f'for f in {prefix}_bw.*.log; do [ -e "$f" ] || continue; echo "{LOG_HEADER}$f"; cat "$f"; done; true'


def series_from_framed_logs(text: str, *, interval_s: float = 1.0, ddir: Ddir = "write") -> list[float]:
    """Per-window MiB/s from :func:`bw_logs_script`'s output (jobs summed)."""
    jobs: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith(LOG_HEADER):
            jobs.append([])
        elif jobs:
            jobs[-1].append(line)
    parsed = [parse_bw_log("\n".join(lines), where=f"bw log {i + 1}") for i, lines in enumerate(jobs)]
    return sum_job_logs(parsed, interval_s=interval_s, ddir=ddir) if parsed else []


class SeriesStore:
    """Append-only ``series.ndjson``, safe for concurrent writers on one host."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = NdjsonFile(path)

    def append(self, series: CellSeries) -> None:
        self._file.append([series.to_json()])
