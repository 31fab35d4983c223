"""Google's N4, C3 and C4 machine series in the sizing catalog: which volumes each takes, their
per-VM disk caps, and the recorded copies their figures are held to.

The copies are harness/sizing/catalog/sources/: gcp-machine-types.txt (``gcloud compute
machine-types list`` as Cyclenerd/google-cloud-pricing-cost-calculator exports it, commit
8c32d22df47862c1e729bee12cd763f25cbfdec9), gcp-disk-types.txt (``gcloud compute disk-types
list``, same commit), gcp-{n2,n4,c3,c4}-bandwidth.txt (Cyclenerd/google-cloud-compute-machine-types
instances/series/*.sql at 6df0dc708acd757a325024ea0508e1b32850533d) and
karpenter-gcp-pricing-2026.txt (cloudpilot-ai/karpenter-provider-gcp initial-prices.json at
373e2baa9665c864d29ae686dfadbc0dd97d8bb8).  The per-VM Persistent Disk caps of C3 are gcpdiag's
c-family.json; the per-VM Hyperdisk caps are entered unverified (no stored copy of Google's table).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.sizing.catalog.audit import audit
from harness.sizing.catalog.loader import load_builtin_catalog
from harness.sizing.catalog.recorded import Claim, load_recorded, parse_recorded, resolve
from harness.sizing.model.predict import predict
from harness.sizing.scenario.question import Scenario, SizedNode, VolumeSpec, Workload
from harness.sizing.volumes.rules import volume_performance

CATALOG = load_builtin_catalog()
COPIES = load_recorded()
NEW = [
    *(f"n4-standard-{n}" for n in (2, 4, 8, 16)),
    *(f"c3-standard-{n}" for n in (4, 8, 22)),
    *(f"c4-standard-{n}" for n in (2, 4, 8, 16)),
]
WORKLOAD = Workload("randwrite", 4096, numjobs=8, iodepth=16)


def _alone(instance: str, volume: VolumeSpec) -> Scenario:
    return Scenario(primary=SizedNode(instance, volume), workload=WORKLOAD, replicate=False)


@pytest.mark.parametrize("name", NEW)
def test_each_new_type_s_size_network_and_price_are_checked_against_a_copy(name: str) -> None:
    items = {item.where: item for item in audit(CATALOG, COPIES)}
    for field in ("vcpu", "memory_gib", "network.baseline_gbps", "price.usd_per_hour"):
        item = items[f"instance_types.{name}.{field}"]
        assert item.status == "checked", (field, item)


def test_the_c4_bandwidth_patterns_run_in_order() -> None:
    # sources/gcp-c4-bandwidth.txt: '-4%' (10 Gbps) also matches c4-standard-48, which the later
    # '-48%' line sets to 34; c4-standard-8 and -16 are 23
    (copy,) = [c for c in COPIES if c.reference == "cyclenerd-gcp-c4"]
    names = ["instance_types.c4-standard-4", "instance_types.c4-standard-48", "instance_types.c4-standard-8"]
    got = {claim.entry: claim.value for claim in resolve(copy.claims, names)}
    assert got == {names[0]: 10, names[1]: 34, names[2]: 23}


@given(st.lists(st.sampled_from(["c4-%-4%", "c4-%-48%", "c4-standard-%", "n4-%"]), min_size=1, max_size=6))
def test_the_last_matching_pattern_holds(patterns: list[str]) -> None:
    claims = [
        Claim(f"instance_types.{p}", "network.baseline_gbps", float(i), "r", str(i)) for i, p in enumerate(patterns)
    ]
    resolved = {c.entry: c.value for c in resolve(claims, ["instance_types.c4-standard-48"])}
    matching = [i for i, p in enumerate(patterns) if p != "n4-%"]
    assert resolved == ({"instance_types.c4-standard-48": float(matching[-1])} if matching else {})


def test_a_wrong_c4_bandwidth_is_flagged_with_the_sql_line() -> None:
    entry = CATALOG.instance_types["c4-standard-8"]
    wrong = entry.model_copy(update={"network": entry.network.model_copy(update={"baseline_gbps": 10.0})})
    catalog = CATALOG.model_copy(update={"instance_types": {**CATALOG.instance_types, "c4-standard-8": wrong}})
    flagged = [item for item in audit(catalog, COPIES) if item.status == "flagged"]
    assert [item.where for item in flagged] == ["instance_types.c4-standard-8.network.baseline_gbps"]
    assert "LIKE 'c4-%-8%'" in flagged[0].disagreeing[0].line


def test_gcloud_rows_state_vcpus_memory_and_disk_sizes() -> None:
    text = "\n".join(
        [
            "# reference: g",
            "# url: https://example.org/g",
            "# read: 2026-12-07",
            "# reader: gcloud-csv",
            "1: NAME;CPUS;SHARED_CPU;MEMORY_GB;DEPRECATED;ZONE",
            "160: c4-standard-2;2;False;7.00;;",
            "2: hyperdisk-balanced;4GB-65536GB;Hyperdisk Balanced Persistent Disk",
        ]
    )
    claims = {(c.entry, c.field): c.value for c in parse_recorded(text, "g").claims}
    assert claims == {
        ("instance_types.c4-standard-2", "vcpu"): 2,
        ("instance_types.c4-standard-2", "memory_gib"): 7,
        ("volume_types.hyperdisk-balanced", "min_size_gib"): 4,
        ("volume_types.hyperdisk-balanced", "max_size_gib"): 65536,
    }


@pytest.mark.parametrize("instance", ["n4-standard-4", "c4-standard-8"])
@pytest.mark.parametrize("disk", ["pd-balanced", "pd-ssd"])
def test_n4_and_c4_take_no_persistent_disk(instance: str, disk: str) -> None:
    with pytest.raises(ConfigError, match=f"{disk} is offered only on .* not on {instance[:2].upper()}"):
        volume_performance(disk, CATALOG.volume(disk), VolumeSpec(disk, 100), CATALOG.instance(instance))


def test_local_ssd_is_the_n2_table_not_offered_on_n4() -> None:
    with pytest.raises(ConfigError, match="local-ssd is offered only on the N1, N2, N2D"):
        volume_performance(
            "local-ssd", CATALOG.volume("local-ssd"), VolumeSpec("local-ssd", 375), CATALOG.instance("n4-standard-4")
        )


def test_c3_takes_both_and_caps_each_by_its_own_per_vm_limit() -> None:
    """c3-standard-22: Persistent Disk 20,000 write IOPS (pd-balanced), 25,000 (pd-ssd), 800 MiB/s
    (gcpdiag 'C3 VMs', 22 vCPUs); Hyperdisk 120,000 IOPS, 1,800 MiB/s (15,099 Mbps)."""
    big = {
        "pd-balanced": VolumeSpec("pd-balanced", 65536),
        "pd-ssd": VolumeSpec("pd-ssd", 65536),
        "hyperdisk-balanced": VolumeSpec("hyperdisk-balanced", 4096, 160000, 2400),
    }
    caps = {}
    for name, spec in big.items():
        prediction = predict(_alone("c3-standard-22", spec), CATALOG)
        caps[name] = (
            prediction.limit("primary.ebs.iops").iops,
            prediction.limit("primary.ebs.throughput").bw / 2**20,
        )
    assert caps["pd-balanced"] == pytest.approx((20000, 800), rel=1e-3)
    assert caps["pd-ssd"] == pytest.approx((25000, 800), rel=1e-3)
    assert caps["hyperdisk-balanced"] == pytest.approx((120000, 1800), rel=1e-3)


def test_a_hyperdisk_above_the_vm_s_cap_is_held_to_it() -> None:
    # n4-standard-2: one Hyperdisk Balanced at 20,000 IOPS on a 15,000 IOPS VM
    prediction = predict(_alone("n4-standard-2", VolumeSpec("hyperdisk-balanced", 100, 20000, 300)), CATALOG)
    assert prediction.iops == pytest.approx(15000)
    assert prediction.binding.key == "primary.ebs.iops"
