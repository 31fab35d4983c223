"""``harness sizing`` as other tools call it: options, JSON shape, search, errors and exit codes."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli.sizing import add_arguments, run
from harness.errors import ConfigError
from harness.sizing.answer.search import parse_requirement
from harness.sizing.scenario.notation import parse_placement, parse_volume, parse_workload

MIB = 1024**2


def sizing(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="harness sizing")
    add_arguments(parser)
    return run(parser.parse_args(list(argv)))


def sizing_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = sizing(*argv, "--json")
    out = capsys.readouterr().out
    return code, json.loads(out)


DATAKEEPER = ["--volume", "gp2:100GiB", "--workload", "randwrite:4k:numjobs=8", "--protocol", "C"]


def test_json_has_the_documented_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = sizing_json(capsys, "--instance-type", "t3.medium", "--placement", "cross-az", *DATAKEEPER)
    assert code == 0
    assert {"bw_mib_s", "iops", "latency_ms", "bottleneck", "limits"} <= set(data)
    assert data["bottleneck"] in data["limits"]
    for limit in data["limits"].values():
        assert isinstance(limit["bw_mib_s"], float)
        assert isinstance(limit["iops"], float)
    assert data["bw_mib_s"] == pytest.approx(data["iops"] * 4096 / MIB)
    assert data["latency_ms"] == pytest.approx(8 / data["iops"] * 1000)
    assert data["scenario"]["rtt_ms"] == pytest.approx(1.0)
    assert "primary gp2" in data["explanation"]


def test_t2_small_shares_its_128_mbit_baseline_with_ebs(capsys: pytest.CaptureFixture[str]) -> None:
    # t2.small: 0.128 Gbps baseline as AWS publishes it, not EBS-optimized, so the
    # primary's outbound link carries each 4 KiB write twice: 0.128e9 / 8 / (2 x 4096) IOPS.
    _, t2 = sizing_json(capsys, "--instance-type", "t2.small", "--placement", "cross-az", *DATAKEEPER)
    wire = 1500 / 1448  # MTU 1500, MSS 1448 (20 B IP + 20 B TCP + 12 B timestamps)
    assert t2["limits"]["primary.network.out"]["iops"] == pytest.approx(0.128e9 / 8 / (8192 * wire), rel=1e-4)
    _, t3 = sizing_json(capsys, "--instance-type", "t3.medium", "--placement", "cross-az", *DATAKEEPER)
    # t3.medium: 0.256 Gbps baseline and a dedicated EBS link, so the writes cross it once.
    assert t3["limits"]["primary.network.out"]["iops"] == pytest.approx(0.256e9 / 8 / (4096 * wire), rel=1e-4)
    assert "primary.ebs.iops" in t3["limits"]
    assert "primary.ebs.iops" not in t2["limits"]


def test_cross_az_lowers_the_latency_bound(capsys: pytest.CaptureFixture[str]) -> None:
    run = ("--duration", "2m")  # gp2's burst: at its 300 IOPS baseline the throttle alone binds
    _, same = sizing_json(capsys, "--instance-type", "t2.small", "--placement", "same-az", *DATAKEEPER, *run)
    _, cross = sizing_json(capsys, "--instance-type", "t2.small", "--placement", "cross-az", *DATAKEEPER, *run)
    assert cross["write_time_ms"] > same["write_time_ms"]
    assert cross["limits"]["latency"]["iops"] < same["limits"]["latency"]["iops"]
    assert cross["break_even_rtt_ms"] > 0


def test_provisioned_iops_volume(capsys: pytest.CaptureFixture[str]) -> None:
    _, data = sizing_json(
        capsys,
        "--instance-type",
        "m5.xlarge",
        "--volume",
        "io1:200GiB:8000",
        "--workload",
        "randwrite:16k:numjobs=4:iodepth=16",
        "--no-replication",
    )
    assert data["limits"]["primary.volume.iops"]["iops"] == pytest.approx(8000)
    assert not any(key.startswith(("peer.", "replication.")) for key in data["limits"])
    assert data["scenario"]["replication"] is False


def test_duration_turns_credits_into_phases(capsys: pytest.CaptureFixture[str]) -> None:
    _, data = sizing_json(capsys, "--instance-type", "t3.medium", *DATAKEEPER, "--duration", "60m")
    assert data["basis"] == "mean over run"
    assert len(data["phases"]) >= 2
    assert data["phases"][0]["iops"] == pytest.approx(3000)
    # gp2 100 GiB: 5.4 M credits / (3,000 - 300) IOPS = 2,000 s of burst.
    assert data["phases"][0]["end_s"] == pytest.approx(2000)
    assert data["sustained_iops"] == pytest.approx(300)


def test_explicit_rtt_placement(capsys: pytest.CaptureFixture[str]) -> None:
    _, data = sizing_json(capsys, "--instance-type", "m5.large", "--placement", "rtt=2ms", *DATAKEEPER)
    assert data["scenario"]["placement"] == "custom"
    assert data["scenario"]["rtt_ms"] == pytest.approx(2.0)


def test_table_output_names_the_binding_limit(capsys: pytest.CaptureFixture[str]) -> None:
    assert sizing("--instance-type", "t3.medium", "--placement", "cross-az", *DATAKEEPER, "--duration", "2m") == 0
    out = capsys.readouterr().out
    assert "Binding limit: primary gp2 IOPS" in out
    assert "<- binds" in out
    assert "headroom" in out
    assert "Estimated inputs" in out


def test_require_ranks_by_cost_when_prices_are_known(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = sizing_json(
        capsys,
        "--require",
        "40MB/s",
        "--volume",
        "io2:1000GiB:20000",
        "--workload",
        "randwrite:4k:numjobs=8:iodepth=4",
        "--placement",
        "cross-az",
    )
    assert code == 0
    matches = data["matches"]
    assert matches
    assert data["order"] == "cost"
    costs = [m["cost_usd"]["pair_month"] for m in matches]
    assert costs == sorted(costs)
    assert all(m["sustained_bw_mib_s"] * MIB >= 40e6 for m in matches)
    assert data["checked"] > len(matches)


def test_require_without_a_match_exits_1_and_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    code = sizing("--require", "40MB/s", "--volume", "gp3:100GiB", "--workload", "randwrite:4k:numjobs=8")
    out = capsys.readouterr().out
    assert code == 1
    assert "No instance type" in out
    assert "Closest" in out


def test_require_with_an_instance_type_checks_it(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = sizing_json(
        capsys, "--instance-type", "t3.medium", "--require", "3000iops", *DATAKEEPER, "--duration", "2m"
    )
    assert code == 0
    assert data["requirement"]["met"] is True
    code, data = sizing_json(capsys, "--instance-type", "t3.medium", "--require", "3000iops", *DATAKEEPER)
    assert code == 1  # the steady state is the 300 IOPS gp2 baseline
    assert data["requirement"]["met"] is False


def test_user_catalog_adds_an_onprem_type(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "dc.yaml"
    path.write_text(
        """\
schema_version: 1
volume_types:
  array-a:
    model: fixed
    network_attached: false
    io_unit_kib: 256
    iops: 20000
    mib_s: 800
    latency: {write_ms: 0.4, read_ms: 0.3}
    sources: [https://wiki.example.internal/array-a]
    as_of: 2024-01-10
instance_types:
  onprem.r740:
    family: onprem
    vcpu: 32
    memory_gib: 256
    nitro: false
    network: {label: "10GbE", baseline_gbps: 10}
    ebs: {optimized: false}
    sources: [https://wiki.example.internal/r740]
    as_of: 2024-01-10
""",
        encoding="utf-8",
    )
    code, data = sizing_json(
        capsys,
        "--catalog",
        str(path),
        "--instance-type",
        "onprem.r740",
        "--volume",
        "array-a:2000",
        "--placement",
        "rtt=0.2ms",
        "--workload",
        "randwrite:4k:numjobs=4:iodepth=8",
    )
    assert code == 0
    assert data["bottleneck"] == "primary.volume.iops"
    assert data["iops"] == pytest.approx(20000)
    # A local array is not reached over the NIC, so only replication uses the network.
    assert "peer.network.out" not in data["limits"]


def test_calibration_options_replace_catalog_values(capsys: pytest.CaptureFixture[str]) -> None:
    _, data = sizing_json(
        capsys,
        "--instance-type",
        "m5.large",
        *DATAKEEPER,
        "--local-write-latency",
        "5ms",
        "--local-iops",
        "900",
        "--path-rate",
        "100mbit",
    )
    assert data["scenario"]["calibrated"] is True
    assert data["limits"]["primary.local.iops"]["iops"] == pytest.approx(900)
    assert data["limits"]["replication.path"]["iops"] == pytest.approx(100e6 / 8 / 4096)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--instance-type", "m5.large", "--volume", "gp2", "--workload", "randwrite:4k"], "needs a size"),
        (["--instance-type", "m5.large", "--workload", "randwrite"], "RW:BS"),
        (["--instance-type", "m5.large", "--workload", "randwrite:4k:jobs=8"], "unknown option"),
        (["--instance-type", "m5.large", "--placement", "moon", "--workload", "write:1M"], "unknown placement"),
        (["--instance-type", "m5.lrage", "--workload", "write:1M"], "did you mean m5.large"),
        (["--workload", "write:1M"], "--instance-type is required"),
        (["--instance-type", "m5.large", "--workload", "write:1M", "--duration", "soon"], "--duration"),
        (["--instance-type", "m5.large", "--workload", "write:1M", "--require", "fast"], "--require"),
        (["--instance-type", "m5.large", "--volume", "io1:100GiB:9000", "--workload", "write:1M"], "50 IOPS/GiB"),
    ],
)
def test_bad_input_exits_2_with_a_clear_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert sizing(*argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert captured.out == ""


def test_parse_volume() -> None:
    assert parse_volume("gp2:100").size_gib == 100
    spec = parse_volume("gp3:1TiB:6000:500MiB/s")
    assert (spec.type, spec.size_gib, spec.iops, spec.mib_s) == ("gp3", 1024, 6000, 500)
    assert parse_volume("io1:200GiB:8000").iops == 8000
    assert parse_volume("instance-store").size_gib is None
    with pytest.raises(ConfigError):
        parse_volume("gp3:100GiB:many")
    with pytest.raises(ConfigError):
        parse_volume("a:b:c:d:e")


def test_parse_workload() -> None:
    workload = parse_workload("randwrite:4k:numjobs=8:iodepth=2")
    assert (workload.rw, workload.bs, workload.numjobs, workload.iodepth) == ("randwrite", 4096, 8, 2)
    assert parse_workload("randrw:16k:rwmixread=70").read_fraction == pytest.approx(0.7)
    with pytest.raises(ConfigError, match="twice"):
        parse_workload("write:4k:numjobs=1:numjobs=2")
    with pytest.raises(ConfigError, match="whole number"):
        parse_workload("write:4k:iodepth=deep")


def test_parse_requirement_and_placement() -> None:
    # "MB/s" is decimal bytes per second, as customers quote it.
    assert parse_requirement("40MB/s").value == pytest.approx(40e6)
    assert parse_requirement("40MiB/s").value == pytest.approx(40 * MIB)
    iops = parse_requirement("3000iops")
    assert (iops.kind, iops.value) == ("iops", 3000)
    name, rtt = parse_placement("rtt=1.5ms")
    assert name == "custom"
    assert rtt == pytest.approx(0.0015)
    assert parse_placement("cross-az") == ("cross-az", None)


def test_text_tells_the_credit_timeline(capsys: pytest.CaptureFixture[str]) -> None:
    assert sizing("--instance-type", "t3.medium", "--placement", "cross-az", *DATAKEEPER) == 0
    out = capsys.readouterr().out
    # gp2 100 GiB: 3,000 IOPS for 2,000 s (33 min), then the 300 IOPS baseline.
    assert "3,000 IOPS (11.7 MiB/s, bound by primary gp2 IOPS) for the first 33 min" in out
    assert "when the burst of primary gp2 IOPS and peer gp2 IOPS ends, 300 IOPS" in out
    assert "in the steady state" in out
