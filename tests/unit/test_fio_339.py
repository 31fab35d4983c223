"""fio 3.39 (Debian 13's), recorded in the lab's trixie root (tests/data/fio/fio339/README.md):
its version line, a plain report and the harness's own command lines (verify write and
verify-only phases, steady state, status-interval stream with bandwidth logs) read through the
harness's parsers with the numbers fio wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.fio.command import parse_fio_version_output
from harness.fio.report import parse_fio_json, parse_fio_json_stream, parse_last_fio_report
from harness.probes.toolversions import assess, parse_tool_version
from harness.runfiles.series import parse_bw_log, sum_job_logs

DATA = Path(__file__).resolve().parents[1] / "data" / "fio" / "fio339"


def _text(name: str) -> str:
    return (DATA / name).read_text()


def _job(name: str) -> dict[str, Any]:
    job: dict[str, Any] = json.loads(_text(name))["jobs"][0]
    return job


def test_version_line_is_read_by_both_readers() -> None:
    text = _text("fio-3.39-version.txt")
    assert parse_fio_version_output(text).raw == "fio-3.39"
    found = parse_tool_version("fio", text)
    assert found.version is not None and found.version.parts == (3, 39)
    assert assess(found) == ("ok", "fio-3.39")


def test_plain_buffered_report() -> None:
    name = "fio-3.39-randwrite-4k-buffered.json"
    job = _job(name)
    result = parse_fio_json(_text(name))
    assert result.fio_version == "fio-3.39"
    write = result.only_group.write
    assert write.iops == job["write"]["iops"] > 0
    assert write.total_ios == job["write"]["total_ios"] == 4096  # 16 MiB in 4 KiB blocks
    assert write.bytes_per_s == job["write"]["bw_bytes"]
    # the chroot had no /sys: no disk_util section, read as none rather than refused
    assert result.disk_util == ()


def test_harness_verify_phases() -> None:
    write = parse_fio_json(_text("fio-3.39-harness-verify-write-phase.json"))
    verify = parse_fio_json(_text("fio-3.39-harness-verify-only-phase.json"))
    assert write.only_group.write.total_ios == 1000 == verify.only_group.read.total_ios
    assert verify.ok and write.ok
    # the verify-only pass replays the write phase's offsets: fio reports them as writes of no time
    assert verify.only_group.write.runtime_ms == 0


def test_harness_steady_state_is_attained() -> None:
    name = "fio-3.39-harness-steadystate.json"
    ss = parse_fio_json(_text(name)).only_group.steady_state
    raw = _job(name)["steadystate"]
    assert ss is not None and ss.attained
    assert (ss.setting, ss.duration_s) == (raw["ss"], 2)


def test_status_interval_stream_and_its_last_report() -> None:
    text = _text("fio-3.39-harness-bwlog-nj2-status.json")
    reports = parse_fio_json_stream(text)
    ios = [r.only_group.write.total_ios or 0 for r in reports]
    assert len(reports) == 4 and ios == sorted(ios) and ios[0] > 0
    last = parse_last_fio_report(text)
    final = json.loads(text[text.rindex('{\n  "fio version"') :])["jobs"][0]
    assert last.only_group.write.total_ios == final["write"]["total_ios"] == ios[-1]
    assert last.only_group.job_entries == 1  # group_reporting=1 folds the two jobs


def test_bandwidth_logs_sum_per_window() -> None:
    logs = [parse_bw_log(_text(f"bwlog_bw.{n}.log"), where=f"bwlog_bw.{n}.log") for n in (1, 2)]
    assert [[e.time_ms for e in log] for log in logs] == [[1000, 2000, 3000]] * 2
    assert {e.ddir for log in logs for e in log} == {1}
    series = sum_job_logs(logs, interval_s=1.0)
    assert series == [(a.kib_s + b.kib_s) / 1024 for a, b in zip(*logs, strict=True)]
