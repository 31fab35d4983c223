"""Inputs of the plot and series tests, all from real recordings.

* cells: recorded lab runs (``tests/data/runs``, loaded through :mod:`.baseline_runs`);
* a numjobs sweep: real fio JSON outputs (``tests/data/fio/numjobs``) turned into samples;
* per-second series: real fio bandwidth logs (``tests/data/fio/bwlog``) summed by the parser
  under test, with the stop window measured when the log was recorded.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Final

from harness.fio import parse_fio_json
from harness.report.aggregate import Cell, aggregate_samples
from harness.runfiles.samples import METRICS, Sample
from harness.runfiles.series import BwLogEntry, CellSeries, FaultWindow, bw_log_files, parse_bw_log, sum_job_logs

from .baseline_runs import REPEATS_A, REPEATS_B, load

__all__ = [
    "BWLOG",
    "LATENCY",
    "REPEATS_A",
    "REPEATS_B",
    "bw_series",
    "cells",
    "job_logs",
    "numjobs_samples",
    "stop_windows",
]

_DATA: Final = Path(__file__).resolve().parents[1] / "data"
BWLOG: Final = _DATA / "fio" / "bwlog"
_NUMJOBS: Final = _DATA / "fio" / "numjobs"
#: Every latency_sweep cell and the calibration cells of three lab runs, as three repeats.
LATENCY: Final = "latency-sweep-repeats3"
_NUMJOBS_FILE: Final = re.compile(r"fio-3\.33-(?P<rw>[a-z]+)-(?P<bs>\d+)k-nj(?P<nj>\d+)-qd1\.json")


def cells(*runs: str) -> list[Cell]:
    """The aggregated cells of recorded runs (their samples together)."""
    return aggregate_samples([s for run in runs for s in load(run)])


def numjobs_samples() -> list[Sample]:
    """bw and iops of the recorded fio numjobs sweep, as a ``numjobs_sweep`` scenario on the host disk."""
    out = []
    for path in sorted(_NUMJOBS.glob("*.json")):
        match = _NUMJOBS_FILE.fullmatch(path.name)
        assert match, path
        write = parse_fio_json(path.read_text()).write
        rw, bs, nj = match["rw"], int(match["bs"]) * 1024, int(match["nj"])
        metadata = {
            "scenario": "numjobs_sweep",
            "pair": "host",
            "mode": "raw",
            "workload": f"{rw}-{match['bs']}k-nj{nj}-qd1",
            "impairment": "none",
            "placement": "local",
            "rw": rw,
            "bs": bs,
            "numjobs": nj,
            "iodepth": 1,
            "repeat": 0,
        }
        out += [
            Sample("bw", write.bytes_per_s / 2**20, METRICS["bw"], metadata),
            Sample("iops", write.iops, METRICS["iops"], metadata),
        ]
    return out


def job_logs(prefix: str) -> list[tuple[BwLogEntry, ...]]:
    return [parse_bw_log(p.read_text(), where=str(p)) for p in bw_log_files(BWLOG, prefix)]


def stop_windows() -> tuple[FaultWindow, ...]:
    """The SIGSTOP window of the ``stop-nj2`` recording."""
    return tuple(FaultWindow(**w) for w in json.loads((BWLOG / "stop-nj2.windows.json").read_text()))


def bw_series(
    prefix: str,
    *,
    scenario: str = "failover_integrity",
    pair: str = "single-az",
    workload: str = "write-1m-nj2-qd4",
    impairment: str = "none",
    repeat: int = 0,
    windows: tuple[FaultWindow, ...] = (),
) -> CellSeries:
    """A series.ndjson record of a recorded bandwidth log, under the cell identity given."""
    return CellSeries(
        test_id=f"scenarios/test_{scenario}.py::test_{scenario}[{pair}-{impairment}]",
        scenario=scenario,
        pair=pair,
        workload=workload,
        impairment=impairment,
        mode="replicated",
        repeat=repeat,
        interval_s=1.0,
        bw_mib_s=tuple(sum_job_logs(job_logs(prefix))),
        windows=windows,
    )
