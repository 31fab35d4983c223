"""The catalog audit: each figure's source, held to the recorded copies of the published tables.

The recorded copies are harness/sizing/catalog/sources/: AWS's Instance Types guide (2024) as
Markdown in jihoo529/ragstone at commit fc702f1e896befe8ad362282056088c43c3186ef, and Karpenter's
generated us-east-1 on-demand price table at commit 031e72b6099630e960dacb88b48a7e9bb780945f; the
header of each file names its URL and the date it was read.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cli import main
from harness.errors import ConfigError
from harness.sizing.catalog.audit import audit, audit_counts
from harness.sizing.catalog.generate import instance_row
from harness.sizing.catalog.instance_types import InstanceType
from harness.sizing.catalog.loader import Catalog, load_builtin_catalog
from harness.sizing.catalog.recorded import _type_name, load_recorded, parse_recorded
from harness.sizing.model.predict import predict
from harness.sizing.model.zonal import load_zone_redundant
from harness.sizing.scenario.question import Scenario, SizedNode, VolumeSpec, Workload

CATALOG = load_builtin_catalog()
COPIES = load_recorded()


def _with_figure(catalog: Catalog, name: str, section: str, **changes: float | None) -> Catalog:
    entry = catalog.instance_types[name]
    record = getattr(entry, section).model_copy(update=changes)
    types = {**catalog.instance_types, name: entry.model_copy(update={section: record})}
    return catalog.model_copy(update={"instance_types": types})


def test_the_built_in_catalog_agrees_with_every_recorded_copy() -> None:
    items = audit(CATALOG, COPIES)
    assert [item.where for item in items if item.status == "flagged"] == []
    assert audit_counts(items)["checked"] > 700


def test_one_wrong_figure_is_the_one_flagged() -> None:
    # the guide's EBS row for m7g.large: "|1 m7g.large|630.00 / 10000.00|78.75 / 1250.00|3600.00 / 40000.00|"
    wrong = _with_figure(CATALOG, "m7g.large", "ebs", baseline_iops=3700.0)
    flagged = [item for item in audit(wrong, COPIES) if item.status == "flagged"]
    assert [item.where for item in flagged] == ["instance_types.m7g.large.ebs.baseline_iops"]
    (claim,) = flagged[0].disagreeing
    assert (claim.value, claim.reference) == (3600.0, "ec2-instance-types-guide-2024")
    assert "3600.00 / 40000.00" in claim.line


def test_a_published_burst_the_catalog_drops_is_flagged() -> None:
    # "|1 c7g.large|0.937 / 12.5|": a burst of 12.5 Gbps; an entry without it is wrong
    dropped = _with_figure(CATALOG, "c7g.large", "network", burst_gbps=None)
    flagged = [item.where for item in audit(dropped, COPIES) if item.status == "flagged"]
    assert flagged == ["instance_types.c7g.large.network.burst_gbps"]


def test_the_old_m4_10xlarge_network_is_flagged() -> None:
    # the guide says "|m4.10xlarge|10 Gigabit|": it was entered as 5 Gbps baseline, 10 burst
    old = _with_figure(CATALOG, "m4.10xlarge", "network", baseline_gbps=5.0, burst_gbps=10.0)
    flagged = [item.where for item in audit(old, COPIES) if item.status == "flagged"]
    assert flagged == [
        "instance_types.m4.10xlarge.network.baseline_gbps",
        "instance_types.m4.10xlarge.network.burst_gbps",
    ]


def test_each_figure_names_its_source_url_and_the_price_its_own() -> None:
    items = {item.where: item for item in audit(CATALOG, COPIES)}
    price = items["instance_types.c6g.large.price.usd_per_hour"]
    assert (price.value, price.status) == (0.068, "checked")
    assert "karpenter-pricing-us-east-1" in price.sources
    assert items["instance_types.c4.large.network.baseline_gbps"].status == "unverified"


@given(st.sampled_from(["c6g.large", "im4gn.2xlarge", "t3.nano"]), st.sampled_from(["1 {}", "{} 1", "{}"]))
def test_footnote_marks_and_split_names_are_read_as_the_type(name: str, form: str) -> None:
    family, size = name.split(".")
    split = f"{family}.{size[:3]} {size[3:]}" if len(size) > 3 else name
    assert _type_name(form.format(name)) == name
    assert _type_name(form.format(split)) == name


def test_a_row_of_each_shape_states_its_figures() -> None:
    text = "\n".join(
        [
            "# reference: r",
            "# url: https://example.org/t",
            "# read: 2026-12-07",
            "# reader: aws-guide",
            "1: |c6gn.8xlarge|✗|64.00|AWS Graviton2 Processor|32|32|1|✗|✗|",
            "2: |1 c6gn.2xlarge|12.5 / 25.0|✗|✓|✗|1|4|15|✓|",
            "3: |c6gn.8xlarge|19000.00|2375.00|80000.00|✓|default|",
            "4: |im4gn.large|1 x 937 GB|NVMe SSD|31,250 / 25,000||✓|",
            "5: |c6g.large|✓|Instance store not supported|✗|✗|✗|✓|",
        ]
    )
    claims = {(c.entry.split(".", 1)[1], c.field): c.value for c in parse_recorded(text, "t").claims}
    assert claims == {
        ("c6gn.8xlarge", "memory_gib"): 64,
        ("c6gn.8xlarge", "vcpu"): 32,
        ("c6gn.2xlarge", "network.baseline_gbps"): 12.5,
        ("c6gn.2xlarge", "network.burst_gbps"): 25,
        ("c6gn.8xlarge", "ebs.max_mbps"): 19000,
        ("c6gn.8xlarge", "ebs.max_iops"): 80000,
        ("im4gn.large", "instance_store.devices"): 1,
        ("im4gn.large", "instance_store.device_size_gb"): 937,
        ("im4gn.large", "instance_store.read_iops_4k"): 31250,
        ("im4gn.large", "instance_store.write_iops_4k"): 25000,
    }


def test_the_command_exits_1_naming_the_flagged_figure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "mine.txt"
    copy.write_text(
        "# reference: mine\n# url: https://example.org/mine\n# read: 2026-12-07\n# reader: price-map\n"
        '7: "c6g.large": 0.099000,\n',
        encoding="utf-8",
    )
    assert main(["sizing", "catalog", "audit", "--recorded", str(copy)]) == 1
    out = capsys.readouterr().out
    flagged = [line for line in out.splitlines() if line.startswith("FLAGGED")]
    assert flagged == ["FLAGGED    instance_types.c6g.large.price.usd_per_hour = 0.068  (as of 2026-01-19)"]
    assert "mine says 0.099" in out
    assert out.splitlines()[-1].endswith("1 flagged")


def test_the_command_on_the_built_in_catalog_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sizing", "catalog", "audit"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].endswith("0 flagged")


def test_a_copy_without_its_header_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "bare.txt"
    copy.write_text("1: |c6g.large|✗|4.00|x|2|2|1|✗|✗|\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bare.txt: recorded copy lacks its header line\(s\) # reference:"):
        parse_recorded(copy.read_text(encoding="utf-8"), str(copy))
    assert main(["sizing", "catalog", "audit", "--recorded", str(copy)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "bare.txt" in err


GENERATED = [
    *(
        f"{family}.{size}"
        for family in ("c6g", "c6gn", "r7g")
        for size in ("large", "xlarge", "2xlarge", "4xlarge", "8xlarge")
    ),
    *(f"c7g.{size}" for size in ("2xlarge", "4xlarge", "8xlarge")),
    *(f"m7g.{size}" for size in ("4xlarge", "8xlarge")),
    "i4i.2xlarge",
    "i4i.4xlarge",
    "i4i.8xlarge",
    *(f"im4gn.{size}" for size in ("large", "xlarge", "2xlarge", "4xlarge", "8xlarge")),
    *(f"Standard_D{n}s_v5" for n in (16, 32, 48, 64)),
    *(f"Standard_E{n}s_v5" for n in (2, 8, 16, 20, 32, 48, 64)),
    *(f"Standard_{kind}{n}s_v6" for kind in "DE" for n in (2, 4, 8, 16, 32, 48, 64)),
    "Standard_E20s_v6",
]


@pytest.mark.parametrize("name", GENERATED)
def test_the_generated_rows_are_what_the_copies_state(name: str) -> None:
    # the price maps were generated on 2026-01-19 (AWS) and 2026-06-18 (Azure)
    priced = dt.date(2026, 6, 18) if name.startswith("Standard_") else dt.date(2026, 1, 19)
    row = instance_row(COPIES, name, dt.date(2026, 12, 7), priced)
    assert InstanceType.model_validate(row) == CATALOG.instance(name)


@pytest.mark.parametrize("name", [f"i3.{size}" for size in ("large", "xlarge", "2xlarge", "4xlarge")])
def test_the_xen_i3_rows_are_what_the_copies_state_hypervisor_and_all(name: str) -> None:
    # the guide's platform summary, line 8465: "|I3|Xen *|Intel (x86_64)|...": not Nitro
    row = instance_row(COPIES, name, dt.date(2026, 12, 7), dt.date(2026, 1, 19))
    assert row["nitro"] is False
    assert InstanceType.model_validate(row) == CATALOG.instance(name)


@pytest.mark.parametrize(
    ("family", "nitro"), [("M5", True), ("T2", False), ("C4", False), ("Im4gn", True), ("R8g", True)]
)
def test_a_family_s_hypervisor_says_nitro_of_every_size(family: str, nitro: bool) -> None:
    # the platform summary rows, e.g. line 573 "|T2|Xen|Intel (x86_64)|✗|✗|✓|✓|Windows | Linux|"
    hypervisor = "Nitro v4" if nitro else "Xen"
    text = "\n".join(
        [
            "# reference: r",
            "# url: https://example.org/t",
            "# read: 2026-12-07",
            "# reader: aws-guide",
            f"1: |{family}|{hypervisor}|Intel (x86_64)|✗|✓|✓|✓|Window | Linux|",
        ]
    )
    (claim,) = parse_recorded(text, "t").claims
    assert (claim.entry, claim.field, claim.value) == (f"instance_types.{family.lower()}.%", "nitro", float(nitro))
    sizes = [name for name in CATALOG.instance_types if name.startswith(f"{family.lower()}.")]
    assert sizes and all(CATALOG.instance(name).nitro is nitro for name in sizes)


def test_a_wrong_hypervisor_is_flagged() -> None:
    # the guide says "|T3|Nitro v2|": a t3 entered as Xen is wrong
    xen = CATALOG.instance_types["t3.micro"].model_copy(update={"nitro": False})
    wrong = CATALOG.model_copy(update={"instance_types": {**CATALOG.instance_types, "t3.micro": xen}})
    flagged = [item.where for item in audit(wrong, COPIES) if item.status == "flagged"]
    assert flagged == ["instance_types.t3.micro.nitro"]


def test_an_aws_type_whose_hypervisor_no_copy_states_is_refused() -> None:
    stripped = [replace(copy, claims=tuple(c for c in copy.claims if c.field != "nitro")) for copy in COPIES]
    with pytest.raises(ConfigError, match=r"c6g.large: no recorded copy states nitro"):
        instance_row(stripped, "c6g.large", dt.date(2026, 12, 7), dt.date(2026, 1, 19))


def test_i3_xlarge_across_azs_at_qd64_is_held_by_its_network_baseline() -> None:
    # the guide: "|1 i3.xlarge|1.25 / 10.0|" and "|i3.xlarge|1 x 950 GB|NVMe SSD|206,250 / 70,000||": the
    # primary sends each 4 KiB write as 4,096 x 1,500 / 1,448 = 4,243 B, 1.25 Gbps / 8 / 4,243 B = 36,825
    # a second, below the 70,000 the NVMe takes and the 64 / 1.11 ms the latency allows
    scenario = Scenario(
        primary=SizedNode("i3.xlarge", VolumeSpec("instance-store", None)),
        workload=Workload("randwrite", 4096, numjobs=1, iodepth=64),
        placement="cross-az",
    )
    prediction = predict(scenario, CATALOG)
    assert prediction.binding.key == "primary.network.out"
    assert prediction.iops == pytest.approx(1.25e9 / 8 / (4096 * 1500 / 1448), rel=1e-4)


def test_im4gn_2xlarge_is_the_guide_s_rows() -> None:
    # "|im4gn.2xlarge 1|12.5 / 25.0|", "|im4gn.2xl 1 arge|5000.00 / 10000.00|625.00 / 1250.00|20000.00 / 40000.00|",
    # "|im4gn.2xlarge|1 x 3750 GB|NVMe SSD|125,000 / 100,000||", Karpenter "im4gn.2xlarge": 0.727580
    entry = CATALOG.instance("im4gn.2xlarge")
    assert (entry.vcpu, entry.memory_gib, entry.network.baseline_gbps, entry.network.burst_gbps) == (8, 32, 12.5, 25)
    assert (entry.ebs.baseline_mbps, entry.ebs.max_iops) == (5000, 40000)
    assert entry.instance_store is not None and entry.instance_store.write_iops_4k == 100000
    assert entry.price is not None and entry.price.usd_per_hour == 0.72758


def test_d16s_v5_is_the_size_page_s_rows() -> None:
    # "| Standard_D16s_v5 | 32 | 25600 | 600 | 40000 | 1200 |", "| Standard_D16s_v5 | 8 | 12500 |",
    # Karpenter's eastus map: "Standard_D16s_v5": 0.768000
    entry = CATALOG.instance("azure/Standard_D16s_v5")
    assert (entry.vcpu, entry.memory_gib, entry.network.baseline_gbps) == (16, 64, 12.5)
    assert (entry.ebs.baseline_iops, entry.ebs.baseline_mbps, entry.ebs.max_iops, entry.ebs.max_mbps) == (
        25600,
        4800,
        40000,
        9600,
    )
    assert entry.price is not None and (entry.price.usd_per_hour, entry.price.region) == (0.768, "eastus")


def test_a_type_no_copy_prices_is_refused_not_guessed() -> None:
    with pytest.raises(ConfigError, match=r"c6g.metal: no recorded copy states vcpu, memory_gib, network"):
        instance_row(COPIES, "c6g.metal", dt.date(2026, 12, 7), dt.date(2026, 1, 19))


def test_the_zone_redundant_comparators_are_audited_with_the_catalog(capsys: pytest.CaptureFixture[str]) -> None:
    # zone-redundant.yaml: Hyperdisk Balanced HA's 2,400 MiB/s is unverified (two copies of Google's
    # page disagree: 2,400 and 1,200), ZRS Premium SSD's three zones are cited (no recorded copy)
    items = {item.where: item for item in audit(CATALOG, COPIES, load_zone_redundant())}
    assert items["zone_redundant.gcp/hyperdisk-balanced-high-availability.max_mib_s"].status == "unverified"
    zrs = items["zone_redundant.azure/premium-ssd-zrs.zones"]
    assert (zrs.value, zrs.status, zrs.as_of) == (3, "cited", dt.date(2026, 12, 7))
    assert main(["sizing", "catalog", "audit", "--all"]) == 0
    assert "zone_redundant.gcp/regional-pd.zones = 2" in capsys.readouterr().out


def test_an_unverified_hyperdisk_limit_says_why_no_copy_confirms_it(capsys: pytest.CaptureFixture[str]) -> None:
    # Google's per-machine-type Hyperdisk table: no stored copy keeps it, so n4-standard-16's
    # 80,000 IOPS stays unverified, and the audit prints the note that says what was searched
    items = {item.where: item for item in audit(CATALOG, COPIES)}
    limit = items["instance_types.n4-standard-16.ebs.max_iops"]
    assert (limit.value, limit.status) == (80000, "unverified")
    assert main(["sizing", "catalog", "audit"]) == 0
    out = capsys.readouterr().out
    entry = out[out.index("UNVERIFIED instance_types.n4-standard-16.ebs.max_iops") :].split("\n", 3)
    assert entry[1].startswith("    source: https://cloud.google.com/compute/docs/disks/hyperdisk-perf-limits")
    assert entry[2].startswith("    why: n4-*-16: 80,000 IOPS, 1,200 MiB/s;") and "not confirmed" in entry[2]
