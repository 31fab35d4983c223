"""series.ndjson records and fio bandwidth logs, on real fio 3.33 logs (tests/data/fio/bwlog)."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.fio import parse_fio_json
from harness.runfiles.samples import cell_key
from harness.runfiles.series import (
    BwLogEntry,
    CellSeries,
    FaultWindow,
    bw_log_files,
    parse_bw_log,
    read_bw_logs,
    read_series,
    sum_job_logs,
)

from .plot_inputs import BWLOG, bw_series, job_logs, stop_windows

MIB = 1024.0  # fio logs KiB/s


# --------------------------------------------------------------------------------------------
# Parsing one job's log


def test_parse_reads_time_value_and_direction_of_a_real_log() -> None:
    entries = parse_bw_log((BWLOG / "write-1m-nj2_bw.1.log").read_text())
    assert entries == (
        BwLogEntry(999, 1044500.0, 1),
        BwLogEntry(2000, 1054720.0, 1),
        BwLogEntry(3000, 1063975.0, 1),
        BwLogEntry(3999, 984024.0, 1),
    )


def test_parse_keeps_both_directions_of_a_mixed_log() -> None:
    entries = parse_bw_log((BWLOG / "randrw-nj1_bw.1.log").read_text())
    assert [(e.time_ms, e.ddir) for e in entries] == [(1000, 0), (1000, 1), (2000, 0), (2000, 1)]


def test_parse_accepts_extra_columns_and_blank_lines() -> None:
    # Newer fio appends a priority column; only the first three columns matter.
    assert parse_bw_log("1000, 2048, 1, 0, 0, 0\n\n2000, 1024, 1, 0, 0, 0\n") == (
        BwLogEntry(1000, 2048.0, 1),
        BwLogEntry(2000, 1024.0, 1),
    )


@pytest.mark.parametrize(
    "text",
    ["1000, 2048\n", "x, 2048, 1, 0, 0\n", "1000, lots, 1, 0, 0\n", "-5, 10, 1, 0, 0\n", "1000, nan, 1, 0, 0\n"],
)
def test_parse_rejects_malformed_lines_with_file_and_line(text: str) -> None:
    with pytest.raises(ConfigError, match=r"job_bw\.1\.log:2: "):
        parse_bw_log("1000, 10, 1, 0, 0\n" + text, where="job_bw.1.log")


# --------------------------------------------------------------------------------------------
# Summing the jobs


def test_two_jobs_are_summed_per_window_and_match_fios_own_bandwidth() -> None:
    series = sum_job_logs(job_logs("write-1m-nj2"))
    assert series == pytest.approx([(1044500 + 1042432) / MIB, 2110464 / MIB, 2126925 / MIB, 1968048 / MIB])
    # The same run's JSON: its bandwidth over the whole run is the mean of the windows.
    result = parse_fio_json((BWLOG / "write-1m-nj2.json").read_text())
    fio_mib_s = result.write.bytes_per_s / 2**20
    assert sum(series) / len(series) == pytest.approx(fio_mib_s, rel=0.02)


def test_last_window_only_some_jobs_logged_is_dropped() -> None:
    jobs = job_logs("tail-nj2")
    assert [len(j) for j in jobs] == [3, 4]  # the recorded race: job 1 missed its last window
    series = sum_job_logs(jobs)
    assert len(series) == 3
    assert series[-1] == pytest.approx((940032 + 941997) / MIB)


def test_windows_without_io_are_zero_not_missing() -> None:
    # One 1 MiB write per job every 2.5 s: fio wrote lines for windows 0, 2 and 5 only.
    series = sum_job_logs(job_logs("thinktime-nj2"))
    assert len(series) == 6
    assert [v > 0 for v in series] == [True, False, True, False, False, True]


def test_a_stopped_fio_shows_as_zeros_then_resumes() -> None:
    series = sum_job_logs(job_logs("stop-nj2"))
    window = stop_windows()[0]
    assert len(series) == 8
    zeros = [i for i, v in enumerate(series) if v == 0]
    assert zeros == [2, 3]
    # The stall fio logged overlaps the stop as measured outside fio (clocks differ by fio's
    # start-up and the log's window phase, so overlap is what can be asserted, not equality).
    assert zeros[0] < window.end_s and zeros[-1] + 1 > window.start_s
    assert all(v > 500 for i, v in enumerate(series) if i not in zeros)


def test_direction_is_selected() -> None:
    jobs = job_logs("randrw-nj1")
    assert sum_job_logs(jobs, ddir="write") == pytest.approx([488448 / MIB, 493952 / MIB])
    assert sum_job_logs(jobs, ddir="read") == pytest.approx([486336 / MIB, 498432 / MIB])
    assert sum_job_logs(jobs, ddir="trim") == []


def test_four_jobs_and_a_ramp() -> None:
    four = sum_job_logs(job_logs("randwrite-4k-nj4"))
    assert four == pytest.approx([(27796 + 27224 + 26464 + 26368) / MIB, (28908 + 30192 + 26368 + 26492) / MIB])
    # After a 2 s ramp the log clock restarts: 3 s of measured running, 3 windows.
    assert len(sum_job_logs(job_logs("ramp-nj2"))) == 3


def test_interval_other_than_one_second() -> None:
    entries = [BwLogEntry(500, 1024, 1), BwLogEntry(1000, 2048, 1), BwLogEntry(2000, 1024, 1)]
    assert sum_job_logs([entries], interval_s=0.5) == [1.0, 2.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="interval_s"):
        sum_job_logs([entries], interval_s=0)


def test_no_entries_is_an_empty_series() -> None:
    assert sum_job_logs([]) == []
    assert sum_job_logs([(), ()]) == []


@given(
    st.lists(
        st.dictionaries(st.integers(0, 30), st.integers(0, 10**7), min_size=1, max_size=20),
        min_size=1,
        max_size=6,
    ),
    st.integers(-40, 40),
)
def test_sum_is_per_window_total_over_jobs(jobs: list[dict[int, int]], jitter_ms: int) -> None:
    """Lines stamped near their window's end land in that window; gaps count 0."""
    logs = [[BwLogEntry((i + 1) * 1000 + jitter_ms, kib, 1) for i, kib in sorted(job.items())] for job in jobs]
    series = sum_job_logs(logs)
    last = max(max(job) for job in jobs)
    complete = all(last in job for job in jobs)
    assert len(series) == (last + 1 if complete else last)
    for i, value in enumerate(series):
        assert value == pytest.approx(sum(job.get(i, 0) for job in jobs) / MIB)


# --------------------------------------------------------------------------------------------
# Finding and reading the job files


def test_job_files_are_found_in_job_order(tmp_path: Path) -> None:
    for n in (1, 2, 10):
        (tmp_path / f"w[1]_bw.{n}.log").write_text(f"1000, {n * 1024}, 1, 0, 0\n")
    (tmp_path / "w[1]_lat.1.log").write_text("")  # another log type of the same job
    (tmp_path / "w[1]x_bw.1.log").write_text("")  # another prefix
    assert [p.name for p in bw_log_files(tmp_path, "w[1]")] == ["w[1]_bw.1.log", "w[1]_bw.2.log", "w[1]_bw.10.log"]
    assert read_bw_logs(tmp_path, "w[1]") == [13.0]


def test_read_bw_logs_of_a_real_run_and_missing_logs() -> None:
    assert len(read_bw_logs(BWLOG, "randwrite-4k-nj4")) == 2
    with pytest.raises(ConfigError, match="no fio bandwidth logs nope_bw"):
        read_bw_logs(BWLOG, "nope")


# --------------------------------------------------------------------------------------------
# series.ndjson


def test_series_key_is_the_samples_cell_key() -> None:
    s = bw_series("write-1m-nj2", impairment="crash")
    assert s.key == cell_key(
        {
            "scenario": "failover_integrity",
            "pair": "single-az",
            "mode": "replicated",
            "workload": "write-1m-nj2-qd4",
            "impairment": "crash",
        }
    )
    assert s.duration_s == 4.0


def test_read_series_round_trips_and_names_bad_lines(tmp_path: Path) -> None:
    records = [bw_series("write-1m-nj2"), bw_series("stop-nj2", windows=stop_windows())]
    path = tmp_path / "series.ndjson"
    path.write_text("".join(r.to_json() + "\n" for r in records) + "\n")
    assert read_series(path) == records
    path.write_text(records[0].to_json() + "\n" + '{"test_id": "t"}\n')
    with pytest.raises(ConfigError, match=r"series\.ndjson:2: not a series record"):
        read_series(path)
    with pytest.raises(ConfigError, match="no series file"):
        read_series(tmp_path / "absent.ndjson")


def test_from_json_of_a_record_as_the_runner_writes_it() -> None:
    line = json.dumps(
        {
            "test_id": "t",
            "scenario": "latency_sweep",
            "pair": "multi-az",
            "workload": "randwrite-4k-nj1-qd1",
            "impairment": None,
            "mode": "replicated",
            "repeat": 2,
            "interval_s": 1.0,
            "bw_mib_s": [1.4, 1.3],
            "windows": [{"start_s": -1.5, "end_s": 9, "label": "rtt5ms"}],
        }
    )
    s = CellSeries.from_json(line)
    assert s.impairment == "none" and s.repeat == 2 and s.bw_mib_s == (1.4, 1.3)
    assert s.windows == (FaultWindow(-1.5, 9.0, "rtt5ms"),)


@pytest.mark.parametrize(
    "change",
    [{"interval_s": 0.0}, {"interval_s": math.nan}, {"bw_mib_s": (1.0, -1.0)}, {"bw_mib_s": (math.inf,)}],
)
def test_invalid_series_is_refused(change: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        replace(bw_series("write-1m-nj2"), **change)  # type: ignore[arg-type]


def test_window_must_not_end_before_it_starts() -> None:
    with pytest.raises(ValueError, match="start_s <= end_s"):
        FaultWindow(5.0, 4.0, "crash")


finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)


@given(
    st.text(min_size=1, max_size=20),
    st.lists(st.floats(min_value=0, max_value=1e6), max_size=20),
    st.lists(st.tuples(finite, finite, st.text(max_size=10)), max_size=3),
    st.floats(min_value=0.001, max_value=60),
    st.integers(0, 9),
)
def test_json_round_trip(
    name: str, values: list[float], spans: list[tuple[float, float, str]], interval: float, repeat: int
) -> None:
    s = CellSeries(
        test_id=name,
        scenario=name,
        pair="p",
        workload="w",
        impairment="none",
        mode="replicated",
        repeat=repeat,
        interval_s=interval,
        bw_mib_s=tuple(values),
        windows=tuple(FaultWindow(min(a, b), max(a, b), label) for a, b, label in spans),
    )
    assert CellSeries.from_json(s.to_json()) == s


def test_framed_logs_from_one_round_trip_equal_the_files_read_separately(tmp_path: Path) -> None:
    # What bw_logs_script prints on a node (run here by the local shell over real fio logs)
    # must give the same series as reading the files one by one.
    import shutil
    import subprocess

    from harness.runfiles.series import bw_logs_script, series_from_framed_logs

    for log in sorted(BWLOG.glob("randwrite-4k-nj4_bw.*.log")):
        shutil.copy(log, tmp_path / log.name)
    printed = subprocess.run(
        ["sh", "-c", bw_logs_script(str(tmp_path / "randwrite-4k-nj4"))], capture_output=True, text=True, check=True
    ).stdout
    assert printed.count("==> ") == 4
    assert series_from_framed_logs(printed) == read_bw_logs(tmp_path, "randwrite-4k-nj4")
    assert series_from_framed_logs("") == []
