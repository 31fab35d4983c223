"""The pair's monthly cost from catalog prices (list prices with source and date in catalog.yaml)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.sizing.catalog.loader import load_builtin_catalog
from harness.sizing.model.cost import HOURS_PER_MONTH, pair_cost
from harness.sizing.model.predict import predict
from harness.sizing.scenario.question import Scenario, SizedNode, VolumeSpec, Workload

CATALOG = load_builtin_catalog()
WORKLOAD = Workload("randwrite", 4096, numjobs=8)


def pair(instance: str, volume: VolumeSpec, placement: str = "same-az", peers: int = 1) -> Scenario:
    return Scenario(primary=SizedNode(instance, volume), workload=WORKLOAD, placement=placement, peers=peers)


def test_pair_cost_adds_instances_and_volumes_at_730_hours() -> None:
    m5 = CATALOG.instance("m5.large").price
    gp3 = CATALOG.volume("gp3").price
    assert m5 is not None and gp3 is not None
    cost = pair_cost(pair("m5.large", VolumeSpec("gp3", 500, 6000, 250)), CATALOG, 0.0)
    assert cost is not None
    per_volume = 500 * gp3.usd_per_gib_month + 3000 * gp3.usd_per_iops_month + 125 * gp3.usd_per_mib_s_month
    assert cost.instances_month == pytest.approx(2 * m5.usd_per_hour * HOURS_PER_MONTH)
    assert cost.volumes_month == pytest.approx(2 * per_volume)
    assert cost.transfer_per_gb == 0


@given(peers=st.integers(min_value=1, max_value=4), gib=st.integers(min_value=1, max_value=16384))
@settings(max_examples=25, deadline=None)
def test_cost_grows_with_every_peer_and_gib(peers: int, gib: int) -> None:
    cost = pair_cost(pair("t3.medium", VolumeSpec("gp2", gib), "cross-az", peers), CATALOG, 1e6)
    smaller = pair_cost(pair("t3.medium", VolumeSpec("gp2", gib), "cross-az", 1), CATALOG, 1e6)
    assert cost is not None and smaller is not None
    assert cost.pair_month >= smaller.pair_month
    # inter-AZ data is charged out of one zone and into the other, once per peer
    assert cost.transfer_per_gb == pytest.approx(2 * 0.01 * peers)
    assert cost.transfer_month_at_rate == pytest.approx(cost.transfer_per_gb * 1e6 * HOURS_PER_MONTH * 3600 / 1e9)


def test_prediction_carries_the_cost_and_json_prints_it() -> None:
    prediction = predict(pair("t3.medium", VolumeSpec("gp2", 100), "cross-az"), CATALOG)
    assert prediction.cost is not None
    data = prediction.as_dict()["cost_usd"]
    assert data["pair_month"] == pytest.approx(prediction.cost.pair_month)
    assert data["region"] == "us-east-1"
