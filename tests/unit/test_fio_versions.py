"""fio 3.25 (Debian 11) and client/server mode (3.25, 3.33), recorded on the lab
(tests/data/fio/README.md): read like local reports, or refused with what they are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.fio.report import parse_fio_json
from harness.fio.result import FioOutputError
from harness.fio.terse import parse_fio_terse

DATA = Path(__file__).resolve().parents[1] / "data" / "fio"


def test_fio_3_25_json_reads_its_write_side() -> None:
    text = (DATA / "fio-3.25-randwrite-4k-libaio.json").read_text()
    job = json.loads(text)["jobs"][0]
    result = parse_fio_json(text)
    assert result.fio_version == "fio-3.25" == (DATA / "fio-3.25-version.txt").read_text().strip()
    assert result.groups[0].write.iops == job["write"]["iops"] > 0
    assert result.groups[0].write.bytes_per_s == job["write"]["bw_bytes"]


def test_fio_3_25_terse_reads() -> None:
    result = parse_fio_terse((DATA / "fio-3.25-terse.txt").read_text())
    assert result.groups[0].write.iops > 0


@pytest.mark.parametrize("version", ["3.25", "3.33"])
def test_one_server_client_report_reads_like_a_local_one(version: str) -> None:
    text = (DATA / f"fio-{version}-client-one-server.json").read_text()
    (entry,) = json.loads(text)["client_stats"]
    assert "jobs" not in json.loads(text)
    result = parse_fio_json(text)
    assert result.fio_version == f"fio-{version}"
    assert result.groups[0].jobname == entry["jobname"] == "randwrite-4k"
    assert result.groups[0].write.iops == entry["write"]["iops"] > 0


def test_two_server_client_report_is_refused_naming_the_servers() -> None:
    text = (DATA / "fio-3.33-client-two-servers.txt").read_text()
    with pytest.raises(FioOutputError) as info:
        parse_fio_json(text)
    message = str(info.value)
    assert message.startswith("fio JSON from client/server mode with 2 servers (10.213.0.12:8765, 10.213.0.13:8765)")
    assert "'jobs'" not in message


def test_the_harness_command_lines_run_on_fio_3_25() -> None:
    # verify write phase, verify-only phase and steady state, as build_fio_argv writes them
    write = parse_fio_json((DATA / "fio-3.25-harness-verify-write-phase.json").read_text())
    verify = parse_fio_json((DATA / "fio-3.25-harness-verify-only-phase.json").read_text())
    steady = parse_fio_json((DATA / "fio-3.25-harness-steadystate.json").read_text())
    assert {r.fio_version for r in (write, verify, steady)} == {"fio-3.25"}
    assert write.groups[0].write.total_ios == verify.groups[0].read.total_ios == 1000
    assert verify.groups[0].error == 0
    assert steady.groups[0].steady_state is not None and steady.groups[0].steady_state.attained


def test_public_fio_3_28_without_latencies() -> None:
    # gtod_reduce=1 (converged-computing/metrics-operator, tests/data/fio/public/SOURCES.md):
    # rates and counts are real, every latency has N = 0 and must not be read as 0 us
    result = parse_fio_json((DATA / "public" / "fio-3.28-gtod-reduce-metrics-operator.json").read_text())
    group = result.groups[0]
    assert result.fio_version == "fio-3.28" and result.disk_util == ()
    assert (group.read.iops, group.write.iops) == (170075.741182, 56839.645098)
    assert (group.read.total_ios, group.write.total_ios) == (785920, 262656)
    assert group.write.clat_mean_us is None and group.write.lat_mean_us is None
    assert group.write.clat_percentiles_us == ()


def test_public_fio_3_16_total_latency_percentiles_are_not_taken_for_completion_latency() -> None:
    # lat_percentiles=1 (microsoft/superbenchmark, tests/data/fio/public/SOURCES.md): fio 3.16
    # prints percentiles of the *total* latency under lat_ns; the parser's are clat's, so none
    result = parse_fio_json((DATA / "public" / "fio-3.16-randrw-lat-percentiles-superbenchmark.json").read_text())
    group = result.groups[0]
    assert result.fio_version == "fio-3.16"
    assert (group.read.iops, group.write.iops) == (85138.890741, 85066.128925)
    assert group.read.clat_mean_us == 1444476.063469 / 1000 and group.read.lat_mean_us == 1446562.147113 / 1000
    assert group.read.clat_percentiles_us == () and group.write.clat_percentiles_us == ()
    assert [(d.name, d.util_percent) for d in result.disk_util] == [("nvme0n1", 99.840351)]
