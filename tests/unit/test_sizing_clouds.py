"""Google Cloud and Azure rules in the sizing model (figures: catalog-gcp.yaml, catalog-azure.yaml)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.sizing.catalog import load_builtin_catalog
from harness.sizing.clouds import placement_for
from harness.sizing.inputs import MIB, NodeSpec, Scenario, VolumeSpec, Workload
from harness.sizing.model import predict
from harness.sizing.volumes import volume_performance

CATALOG = load_builtin_catalog()
N2 = CATALOG.instance("n2-standard-4")
D4 = CATALOG.instance("Standard_D4s_v5")
WORKLOAD = Workload("randwrite", 4096, numjobs=8)


def test_pd_balanced_grows_per_gib() -> None:
    # pd-balanced: 3,000 IOPS + 6 per GiB, 140 MiB/s + 0.28 per GiB.
    perf = volume_performance("pd-balanced", CATALOG.volume("pd-balanced"), VolumeSpec("pd-balanced", 100), N2)
    assert perf.baseline_iops == 3600
    assert perf.baseline_bytes_s == pytest.approx(168 * MIB)


@given(a=st.integers(min_value=10, max_value=65536), b=st.integers(min_value=10, max_value=65536))
@settings(max_examples=40, deadline=None)
def test_pd_scaling_is_monotonic_and_capped(a: int, b: int) -> None:
    small, large = sorted((a, b))
    for name in ("pd-balanced", "pd-ssd"):
        disk = CATALOG.volume(name)
        lo = volume_performance(name, disk, VolumeSpec(name, small), N2)
        hi = volume_performance(name, disk, VolumeSpec(name, large), N2)
        assert lo.baseline_iops <= hi.baseline_iops <= disk.max_iops  # type: ignore[union-attr]
        assert lo.baseline_bytes_s is not None and hi.baseline_bytes_s is not None
        assert lo.baseline_bytes_s <= hi.baseline_bytes_s <= disk.max_mib_s * MIB  # type: ignore[union-attr]


def test_local_ssd_counts_whole_devices() -> None:
    disk = CATALOG.volume("local-ssd")
    one = volume_performance("local-ssd", disk, VolumeSpec("local-ssd", 375), N2)
    two = volume_performance("local-ssd", disk, VolumeSpec("local-ssd", 376), N2)
    assert two.baseline_iops == 2 * one.baseline_iops
    assert two.read_iops == 2 * (one.read_iops or 0)
    with pytest.raises(ConfigError, match="at most 24 devices"):
        volume_performance("local-ssd", disk, VolumeSpec("local-ssd", 25 * 375), N2)


def test_premium_ssd_tier_and_credit_burst() -> None:
    disk = CATALOG.volume("premium-ssd")
    p10 = volume_performance("premium-ssd", disk, VolumeSpec("premium-ssd", 100), D4)
    assert (p10.baseline_iops, p10.burst_iops) == (500, 3500)
    assert p10.burst_seconds() == pytest.approx(30 * 60)  # the bucket lasts 30 min at full burst
    p30 = volume_performance("premium-ssd", disk, VolumeSpec("premium-ssd", 600), D4)
    assert (p30.baseline_iops, p30.burst_iops) == (5000, None)
    with pytest.raises(ConfigError, match="at most"):
        volume_performance("premium-ssd", disk, VolumeSpec("premium-ssd", 40000), D4)


def test_azure_cost_is_by_tier_and_zones_cost_nothing() -> None:
    scenario = Scenario(
        primary=NodeSpec("Standard_D4s_v5", VolumeSpec("premium-ssd", 200)),
        workload=WORKLOAD,
        placement="cross-zone",
        duration_s=120,
    )
    prediction = predict(scenario, CATALOG)
    assert prediction.cost is not None
    assert prediction.cost.volumes_month == pytest.approx(2 * 38.02)  # P15, 256 GiB tier
    assert prediction.cost.transfer_per_gb == 0
    assert prediction.rtt_s == pytest.approx(0.002)  # "less than 2 ms" between Azure zones


def test_gcp_pair_has_vm_caps_and_no_ec2_single_flow_limit() -> None:
    scenario = Scenario(primary=NodeSpec("n2-standard-4", VolumeSpec("pd-balanced", 100)), workload=WORKLOAD)
    prediction = predict(scenario, CATALOG)
    keys = {limit.key for limit in prediction.limits}
    assert "primary.ebs.iops" in keys and "replication.flow" not in keys
    assert prediction.limit("primary.ebs.iops").label == "primary n2-standard-4 VM disk cap IOPS"


def test_qualified_names_and_cloud_mismatch() -> None:
    assert CATALOG.instance("gcp/n2-standard-4") is N2
    with pytest.raises(ConfigError):
        CATALOG.instance("azure/n2-standard-4")
    assert placement_for("cross-az", "gcp") == "gcp/cross-zone"
    assert placement_for("cross-az", "aws") == "cross-az"
    mixed = Scenario(primary=NodeSpec("n2-standard-4", VolumeSpec("gp3", 100)), workload=WORKLOAD)
    with pytest.raises(ConfigError, match="is on aws, but the instance is on gcp"):
        predict(mixed, CATALOG)


def test_azure_provisioned_disks_follow_microsofts_limits() -> None:
    # Microsoft states MB/s (10^6 B/s); the catalog holds MiB/s.  Premium SSD v2: 125 MB/s free,
    # 0.25 MB/s per IOPS, 2,000 MB/s from 8,000 IOPS; Ultra Disk: 1,000 IOPS per GiB.
    v2 = CATALOG.volume("premium-ssd-v2")
    default = volume_performance("premium-ssd-v2", v2, VolumeSpec("premium-ssd-v2", 100), D4)
    assert (default.baseline_iops, default.baseline_bytes_s) == (3000, pytest.approx(125e6, rel=1e-4))
    top = volume_performance("premium-ssd-v2", v2, VolumeSpec("premium-ssd-v2", 160, 8000, 1907.35), D4)
    assert top.baseline_bytes_s == pytest.approx(2000e6, rel=1e-4)
    with pytest.raises(ConfigError, match="allows up to"):
        volume_performance("premium-ssd-v2", v2, VolumeSpec("premium-ssd-v2", 160, 4000, 1000), D4)
    ultra = CATALOG.volume("ultra-disk")
    small = volume_performance("ultra-disk", ultra, VolumeSpec("ultra-disk", 4, 4000, 900), D4)
    assert small.baseline_iops == 4000
    with pytest.raises(ConfigError, match="IOPS"):
        volume_performance("ultra-disk", ultra, VolumeSpec("ultra-disk", 4, 4001, 900), D4)
