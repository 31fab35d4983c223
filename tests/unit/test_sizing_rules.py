"""Published rules the sizing figures must follow, each checked where a wrong figure once came out.

io2's throughput rule is AWS's (EBS Provisioned IOPS SSD page, cited in the catalog): 0.256 MiB/s
per provisioned IOPS with 256 KiB I/O, at most 4,000 MiB/s, that maximum reached from 16,000 IOPS.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cli.sizing import add_arguments, run
from harness.errors import ConfigError
from harness.sizing.catalog.loader import Catalog, load_builtin_catalog
from harness.sizing.model.cost import pair_cost
from harness.sizing.scenario.question import Scenario, SizedNode, VolumeSpec, Workload
from harness.sizing.volumes.rules import volume_performance
from harness.units import MIB

CATALOG: Catalog = load_builtin_catalog()


def sizing_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="harness sizing")
    add_arguments(parser)
    assert run(parser.parse_args([*argv, "--json"])) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


@given(st.integers(min_value=100, max_value=256000))
def test_io2_throughput_is_a_256_kib_io_per_provisioned_iops_up_to_4000_mib_s(iops: int) -> None:
    size = max(4, -(-iops // 1000))
    perf = volume_performance(
        "io2", CATALOG.volume("io2"), VolumeSpec("io2", size, iops), CATALOG.instance("m6i.8xlarge")
    )
    assert perf.baseline_bytes_s == pytest.approx(min(4000.0, iops * 256 / 1024) * MIB)


def test_io2_reaches_its_maximum_from_16000_iops() -> None:
    io2 = CATALOG.volume("io2")
    m6i = CATALOG.instance("m6i.8xlarge")
    at = {
        iops: volume_performance("io2", io2, VolumeSpec("io2", 100, iops), m6i).baseline_bytes_s
        for iops in (15000, 16000, 64000)
    }
    assert at == {15000: 3750 * MIB, 16000: 4000 * MIB, 64000: 4000 * MIB}


def test_io2_2000_iops_streams_500_mib_s_of_1_mib_writes(capsys: pytest.CaptureFixture[str]) -> None:
    data = sizing_json(
        capsys,
        *("--instance-type", "m6i.8xlarge", "--volume", "io2:1000GiB:2000"),
        *("--workload", "write:1m:numjobs=8:iodepth=4", "--no-replication"),
    )
    assert data["bw_mib_s"] == pytest.approx(500.0)


@pytest.mark.parametrize(
    ("instance", "volume", "per_gb"), [("n2-standard-4", "pd-ssd", 0.01), ("m5.large", "gp3", 0.02)]
)
def test_cross_zone_transfer_is_billed_on_each_side_the_provider_bills(
    instance: str, volume: str, per_gb: float
) -> None:
    # Google bills a VM-to-VM GB as the sender's egress only (no ingress charge); AWS bills it
    # out of one zone and into the other.
    scenario = Scenario(
        primary=SizedNode(instance, VolumeSpec(volume, 100)),
        workload=Workload("randwrite", 4096, numjobs=8),
        placement="cross-az",
    )
    cost = pair_cost(scenario, CATALOG, 1e6)
    assert cost is not None
    assert cost.transfer_per_gb == pytest.approx(per_gb)


@pytest.mark.parametrize(
    ("replication", "covered"),
    [(("--no-replication",), "for the node"), ((), "for the pair"), (("--peers", "2"), "for the 3 nodes")],
)
def test_cost_line_names_the_nodes_it_prices(
    capsys: pytest.CaptureFixture[str], replication: tuple[str, ...], covered: str
) -> None:
    parser = argparse.ArgumentParser(prog="harness sizing")
    add_arguments(parser)
    argv = ["--instance-type", "m5.large", "--volume", "gp3:100GiB", "--workload", "randwrite:4k", *replication]
    assert run(parser.parse_args(argv)) == 0
    cost = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("Cost:"))
    assert f"/month {covered} at on-demand" in cost


def test_t2_is_a_current_generation_type_and_c4_a_previous_one() -> None:
    generations = {
        name: CATALOG.instance(name).generation for name in ("t2.micro", "t2.medium", "t2.2xlarge", "c4.large")
    }
    assert generations == {
        "t2.micro": "current",
        "t2.medium": "current",
        "t2.2xlarge": "current",
        "c4.large": "previous",
    }


def test_hyperdisk_balanced_is_refused_on_n2_naming_the_families_that_take_it() -> None:
    spec = VolumeSpec("hyperdisk-balanced", 100)
    with pytest.raises(ConfigError, match=r"hyperdisk-balanced is offered only on the .*\bC3\b.*\bN4\b.* not on N2"):
        volume_performance(
            "hyperdisk-balanced", CATALOG.volume("hyperdisk-balanced"), spec, CATALOG.instance("n2-standard-4")
        )


def test_hyperdisk_balanced_on_n2_is_refused_by_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="harness sizing")
    add_arguments(parser)
    argv = ["--instance-type", "n2-standard-4", "--volume", "hyperdisk-balanced:100GiB", "--workload", "randwrite:4k"]
    assert run(parser.parse_args(argv)) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("machine families, not on N2") and "\n" not in err


def test_an_rtt_placement_says_replication_transfer_is_left_out(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="harness sizing")
    add_arguments(parser)
    argv = [
        "--instance-type",
        "m5.large",
        "--volume",
        "gp3:100GiB",
        "--workload",
        "randwrite:4k",
        "--placement",
        "rtt=30ms",
    ]
    assert run(parser.parse_args(argv)) == 0
    cost = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("Cost:"))
    assert "replication transfer to the peer at rtt=30ms is left out: a round-trip time names no region" in cost
    data = sizing_json(capsys, *argv)
    assert data["cost_usd"]["transfer_priced"] is False
    assert sizing_json(capsys, *argv[:-2], "--placement", "cross-az")["cost_usd"]["transfer_priced"] is True


def test_c4_network_is_the_baseline_and_burst_aws_publishes() -> None:
    published = {
        "large": (0.625, 1.2),
        "xlarge": (1.25, 2.8),
        "2xlarge": (2.5, 10),
        "4xlarge": (5, 10),
        "8xlarge": (10, None),
    }
    for size, figures in published.items():
        network = CATALOG.instance(f"c4.{size}").network
        assert (network.baseline_gbps, network.burst_gbps, network.estimate) == (*figures, False), size
    assert "m4.10xlarge" not in CATALOG.instance("c4.8xlarge").network.note
