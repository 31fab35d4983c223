"""Google Cloud and Azure rules in the sizing model (figures: catalog-gcp.yaml, catalog-azure.yaml)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.sizing.catalog.clouds import placement_for
from harness.sizing.catalog.gcp_disks import GcpLocalSsd
from harness.sizing.catalog.loader import load_builtin_catalog
from harness.sizing.model.predict import predict
from harness.sizing.model.prediction import Prediction
from harness.sizing.scenario.question import Scenario, SizedNode, VolumeSpec, Workload
from harness.sizing.volumes.performance import VolumePerformance
from harness.sizing.volumes.rules import volume_performance
from harness.units import MIB

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
        primary=SizedNode("Standard_D4s_v5", VolumeSpec("premium-ssd", 200)),
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
    scenario = Scenario(primary=SizedNode("n2-standard-4", VolumeSpec("pd-balanced", 100)), workload=WORKLOAD)
    prediction = predict(scenario, CATALOG)
    keys = {limit.key for limit in prediction.limits}
    assert "primary.ebs.iops" in keys and "replication.flow" not in keys
    assert prediction.limit("primary.ebs.iops").label == "primary n2-standard-4 VM disk cap IOPS"


def test_the_vm_iops_cap_depends_on_the_disk_type_where_google_says_so() -> None:
    # gcpdiag n-family.json: N2 at 16-31 vCPUs caps pd-balanced writes at 20,000 IOPS, pd-ssd at
    # 25,000; 2,000 GiB gives either disk more than its VM cap
    def cap(disk: str) -> float:
        scenario = Scenario(primary=SizedNode("n2-standard-16", VolumeSpec(disk, 2000)), workload=WORKLOAD)
        return predict(scenario, CATALOG).limit("primary.ebs.iops").baseline_iops

    assert (cap("pd-balanced"), cap("pd-ssd")) == (20000, 25000)


def test_qualified_names_and_cloud_mismatch() -> None:
    assert CATALOG.instance("gcp/n2-standard-4") is N2
    with pytest.raises(ConfigError):
        CATALOG.instance("azure/n2-standard-4")
    assert placement_for("cross-az", "gcp") == "gcp/cross-zone"
    assert placement_for("cross-az", "aws") == "cross-az"
    mixed = Scenario(primary=SizedNode("n2-standard-4", VolumeSpec("gp3", 100)), workload=WORKLOAD)
    with pytest.raises(ConfigError, match="is on aws, but the instance is on gcp"):
        predict(mixed, CATALOG)


def test_azure_provisioned_disks_follow_microsofts_limits() -> None:
    # Microsoft states MB/s (10^6 B/s); the catalog holds MiB/s.  Premium SSD v2: 125 MB/s free,
    # 0.25 MB/s per IOPS, 2,000 MB/s from 8,000 IOPS; Ultra Disk: 1,000 IOPS per GiB.
    v2 = CATALOG.volume("premium-ssd-v2")
    default = volume_performance("premium-ssd-v2", v2, VolumeSpec("premium-ssd-v2", 100), D4)
    assert default.baseline_iops == 3000
    assert default.baseline_bytes_s == pytest.approx(125e6, rel=1e-4)
    top = volume_performance("premium-ssd-v2", v2, VolumeSpec("premium-ssd-v2", 160, 8000, 1907.35), D4)
    assert top.baseline_bytes_s == pytest.approx(2000e6, rel=1e-4)
    with pytest.raises(ConfigError, match="allows up to"):
        volume_performance("premium-ssd-v2", v2, VolumeSpec("premium-ssd-v2", 160, 4000, 1000), D4)
    ultra = CATALOG.volume("ultra-disk")
    small = volume_performance("ultra-disk", ultra, VolumeSpec("ultra-disk", 4, 4000, 900), D4)
    assert small.baseline_iops == 4000
    with pytest.raises(ConfigError, match="IOPS"):
        volume_performance("ultra-disk", ultra, VolumeSpec("ultra-disk", 4, 4001, 900), D4)


# --- the clouds' own burst and egress rules, as they state them -----------------------------------

LARGE_WRITES = Workload("write", MIB, iodepth=32)


def test_premium_ssd_throughput_burst_spends_its_own_credits() -> None:
    # Microsoft accumulates bursting credits for IOPS and for MB/s separately, and a burst
    # consumes each on its own; P10: 100 MB/s, bursting to 170 MB/s for 30 min.
    p10 = volume_performance("premium-ssd", CATALOG.volume("premium-ssd"), VolumeSpec("premium-ssd", 128), D4)
    assert p10.throughput_bucket == "bytes"
    assert p10.bytes_bucket == pytest.approx((170 - 100) * 1e6 * 30 * 60)
    # 1 MiB writes at 170 MB/s spend 4 x 256 KiB I/O credits per write, far below the 3,500 IOPS
    # burst: drawn from the I/O bucket the MB/s burst lasted ~10 h; from its own, 30 min.
    scenario = Scenario(
        primary=SizedNode("Standard_D4s_v5", VolumeSpec("premium-ssd", 128)), workload=LARGE_WRITES, duration_s=3600
    )
    prediction = predict(scenario, CATALOG)
    first, last = prediction.phases[0], prediction.phases[-1]
    assert first.bw == pytest.approx(170e6) and first.end_s == pytest.approx(30 * 60)
    assert last.bw == pytest.approx(100e6) and last.bottleneck == "primary.volume.throughput"
    assert prediction.limit("primary.volume.throughput").burst_ends_s == pytest.approx(30 * 60)


@given(size=st.floats(min_value=4, max_value=512))
@settings(max_examples=30, deadline=None)
def test_premium_ssd_bursts_last_thirty_minutes_each(size: float) -> None:
    # P20 and smaller: each full bucket (IOPS, MB/s) lasts 30 min at its own full burst rate.
    perf = volume_performance("premium-ssd", CATALOG.volume("premium-ssd"), VolumeSpec("premium-ssd", size), D4)
    assert perf.burst_seconds() == pytest.approx(30 * 60)
    assert perf.bytes_bucket is not None and perf.burst_bytes_s is not None and perf.baseline_bytes_s is not None
    assert perf.bytes_bucket / (perf.burst_bytes_s - perf.baseline_bytes_s) == pytest.approx(30 * 60)


def _pair_on_pd(replicate: bool = True) -> Prediction:
    # n2-standard-8: 16 Gbps egress; pd-ssd 2,000 GiB: 1,200 MiB/s; VM disk cap 800 MiB/s.
    spec = SizedNode("n2-standard-8", VolumeSpec("pd-ssd", 2000))
    return predict(Scenario(primary=spec, workload=LARGE_WRITES, replicate=replicate), CATALOG)


def test_pd_writes_and_replication_split_the_gcp_egress_cap() -> None:
    # Google's Persistent Disk rule: PD writes cost ~1.16x their size in egress, and while they
    # compete with other egress 60 % of the VM's egress cap goes to them and 40 % to the rest.
    prediction = _pair_on_pd()
    egress = 16e9 / 8
    out, peer_in = prediction.limit("primary.network.out"), prediction.limit("peer.network.in")
    assert out.baseline_iops == pytest.approx(0.4 * peer_in.baseline_iops)  # same bytes per write
    assert prediction.limit("primary.network.disk_writes").baseline_iops * MIB * 1.16 == pytest.approx(0.6 * egress)
    # the peer's only egress is its own disk writes: the whole cap / 1.16
    assert prediction.limit("peer.network.disk_writes").baseline_iops * MIB * 1.16 == pytest.approx(egress)
    # 40 % of 16 Gbps (800 MB/s less TCP/IP headers) now binds before the 800 MiB/s VM disk cap
    assert prediction.bottleneck == "primary.network.out"
    assert prediction.iops * MIB < prediction.limit("primary.ebs.throughput").bw


def test_pd_writes_alone_get_the_whole_egress_cap() -> None:
    prediction = _pair_on_pd(replicate=False)
    keys = {limit.key for limit in prediction.limits}
    assert "primary.network.out" not in keys
    assert prediction.limit("primary.network.disk_writes").baseline_iops * MIB * 1.16 == pytest.approx(16e9 / 8)


def test_local_ssd_follows_googles_table_by_device_count() -> None:
    # Google, local-ssd (?authuser=1): "24 local SSD partitions for 9 TB ... 2.4 million read IOPS",
    # 16 partitions: 1.6 million; per device that is 100,000, not one device's 170,000.
    disk = CATALOG.volume("local-ssd")

    def perf(devices: int) -> VolumePerformance:
        return volume_performance("local-ssd", disk, VolumeSpec("local-ssd", devices * 375), N2)

    assert perf(24).read_iops == 2_400_000 and perf(16).read_iops == 1_600_000
    assert (perf(8).read_iops, perf(8).baseline_iops) == (perf(4).read_iops, perf(4).baseline_iops)
    nine = perf(9)  # no row for 9 devices: the next count Google lists
    assert nine.read_iops == 1_600_000 and "16 x 375 GiB" in nine.description


@given(a=st.integers(min_value=375, max_value=24 * 375), b=st.integers(min_value=375, max_value=24 * 375))
@settings(max_examples=40, deadline=None)
def test_local_ssd_never_beats_the_sum_of_single_devices(a: int, b: int) -> None:
    disk = CATALOG.volume("local-ssd")
    assert isinstance(disk, GcpLocalSsd)
    one = volume_performance("local-ssd", disk, VolumeSpec("local-ssd", 375), N2)
    small, large = sorted((a, b))
    lo = volume_performance("local-ssd", disk, VolumeSpec("local-ssd", small), N2)
    hi = volume_performance("local-ssd", disk, VolumeSpec("local-ssd", large), N2)
    assert lo.read_iops is not None and hi.read_iops is not None and one.read_iops is not None
    assert lo.read_iops <= hi.read_iops <= 2_400_000
    # never more than the devices it is billed as would give one by one
    assert hi.read_iops <= disk.row(math.ceil(large / 375 - 1e-9)).devices * one.read_iops


def test_vm_burst_wording_is_the_clouds_own() -> None:
    # Azure VM-level bursting is a credit bucket (30 min at full burst from a full bucket), not
    # AWS's "30 minutes at least once every 24 hours" on a dedicated EBS link.
    azure_pair = Scenario(primary=SizedNode("Standard_D4s_v5", VolumeSpec("premium-ssd", 128)), workload=WORKLOAD)
    azure = predict(azure_pair, CATALOG)
    detail = azure.limit("primary.ebs.throughput").detail
    assert "per 24 h" not in detail and "dedicated" not in detail and "burst credits" in detail
    aws = predict(Scenario(primary=SizedNode("m5.large", VolumeSpec("gp3", 100)), workload=WORKLOAD), CATALOG)
    assert "dedicated EBS link" in aws.limit("primary.ebs.throughput").detail
    assert "per 24 h" in aws.limit("primary.ebs.throughput").detail
