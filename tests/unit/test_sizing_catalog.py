"""The sizing catalog: published figures, provenance on every entry, strict loading, user overlays."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from pydantic import ValidationError

from harness.errors import ConfigError
from harness.sizing.catalog.instance_types import Ebs
from harness.sizing.catalog.loader import Catalog, load_builtin_catalog, load_catalog, parse_catalog_text


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_builtin_catalog()


REQUIRED_TYPES = [
    "t2.small",
    "t3.medium",
    "m5.large",
    "m5.xlarge",
    "c5.xlarge",
    "r5.large",
    "i3.8xlarge",
    # previous generations customers still run
    "c4.large",
    "c4.xlarge",
    "m4.large",
    "m4.xlarge",
    # current generation, so --require has something to find
    "m6i.large",
    "c6i.large",
    "r6i.large",
    "t3.large",
]


@pytest.mark.parametrize("name", REQUIRED_TYPES)
def test_required_instance_types_are_present(catalog: Catalog, name: str) -> None:
    assert name in catalog.instance_types


def test_required_volume_types_and_placements_are_present(catalog: Catalog) -> None:
    assert {"gp2", "gp3", "io1", "io2", "st1", "standard"} <= set(catalog.volume_types)
    assert {"same-az", "cross-az"} <= set(catalog.placements)


def test_every_entry_cites_resolvable_sources_and_a_date(catalog: Catalog) -> None:
    entries = [
        *catalog.instance_types.values(),
        *catalog.volume_types.values(),
        *catalog.placements.values(),
    ]
    for entry in entries:
        urls = catalog.source_urls(entry.sources)
        assert urls
        assert all(url.startswith("https://") for url in urls)
        assert entry.as_of <= dt.date.today()


def test_t2_small_network_matches_aws(catalog: Catalog) -> None:
    # AWS publishes t2.small's network at 0.128 Gbps baseline and 1.024 Gbps burst, and lists
    # no T2 size as EBS-optimized (T2 runs on Xen, before Nitro).
    t2 = catalog.instance("t2.small")
    assert t2.network.baseline_gbps == 0.128
    assert t2.network.burst_gbps == 1.024
    assert t2.ebs.optimized is False
    assert t2.nitro is False
    # AWS's burstable credit figures: t2.small earns 12 credits/h, a 20 % baseline, and T2
    # launches in standard mode.
    assert t2.cpu_credits is not None
    assert (t2.cpu_credits.earned_per_hour, t2.cpu_credits.baseline_per_vcpu_pct) == (12, 20)
    assert t2.cpu_credits.default_mode == "standard"


def test_t3_medium_ebs_matches_aws(catalog: Catalog) -> None:
    # AWS's EBS-optimized row for t3.medium: 347 / 2,085 Mbps, 43.375 / 260.625 MB/s and
    # 2,000 / 11,800 IOPS (baseline / maximum; the maximum is a burst).
    ebs = catalog.instance("t3.medium").ebs
    assert (ebs.baseline_mbps, ebs.max_mbps, ebs.baseline_iops, ebs.max_iops) == (347, 2085, 2000, 11800)
    # The MB/s column is the Mbps column / 8 (decimal), which the catalog relies on.
    assert ebs.sustained_mbps / 8 == pytest.approx(43.375)
    assert catalog.instance("t3.medium").network.baseline_gbps == 0.256


def test_i3_8xlarge_is_sustained_and_has_nvme(catalog: Catalog) -> None:
    # AWS's EBS-optimized row for i3.8xlarge: 7,000 Mbps, 875 MB/s, 32,500 IOPS, with no burst;
    # its network is 10 Gigabit without a credit burst; 4 x 1,900 GB NVMe, 720,000 write IOPS.
    i3 = catalog.instance("i3.8xlarge")
    assert i3.ebs.baseline_mbps is None
    assert i3.ebs.sustained_mbps == i3.ebs.max_mbps == 7000
    assert i3.network.burst_gbps is None
    assert i3.instance_store is not None
    assert i3.instance_store.write_iops_4k == 720_000


def test_gp2_figures_match_aws(catalog: Catalog) -> None:
    # AWS's gp2 rule: 3 IOPS/GiB, min 100, max 16,000, 3,000 burst, 5.4 M credits.
    gp2 = catalog.volume("gp2")
    assert gp2.model == "size_scaled_burst"
    assert (gp2.iops_per_gib, gp2.min_iops, gp2.max_iops) == (3, 100, 16000)
    assert (gp2.burst_iops, gp2.burst_bucket_io_credits) == (3000, 5_400_000)


def test_figures_nobody_published_are_marked_as_estimates(catalog: Catalog) -> None:
    # No C4 size has a published Gbps baseline: AWS's tables say "Moderate", "High" or
    # "10 Gigabit" (Karpenter's scrape of them, 2026-11-28), so every C4 figure is an estimate.
    for size in ("large", "xlarge", "2xlarge", "4xlarge", "8xlarge"):
        assert catalog.instance(f"c4.{size}").network.estimate, size
    assert not catalog.instance("c4.large").figure_sources["network"].verified
    # AWS commits only to "single-digit millisecond" between AZs.
    assert catalog.placement("cross-az").estimate
    assert catalog.defaults.network_burst_minutes.estimate
    # The 5 Gbps single-flow limit is published, not estimated.
    assert not catalog.defaults.single_flow_gbps.estimate
    assert catalog.defaults.single_flow_gbps.value == 5


def test_unknown_names_suggest_close_matches(catalog: Catalog) -> None:
    with pytest.raises(ConfigError, match=r"t3\.medium"):
        catalog.instance("t3.meduim")
    with pytest.raises(ConfigError, match="unknown volume type"):
        catalog.volume("gp9")


def test_records_are_frozen(catalog: Catalog) -> None:
    with pytest.raises(ValidationError):
        catalog.instance("t2.small").vcpu = 64  # type: ignore[misc]


def test_ebs_figures_must_be_consistent() -> None:
    with pytest.raises(ValidationError, match="max_mbps"):
        Ebs(optimized=True)
    with pytest.raises(ValidationError, match="not EBS-optimized"):
        Ebs(optimized=False, max_mbps=100, max_iops=100)
    with pytest.raises(ValidationError, match="baseline_mbps"):
        Ebs(optimized=True, max_mbps=100, max_iops=100, baseline_mbps=200)


ONPREM = """\
schema_version: 1
references:
  lab-sheet:
    url: https://wiki.example.internal/storage/array-a
placements:
  dc-pair:
    rtt_ms: 0.3
    sources: [lab-sheet]
    as_of: 2024-01-10
volume_types:
  array-a:
    model: fixed
    network_attached: false
    io_unit_kib: 256
    iops: 20000
    mib_s: 800
    latency: {write_ms: 0.4, read_ms: 0.3}
    sources: [lab-sheet]
    as_of: 2024-01-10
instance_types:
  onprem.r740:
    family: onprem
    vcpu: 32
    memory_gib: 256
    nitro: false
    network: {label: "2 x 10GbE", baseline_gbps: 10}
    ebs: {optimized: false}
    sources: [lab-sheet]
    as_of: 2024-01-10
  t2.small:
    family: t2
    vcpu: 1
    memory_gib: 2
    nitro: false
    network: {baseline_gbps: 0.2, burst_gbps: 1.024}
    ebs: {optimized: false}
    sources: [https://example.org/remeasured]
    as_of: 2024-02-01
"""


def test_user_catalog_adds_and_replaces_entries(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(ONPREM, encoding="utf-8")
    merged = load_catalog([path])
    assert merged.instance("onprem.r740").network.baseline_gbps == 10
    assert merged.volume("array-a").network_attached is False
    assert merged.placement("dc-pair").rtt_ms == 0.3
    # A user entry replaces the built-in one whole (no AWS figure leaks into it) ...
    assert merged.instance("t2.small").network.baseline_gbps == 0.2
    assert merged.instance("t2.small").cpu_credits is None
    # ... and the built-in entries it does not name stay.
    assert merged.instance("t3.medium").network.baseline_gbps == 0.256


def test_duplicate_keys_are_rejected_with_their_line() -> None:
    text = "schema_version: 1\ninstance_types:\n  a: {}\n  a: {}\n"
    with pytest.raises(ConfigError, match=r"mine\.yaml:4: duplicate key 'a' \(first at line 3\)"):
        parse_catalog_text(text, "mine.yaml")


def test_unknown_fields_are_rejected_with_file_and_line(tmp_path: Path) -> None:
    text = ONPREM.replace("    iops: 20000\n", "    iops: 20000\n    ioops: 3\n")
    path = tmp_path / "typo.yaml"
    path.write_text(text, encoding="utf-8")
    line = text.splitlines().index("    ioops: 3") + 1
    with pytest.raises(ConfigError, match=rf"typo\.yaml:{line}: volume_types\.array-a\.fixed\.ioops"):
        load_catalog([path])


def test_unresolvable_source_ids_are_rejected(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        ONPREM.replace("references:\n  lab-sheet:\n    url: https://wiki.example.internal/storage/array-a\n", ""),
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match="lab-sheet"):
        load_catalog([path])


def test_missing_or_malformed_user_catalog_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_catalog([tmp_path / "absent.yaml"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("schema_version: 1\ninstance_types: [\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.yaml:\d+:\d+: YAML syntax error"):
        load_catalog([bad])
    wrong_version = tmp_path / "v2.yaml"
    wrong_version.write_text("schema_version: 2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="schema_version"):
        load_catalog([wrong_version])
