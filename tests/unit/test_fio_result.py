"""Parsing fio output of every supported shape into FioResult (harness.fio.result).

The data files under tests/data/fio are real fio outputs (see the README there); the expected
numbers below are read off those files, so a parser change that moves any of them is a bug.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import HarnessError
from harness.fio import (
    FioOutputError,
    FioResult,
    FioVersion,
    parse_fio_json,
    parse_fio_json_stream,
    parse_fio_terse,
    parse_last_fio_report,
)

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"


def _read(name: str) -> str:
    return (DATA / name).read_text()


def _json(name: str) -> FioResult:
    return parse_fio_json(_read(name))


# -- fio 2.x (real outputs from public repositories) ------------------------------------------


def test_fio_2_1_4_perfkitbenchmarker_sample() -> None:
    result = _json("fio-2.1.4-pkb-sample.json")
    assert result.fio_version == "fio-2.1.4"
    assert result.version == FioVersion(2, 1, 4)
    assert result.timestamp is None
    assert result.job_entries == 5
    assert [g.groupid for g in result.groups] == [0, 1, 2, 3, 4]
    assert [g.jobname for g in result.groups] == [
        "sequential_write",
        "sequential_read",
        "random_write_test",
        "random_read_test",
        "random_read_test_parallel",
    ]
    assert result.error == 0 and result.ok
    seq_write = result.group(0).write
    # io_bytes and bw are KiB in fio <= 2.20; latencies are µs (no _ns keys).
    assert seq_write.bytes_per_s == 68118 * 1024 == 69752832
    assert seq_write.io_bytes == 361984 * 1024
    assert seq_write.iops == 133
    assert seq_write.runtime_ms == 5314
    assert seq_write.total_ios is None  # total_ios arrived in 2.1.14
    assert seq_write.clat_mean_us == 477734.84
    assert seq_write.clat_p50_us == 444416
    assert seq_write.clat_p90_us == 610304
    assert seq_write.clat_p99_us == 823296
    assert seq_write.clat_p99_9_us == 872448
    assert seq_write.lat_mean_us == 478737.47
    # 17 real percentiles; the three duplicate "0.00": 0 padding keys are dropped.
    assert len(seq_write.clat_percentiles_us) == 17
    assert seq_write.clat_percentiles_us[0] == (1.0, 387072)
    assert seq_write.clat_percentile_us(99.99) == 872448
    assert seq_write.percentiles_exact
    assert not result.group(0).read.active
    assert result.group(0).read.clat_mean_us is None
    assert result.group(1).read.bytes_per_s == 129836 * 1024
    assert result.group(1).read.clat_p99_us == 473088
    assert result.group(2).write.bytes_per_s == 6443 * 1024
    assert result.group(2).write.clat_mean_us == 587.02
    assert result.group(4).read.iops == 323
    assert result.disk_util[0].name == "sdb" and result.disk_util[0].util_percent == 97.54


def test_fio_2_1_4_sample_has_several_groups_that_are_never_summed() -> None:
    result = _json("fio-2.1.4-pkb-sample.json")
    with pytest.raises(FioOutputError, match="5 groups"):
        _ = result.write
    with pytest.raises(FioOutputError, match="no group 7"):
        result.group(7)
    assert all(g.job_entries == 1 for g in result.groups)


def test_fio_2_2_10_powersj_perfkit_doc_sample() -> None:
    result = _json("fio-2.2.10-powersj-perfkit.json")
    assert result.version == FioVersion(2, 2, 10)
    assert result.timestamp == 1510963172
    assert result.job_entries == 1
    write = result.write
    assert write.bytes_per_s == 62499 * 1024 == 63998976
    assert write.io_bytes == 37500272 * 1024
    assert write.iops == 15624.70
    assert write.runtime_ms == 600008
    assert write.total_ios == 9374944
    assert write.clat_mean_us == 8151.19
    assert (write.clat_p50_us, write.clat_p90_us, write.clat_p99_us, write.clat_p99_9_us) == (
        8160,
        8256,
        8640,
        14912,
    )
    assert write.lat_mean_us == 8182.26
    assert not result.read.active and result.read.total_ios == 0
    assert result.disk_util[0].name == "xvda" and result.disk_util[0].util_percent == 100.0


# -- fio 3.33 (recorded on this machine, commands in tests/data/fio/README.md) ---------------


def test_randwrite_4k_libaio() -> None:
    result = _json("fio-3.33-randwrite-4k-libaio.json")
    assert result.fio_version == "fio-3.33"
    assert result.timestamp == 1795254002
    assert result.timestamp_ms == 1795254002675
    assert result.job_entries == 1
    group = result.only_group
    assert (group.groupid, group.jobname, group.job_entries, group.error) == (0, "randwrite-4k", 1, 0)
    write = result.write
    assert write.bytes_per_s == 41232247
    assert write.io_bytes == 82505728
    assert write.iops == 10065.967016
    assert write.runtime_ms == 2001
    assert write.total_ios == 20142
    assert write.clat_mean_us == pytest.approx(77.905471056)
    assert (write.clat_p50_us, write.clat_p90_us, write.clat_p99_us, write.clat_p99_9_us) == (
        62.72,
        121.344,
        234.496,
        667.648,
    )
    assert write.clat_percentile_us(99.99) == 4685.824
    assert write.lat_mean_us == pytest.approx(98.537788998)
    assert not result.read.active
    assert result.read.clat_mean_us is None and result.read.clat_p99_us is None
    assert result.disk_util[0].name == "vda" and result.disk_util[0].util_percent == 71.271788


def test_write_1m_libaio() -> None:
    write = _json("fio-3.33-write-1m-libaio.json").write
    assert write.bytes_per_s == 1911308525
    assert write.io_bytes == 3828350976
    assert write.iops == 1822.765851
    assert write.total_ios == 3651
    assert write.clat_p99_us == 3915.776
    assert write.clat_mean_us == pytest.approx(2130.287932073)


def test_numjobs_2_with_group_reporting_is_one_entry() -> None:
    result = _json("fio-3.33-psync-nj2-grouped.json")
    assert result.job_entries == 1
    write = result.write
    assert write.bytes_per_s == 71433339
    assert write.total_ios == 34897
    assert write.clat_p99_us == 321.536
    assert write.percentiles_exact


def test_numjobs_2_without_group_reporting_is_summed_per_group() -> None:
    result = _json("fio-3.33-psync-nj2-ungrouped.json")
    assert result.job_entries == 2
    group = result.only_group
    assert group.job_entries == 2
    write = group.write
    assert write.bytes_per_s == 30051662 + 29932307
    assert write.iops == pytest.approx(7336.831584 + 7307.692308)
    assert write.io_bytes == 60133376 + 59924480
    assert write.total_ios == 14681 + 14630
    assert write.runtime_ms == 2002  # the longest job
    expected_mean = (135369.170424 * 14681 + 135944.442925 * 14630) / (14681 + 14630) / 1000
    assert write.clat_mean_us == pytest.approx(expected_mean)
    # Percentiles cannot be merged exactly: the per-job maximum is an upper bound.
    assert not write.percentiles_exact
    assert write.clat_p99_us == 325.632
    assert write.clat_p99_9_us == 1417.216


def test_randrw_bsrange_reports_both_directions() -> None:
    result = _json("fio-3.33-randrw-bsrange-libaio.json")
    assert result.read.bytes_per_s == 240929135
    assert result.read.total_ios == 34624
    assert result.read.clat_p99_us == 329.728
    assert result.write.bytes_per_s == 103967984
    assert result.write.total_ios == 14840
    assert result.write.clat_p50_us == 150.528


def test_stonewall_phases_are_separate_groups() -> None:
    result = _json("fio-3.33-two-groups-stonewall.json")
    assert result.job_entries == 2
    assert [(g.groupid, g.jobname) for g in result.groups] == [(0, "seqwrite"), (1, "randread")]
    assert result.group(0).write.bytes_per_s == 553815208
    assert not result.group(0).read.active
    assert result.group(1).read.bytes_per_s == 73891676
    assert not result.group(1).write.active
    with pytest.raises(FioOutputError, match="sequential phases must not be summed"):
        _ = result.read


def test_verify_in_one_job() -> None:
    result = _json("fio-3.33-verify-crc32c.json")
    assert result.ok
    assert result.write.io_bytes == result.read.io_bytes == 16 * 1024**2
    assert result.write.total_ios == result.read.total_ios == 4096
    assert result.write.bytes_per_s == 130055937
    assert result.read.bytes_per_s == 124275674


def test_verify_write_phase_counts_acknowledged_writes() -> None:
    result = _json("fio-3.33-verify-write-phase.json")
    assert result.ok
    assert result.write.total_ios == 2000
    assert result.write.io_bytes == 8192000
    assert result.write.bytes_per_s == 124121212
    assert not result.read.active


def test_verify_only_phase_reads_back_and_reports_phantom_writes() -> None:
    result = _json("fio-3.33-verify-only-phase.json")
    assert result.ok
    assert result.read.total_ios == 2000
    assert result.read.bytes_per_s == 151703703
    assert result.read.clat_p99_us == 187.392
    phantom = result.write
    assert phantom.total_ios == 2000 and phantom.io_bytes == 8192000
    assert phantom.runtime_ms == 0 and phantom.bytes_per_s == 0
    # fio 3.33 printed a 116 ms clat mean for the phantom writes; it is not a measurement.
    assert phantom.clat_mean_us is None and phantom.clat_p99_us is None and phantom.lat_mean_us is None


def test_verify_only_after_lost_writes_reports_eilseq() -> None:
    result = _json("fio-3.33-verify-only-lost-writes.json")
    assert result.error == 84  # EILSEQ: "verify: bad magic header 0, wanted acca ..."
    assert not result.ok
    assert result.only_group.error == 84
    assert result.read.total_ios == 4
    assert result.read.io_bytes == 16384


def test_error_writing_to_dev_full() -> None:
    result = _json("fio-3.33-error-devfull.json")
    assert result.error == 28  # ENOSPC
    assert not result.ok
    assert result.write.io_bytes == 0
    assert result.write.total_ios == 1
    assert result.write.clat_mean_us is None
    assert result.disk_util == ()


def test_stdout_with_note_before_the_json() -> None:
    text = _read("fio-3.33-stdout-with-note.txt")
    assert text.startswith("note: both iodepth >= 1 and synchronous I/O engine")
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    result = parse_fio_json(text)
    assert result.write.bytes_per_s == 59930085
    assert result.write.total_ios == 14646
    assert result.write.clat_p99_us == 124.416


def test_steady_state_section() -> None:
    result = _json("fio-3.33-steadystate.json")
    ss = result.only_group.steady_state
    assert ss is not None
    assert ss.setting == "iops:20.000000%"
    assert ss.duration_s == 2
    assert ss.attained
    assert ss.criterion == "2.059120%"
    assert result.write.bytes_per_s == 54209971
    assert result.write.runtime_ms == 3896
    assert _json("fio-3.33-randwrite-4k-libaio.json").only_group.steady_state is None


# -- status-interval streams ------------------------------------------------------------------


def test_status_interval_stream_gives_every_report() -> None:
    text = _read("fio-3.33-status-interval.json")
    reports = parse_fio_json_stream(text)
    assert len(reports) == 4
    assert [r.write.total_ios for r in reports] == [10369, 20713, 33505, 35092]
    assert [r.timestamp_ms for r in reports] == [1795254016993, 1795254017993, 1795254018993, 1795254019147]
    assert [r.write.runtime_ms for r in reports] == [896, 1896, 2895, 3001]
    last = parse_last_fio_report(text)
    assert last == reports[-1]
    assert last.write.bytes_per_s == 47896311


def test_single_document_parser_refuses_a_stream() -> None:
    with pytest.raises(FioOutputError, match="several JSON documents"):
        parse_fio_json(_read("fio-3.33-status-interval.json"))


def test_stream_with_truncated_tail_as_after_a_crash() -> None:
    text = _read("fio-3.33-status-interval.json")
    starts = [i for i in range(len(text)) if text.startswith("{\n", i) and (i == 0 or text[i - 1] == "\n")]
    assert len(starts) == 4
    cut = text[: starts[3] + (len(text) - starts[3]) // 2]
    with pytest.raises(FioOutputError, match="truncated"):
        parse_fio_json_stream(cut)
    survivors = parse_fio_json_stream(cut, allow_truncated_tail=True)
    assert [r.write.total_ios for r in survivors] == [10369, 20713, 33505]
    assert parse_last_fio_report(cut, allow_truncated_tail=True).write.total_ios == 33505


def test_stream_with_a_damaged_middle_document_is_an_error() -> None:
    text = _read("fio-3.33-status-interval.json")
    damaged = text.replace('"total_ios" : 20713', '"total_ios" : 20713 garbage', 1)
    assert damaged != text
    with pytest.raises(FioOutputError, match="invalid"):
        parse_fio_json_stream(damaged, allow_truncated_tail=True)


def test_a_stream_whose_only_document_is_truncated_is_an_error() -> None:
    text = _read("fio-3.33-randwrite-4k-libaio.json")
    with pytest.raises(FioOutputError, match="truncated"):
        parse_fio_json_stream(text[: len(text) // 2], allow_truncated_tail=True)


# -- terse ------------------------------------------------------------------------------------


def test_terse_v3_line() -> None:
    result = parse_fio_terse(_read("fio-3.33-terse.txt"))
    assert result.fio_version == "fio-3.33"
    group = result.only_group
    assert (group.jobname, group.groupid, group.error) == ("terse", 0, 0)
    write = result.write
    assert write.io_bytes == 85168 * 1024
    assert write.bytes_per_s == 42562 * 1024
    assert write.iops == 10640
    assert write.runtime_ms == 2001
    assert write.total_ios is None
    assert write.clat_mean_us == 66.894811
    assert (write.clat_p50_us, write.clat_p90_us, write.clat_p99_us, write.clat_p99_9_us) == (
        66,
        90,
        130,
        199,
    )
    assert write.lat_mean_us == 93.020093
    assert len(write.clat_percentiles_us) == 17
    assert not result.read.active and result.read.clat_mean_us is None


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("", "not fio terse version 3"),
        ("5;fio-3.33;x;0;0;" + ";".join(["0"] * 150), "not fio terse version 3"),
        ("3;fio-3.33;x;0;0;1;2;3", "need at least 87"),
        ("3;fio-3.33;x;0;0\n3;fio-3.33;y;0;0", "one line"),
        ("3;fio-3.33;x;zero;0;" + ";".join(["0"] * 120), "not integers"),
    ],
)
def test_terse_refuses_other_shapes(line: str, message: str) -> None:
    with pytest.raises(FioOutputError, match=message):
        parse_fio_terse(line)


def test_terse_refuses_a_broken_percentile_field() -> None:
    fields = _read("fio-3.33-terse.txt").strip().split(";")
    fields[58] = "99.0=12"
    with pytest.raises(FioOutputError, match="P%=VALUE"):
        parse_fio_terse(";".join(fields))
    fields[58] = "1.0%=abc"
    with pytest.raises(FioOutputError, match="bad percentile"):
        parse_fio_terse(";".join(fields))
    fields = _read("fio-3.33-terse.txt").strip().split(";")
    fields[47] = "fast"
    with pytest.raises(FioOutputError, match="field 47 is not a number"):
        parse_fio_terse(";".join(fields))


# -- bad output -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no JSON document"),
        ("fio: failed to open /dev/drbd9: No such file\n", "no JSON document"),
        ('{\n  "fio version" : "fio-3.33",\n  "jobs" : [\n    {\n      "jobname" : "x",', "truncated"),
        ('{\n  "jobs": [1, 2,, 3]\n}\n', "invalid"),
        ('{\n  "fio version": "fio-3.33"\n}\n', "no 'jobs' list"),
        ('{\n  "jobs": []\n}\n', "no 'jobs' list"),
        ('{\n  "jobs": [{"jobname": "x", "error": 0}]\n}\n', "groupid is missing"),
        ('{\n  "jobs": [{"jobname": "x", "groupid": 0, "error": 0}]\n}\n', "no read, write or mixed"),
        ('{\n  "jobs": ["x"]\n}\n', "should be an object"),
    ],
)
def test_bad_output_raises_fio_output_error(text: str, message: str) -> None:
    with pytest.raises(FioOutputError, match=message):
        parse_fio_json(text)


def test_truncated_real_file_is_reported_as_truncated() -> None:
    text = _read("fio-3.33-write-1m-libaio.json")
    for cut in (len(text) // 3, len(text) // 2, len(text) - 3):
        with pytest.raises(FioOutputError, match=r"truncated at line \d+ column \d+"):
            parse_fio_json(text[:cut])


def test_fio_output_error_is_a_harness_error() -> None:
    # caught by the command line as any HarnessError: one line, and exit 5 (what the node
    # printed could not be read), not a traceback
    with pytest.raises(HarnessError, match=r"^no JSON document in fio output: 'not json'$") as info:
        parse_fio_json("not json")
    assert isinstance(info.value, FioOutputError)
    assert info.value.exit_code == 5


def test_non_numeric_fields_are_named() -> None:
    doc = _doc([_job(0, write=_dir3(1024, 1000, 10, 5.0, {99.0: 7.0}))])
    doc["jobs"][0]["write"]["bw_bytes"] = "fast"
    with pytest.raises(FioOutputError, match=r"jobs\[0\]\.write\.bw_bytes is missing or not a number"):
        parse_fio_json(json.dumps(doc))


def test_unified_rw_reporting_mixed_section() -> None:
    job = _job(0, write=None)
    del job["read"]
    job["mixed"] = _dir3(2048, 1000, 20, 3.0, {50.0: 2.0})
    result = parse_fio_json(json.dumps(_doc([job])))
    mixed = result.only_group.mixed
    assert mixed is not None and mixed.bytes_per_s == 2048 * 1024
    assert not result.read.active and not result.write.active


def test_unparsable_version_is_kept_as_text() -> None:
    doc = _doc([_job(0, write=_dir3(1024, 1000, 10, 5.0, {}))], version="fio-custom")
    result = parse_fio_json(json.dumps(doc))
    assert result.fio_version == "fio-custom" and result.version is None


# -- properties: 2.x and 3.x unit conventions agree ------------------------------------------


def _dir3(bw_kib: int, runtime_ms: int, ios: int, clat_us: float, pct_us: dict[float, float]) -> dict[str, Any]:
    """A fio >= 3.2 direction: bytes, bw_bytes, *_ns latencies."""
    io_kib = bw_kib * runtime_ms // 1000
    return {
        "io_bytes": io_kib * 1024,
        "io_kbytes": io_kib,
        "bw_bytes": bw_kib * 1024,
        "bw": bw_kib,
        "iops": ios * 1000 / runtime_ms if runtime_ms else 0.0,
        "runtime": runtime_ms,
        "total_ios": ios,
        "clat_ns": {
            "min": 0,
            "max": 0,
            "mean": clat_us * 1000,
            "stddev": 0.0,
            "N": ios,
            "percentile": {f"{p:f}": round(v * 1000) for p, v in pct_us.items()},
        },
        "lat_ns": {"min": 0, "max": 0, "mean": clat_us * 1000 + 500, "stddev": 0.0, "N": ios},
    }


def _dir2(bw_kib: int, runtime_ms: int, ios: int, clat_us: float, pct_us: dict[float, float]) -> dict[str, Any]:
    """A fio 2.2.x direction: io_bytes in KiB, bw KiB/s, latencies in µs."""
    return {
        "io_bytes": bw_kib * runtime_ms // 1000,
        "bw": bw_kib,
        "iops": ios * 1000 / runtime_ms if runtime_ms else 0.0,
        "runtime": runtime_ms,
        "total_ios": ios,
        "clat": {
            "min": 0,
            "max": 0,
            "mean": clat_us,
            "stddev": 0.0,
            "percentile": {f"{p:f}": round(v * 1000) / 1000 for p, v in pct_us.items()},
        },
        "lat": {"min": 0, "max": 0, "mean": clat_us + 0.5, "stddev": 0.0},
    }


def _job(groupid: int, write: dict[str, Any] | None, name: str = "j") -> dict[str, Any]:
    idle = _dir3(0, 0, 0, 0.0, {})
    return {"jobname": name, "groupid": groupid, "error": 0, "read": idle, "write": write or idle}


def _doc(jobs: list[dict[str, Any]], version: str = "fio-3.33") -> dict[str, Any]:
    return {"fio version": version, "jobs": jobs}


def _with_padding(text: str) -> str:
    """fio <= 3.3 padded percentile maps with trailing duplicate "0.00": 0 keys."""

    def pad(match: re.Match[str]) -> str:
        entries = [match[1]] if match[1] else []
        return '"percentile": {' + ", ".join([*entries, '"0.00": 0', '"0.00": 0', '"0.00": 0']) + "}"

    return re.sub(r'"percentile": \{([^}]*)\}', pad, text)


directions = st.tuples(
    st.integers(1, 10**7),  # KiB/s
    st.integers(1, 10**6),  # runtime ms
    st.integers(1, 10**9),  # ios
    st.integers(1, 10**9).map(lambda ns: ns / 1000),  # clat mean µs
    st.dictionaries(st.sampled_from([1.0, 50.0, 90.0, 99.0, 99.9, 99.99]), st.integers(1, 10**9), max_size=6).map(
        lambda d: {p: ns / 1000 for p, ns in d.items()}
    ),
)


@given(directions)
def test_2x_and_3x_conventions_normalise_to_the_same_numbers(
    values: tuple[int, int, int, float, dict[float, float]],
) -> None:
    bw_kib, runtime_ms, ios, clat_us, pct_us = values
    new = parse_fio_json(json.dumps(_doc([_job(0, _dir3(*values))]))).write
    old_text = _with_padding(json.dumps(_doc([_job(0, _dir2(*values))], version="fio-2.2.8")))
    old = parse_fio_json(old_text).write
    assert new.bytes_per_s == old.bytes_per_s == bw_kib * 1024
    assert new.io_bytes == old.io_bytes == (bw_kib * runtime_ms // 1000) * 1024
    assert new.runtime_ms == old.runtime_ms == runtime_ms
    assert new.total_ios == old.total_ios == ios
    assert new.clat_mean_us == pytest.approx(clat_us) and old.clat_mean_us == pytest.approx(clat_us)
    assert new.lat_mean_us == pytest.approx(clat_us + 0.5) and old.lat_mean_us == pytest.approx(clat_us + 0.5)
    assert dict(new.clat_percentiles_us) == pytest.approx(pct_us)
    assert dict(old.clat_percentiles_us) == pytest.approx(pct_us)
    assert new.clat_p99_us == pct_us.get(99.0)


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 10**6), st.integers(1, 10**6)), min_size=1, max_size=8))
def test_entries_are_summed_within_a_groupid_and_never_across(entries: list[tuple[int, int, int]]) -> None:
    jobs = [_job(gid, _dir3(bw, 1000, ios, 10.0, {99.0: 20.0})) for gid, bw, ios in entries]
    result = parse_fio_json(json.dumps(_doc(jobs)))
    assert result.job_entries == len(entries)
    assert [g.groupid for g in result.groups] == list(dict.fromkeys(gid for gid, _, _ in entries))
    for group in result.groups:
        mine = [(bw, ios) for gid, bw, ios in entries if gid == group.groupid]
        assert group.job_entries == len(mine)
        assert group.write.bytes_per_s == sum(bw for bw, _ in mine) * 1024
        assert group.write.total_ios == sum(ios for _, ios in mine)
        assert group.write.percentiles_exact == (len(mine) == 1)


@given(st.lists(st.from_regex(r"\A[^{\n]{0,60}\Z"), max_size=5))
def test_leading_noise_is_ignored(noise: list[str]) -> None:
    text = _read("fio-3.33-randwrite-4k-libaio.json")
    noisy = "".join(line + "\n" for line in noise) + text
    assert parse_fio_json(noisy) == parse_fio_json(text)
