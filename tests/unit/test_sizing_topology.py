"""``harness sizing --topology``: a DRBD 9 resource of more nodes, each peer at its own placement,
a diskless tie-breaker holding no replica: its cost and rate follow the topology (the catalog's
list prices and placements, catalog.yaml)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.sizing.catalog.loader import load_builtin_catalog
from harness.sizing.model.cost import HOURS_PER_MONTH, pair_cost
from harness.sizing.model.predict import predict
from harness.sizing.scenario.question import Scenario, SizedNode, VolumeSpec, Workload
from harness.sizing.scenario.topology import MAX_PEERS, PeerSlot, parse_topology
from tests.unit.test_sizing_cli import sizing, sizing_json

CATALOG = load_builtin_catalog()
GP3 = VolumeSpec("gp3", 500, 6000, 250)
QD1 = Workload("randwrite", 4096)
LARGE = Workload("write", 1 << 20, iodepth=16)


def resource(topology: str, workload: Workload = QD1, volume: VolumeSpec = GP3) -> Scenario:
    return Scenario(primary=SizedNode("m5.large", volume), workload=workload, topology=parse_topology(topology))


def two_nodes(placement: str, workload: Workload = QD1, peers: int = 1) -> Scenario:
    return Scenario(primary=SizedNode("m5.large", GP3), workload=workload, placement=placement, peers=peers)


slots = st.builds(
    PeerSlot,
    placement=st.sampled_from(["same-az", "cross-az"]),
    diskless=st.booleans(),
)


@given(st.lists(slots, min_size=1, max_size=6).filter(lambda s: any(not slot.diskless for slot in s)))
@settings(max_examples=50, deadline=None)
def test_the_notation_reads_back_what_it_writes(peers: list[PeerSlot]) -> None:
    assert parse_topology(",".join(slot.describe() for slot in peers)) == tuple(peers)


def test_an_explicit_round_trip_is_a_peer_of_its_own() -> None:
    assert parse_topology("rtt=2ms,same-az:diskless") == (
        PeerSlot("custom", 0.002),
        PeerSlot("same-az", None, diskless=True),
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("same-az,,cross-az", "--topology 'same-az,,cross-az': peer 2 is empty; give PLACEMENT[:diskless] for each"),
        ("same-az:tiebreaker", "--topology 'same-az:tiebreaker': peer 1 'same-az:tiebreaker': after the placement only "
         "':diskless', ':A', ':B' or ':C' may follow"),
        (":diskless,same-az", "--topology ':diskless,same-az': peer 1 ':diskless' names no placement"),
        ("same-az:diskless", "--topology 'same-az:diskless': every peer is diskless; at least one must hold a replica"),
        (",".join(["same-az"] * (MAX_PEERS + 1)), f"32 peers; DRBD 9 allows at most {MAX_PEERS} per resource"),
        ("rtt=soon", "--topology 'rtt=soon': peer 1 'rtt=soon': "),
    ],
)  # fmt: skip
def test_a_bad_topology_is_one_line_naming_the_peer(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_topology(text)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_tiebreaker_costs_an_instance_but_no_volume_and_no_traffic() -> None:
    m5 = CATALOG.instance("m5.large").price
    assert m5 is not None
    pair = pair_cost(two_nodes("same-az"), CATALOG, 1e6)
    three = pair_cost(resource("same-az,cross-az:diskless"), CATALOG, 1e6)
    replica = pair_cost(resource("same-az,cross-az"), CATALOG, 1e6)
    assert pair is not None and three is not None and replica is not None
    assert three.instances_month == pytest.approx(pair.instances_month + m5.usd_per_hour * HOURS_PER_MONTH)
    assert three.volumes_month == pytest.approx(pair.volumes_month)
    assert three.transfer_per_gb == pair.transfer_per_gb == 0
    # a third replica across the AZ has its volume, and every GB written crosses out and in
    assert replica.volumes_month == pytest.approx(pair.volumes_month * 3 / 2)
    assert replica.transfer_per_gb == pytest.approx(2 * 0.01)


def test_a_write_waits_for_the_farthest_replica_and_never_for_a_tiebreaker() -> None:
    pair = predict(two_nodes("same-az"), CATALOG)
    across = predict(two_nodes("cross-az"), CATALOG)
    tiebreaker = predict(resource("same-az,cross-az:diskless"), CATALOG)
    replica = predict(resource("same-az,cross-az"), CATALOG)
    assert across.latency_s > pair.latency_s  # the placements differ, or the test proves nothing
    assert (tiebreaker.rtt_s, tiebreaker.latency_s, tiebreaker.iops) == (pair.rtt_s, pair.latency_s, pair.iops)
    assert (replica.rtt_s, replica.latency_s, replica.iops) == (across.rtt_s, across.latency_s, across.iops)


def test_the_primary_sends_each_write_to_every_replica_and_none_to_a_tiebreaker() -> None:
    def out(scenario: Scenario) -> float:
        return predict(scenario, CATALOG).limit("primary.network.out").iops

    assert out(resource("same-az,same-az:diskless", LARGE)) == pytest.approx(out(two_nodes("same-az", LARGE)))
    assert out(resource("same-az,same-az", LARGE)) == pytest.approx(out(two_nodes("same-az", LARGE)) / 2)
    notes = predict(resource("same-az,same-az,cross-az:diskless", LARGE), CATALOG).notes
    assert any(n.startswith("DRBD 9 with 3 peers, 1 of them a diskless tie-breaker: ") for n in notes)


@given(peers=st.integers(min_value=1, max_value=5), placement=st.sampled_from(["same-az", "cross-az"]))
@settings(max_examples=20, deadline=None)
def test_alike_peers_are_what_peers_says(peers: int, placement: str) -> None:
    alike = resource(",".join([placement] * peers), LARGE)
    counted = two_nodes(placement, LARGE, peers)
    a, b = predict(alike, CATALOG), predict(counted, CATALOG)
    assert (a.bw, a.latency_s, a.binding.key) == (b.bw, b.latency_s, b.binding.key)
    assert a.cost == b.cost


def test_the_command_line_answers_for_a_three_node_resource(capsys: pytest.CaptureFixture[str]) -> None:
    code, payload = sizing_json(
        capsys, "--instance-type", "m5.large", "--workload", "randwrite:4k", "--topology", "same-az,cross-az:diskless"
    )
    assert code == 0
    assert payload["scenario"]["peers"] == 2
    assert payload["scenario"]["topology"] == ["same-az", "cross-az:diskless"]
    assert payload["scenario"]["placement"] == "topology"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--placement", "cross-az"], "--topology names every peer and its placement: drop --placement"),
        (["--peers", "2"], "--topology names every peer and its placement: drop --peers"),
        (["--no-replication"], "--topology names peers: it cannot be given with --no-replication"),
    ],
)
def test_the_options_it_replaces_are_refused_with_it(
    capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    code = sizing("--instance-type", "m5.large", "--workload", "randwrite:4k", "--topology", "same-az", *extra)
    assert code == 2
    assert capsys.readouterr().err == f"harness sizing: error: {message}\n"


def test_an_unknown_placement_is_refused_before_any_search(capsys: pytest.CaptureFixture[str]) -> None:
    code = sizing("--workload", "randwrite:4k", "--require", "1MB/s", "--topology", "same-az,moon-az:diskless")
    err = capsys.readouterr().err
    assert code == 2 and "moon-az" in err and err.count("\n") == 1
