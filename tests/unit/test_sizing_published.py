"""The catalog and model reproduce AWS's published tables and rules exactly (sources in tests/data/sizing/README.md)."""

from __future__ import annotations

import csv
import datetime as dt
import io
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cli.catalog import run_catalog
from harness.errors import ConfigError
from harness.sizing.catalog.loader import Catalog, load_builtin_catalog
from harness.sizing.catalog.provenance import findings
from harness.sizing.model.predict import predict
from harness.sizing.scenario.question import Scenario, SizedNode, VolumeSpec, Workload
from harness.sizing.volumes.rules import volume_performance
from harness.units import KIB, MIB

DATA = Path(__file__).resolve().parents[1] / "data" / "sizing"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_builtin_catalog()


def _gp2_rows() -> list[dict[str, str]]:
    with (DATA / "gp2_burst_table.csv").open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("row", _gp2_rows(), ids=lambda row: f"{row['size_gib']}GiB")
def test_gp2_burst_duration_table(catalog: Catalog, row: dict[str, str]) -> None:
    # AWS's recorded gp2 table, row by row: baseline, burst duration at 3,000 IOPS, refill time.
    gp2 = catalog.volume("gp2")
    perf = volume_performance("gp2", gp2, VolumeSpec("gp2", float(row["size_gib"])), catalog.instance("m5.large"))
    assert perf.baseline_iops == float(row["baseline_iops"])
    assert perf.iops_bucket is not None
    assert round(perf.burst_seconds() or 0) == int(row["burst_seconds"])
    assert round(perf.iops_bucket / perf.baseline_iops) == int(row["refill_seconds"])


def _st1_alone(catalog: Catalog, rw: str, bs: int, duration_s: float | None = None) -> float:
    scenario = Scenario(
        primary=SizedNode("m5.4xlarge", VolumeSpec("st1", 500)),
        workload=Workload(rw, bs, numjobs=8, iodepth=16),
        replicate=False,
        duration_s=duration_s,
    )
    return predict(scenario, catalog).limit("primary.volume.throughput").baseline_iops


def test_st1_random_io_spends_a_full_mib_of_credit(catalog: Catalog) -> None:
    # AWS's recorded st1/sc1 rule: an I/O of 1 MiB or less counts as a 1 MiB I/O credit;
    # sequential I/Os are merged into 1 MiB blocks first.  500 GiB st1: 40 MiB/s per TiB baseline.
    assert "1 MiB or less counts as a 1 MiB I/O credit" in (DATA / "st1_credit_rule.txt").read_text(encoding="utf-8")
    baseline = 40 * 500 / 1024 * MIB
    assert _st1_alone(catalog, "randwrite", 4 * KIB) == pytest.approx(baseline / MIB)
    assert _st1_alone(catalog, "write", 4 * KIB) == pytest.approx(baseline / (4 * KIB))


@pytest.mark.parametrize("gib", [500, 1024])
def test_st1_two_hour_random_write_mean(catalog: Catalog, gib: int) -> None:
    # Two hours of 4 KiB random writes on st1: the burst (250 MiB/s per TiB) spends the bucket
    # (1 TiB per TiB) at 1 MiB per I/O, then the baseline (40 MiB/s per TiB); at most 500 IOPS.
    # At 1 TiB that is 185.6 IOPS on average, where charging 4 KiB per I/O gave the 500 IOPS cap
    # (2.7x too high).
    scenario = Scenario(
        primary=SizedNode("m5.4xlarge", VolumeSpec("st1", gib)),
        workload=Workload("randwrite", 4 * KIB, numjobs=8, iodepth=16),
        replicate=False,
        duration_s=7200,
    )
    prediction = predict(scenario, catalog)
    tib = gib / 1024
    burst, base = 250 * tib, 40 * tib  # MiB/s = I/Os per second at 1 MiB each
    burst_rate = min(burst, 500)
    seconds = tib * 1024 * 1024 / (burst_rate - base)  # bucket (MiB) / net drain
    expected = (burst_rate * min(seconds, 7200) + base * max(0.0, 7200 - seconds)) / 7200
    assert prediction.iops == pytest.approx(expected, rel=1e-6)
    if gib == 1024:
        assert 500 / prediction.iops == pytest.approx(2.69, abs=0.01)


@given(bs_kib=st.integers(min_value=1, max_value=4096))
def test_st1_charge_is_max_of_io_and_one_mib_for_random_io(bs_kib: int) -> None:
    catalog = load_builtin_catalog()
    per_io = _st1_alone(catalog, "randwrite", bs_kib * KIB)
    baseline = 40 * 500 / 1024 * MIB
    assert per_io == pytest.approx(baseline / max(bs_kib * KIB, MIB))


def test_gp3_small_volumes_and_2025_limits(catalog: Catalog) -> None:
    gp3 = catalog.volume("gp3")
    m5 = catalog.instance("m5.large")
    # 1-5 GiB volumes come with the included 3,000 IOPS; buying more needs 500 IOPS per GiB.
    assert volume_performance("gp3", gp3, VolumeSpec("gp3", 1), m5).baseline_iops == 3000
    with pytest.raises(ConfigError, match="3000"):
        volume_performance("gp3", gp3, VolumeSpec("gp3", 5, 3001), m5)
    top = volume_performance("gp3", gp3, VolumeSpec("gp3", 160, 80000, 2000), m5)
    assert (top.baseline_iops, top.baseline_bytes_s) == (80000, 2000 * MIB)
    assert gp3.max_size_gib == 65536


def test_io2_is_block_express(catalog: Catalog) -> None:
    io2 = catalog.volume("io2")
    perf = volume_performance("io2", io2, VolumeSpec("io2", 256, 256000), catalog.instance("m6i.4xlarge"))
    assert perf.baseline_iops == 256000
    assert perf.baseline_bytes_s == 4000 * MIB


def test_sc1_is_in_the_catalog(catalog: Catalog) -> None:
    # AWS's sc1 rule: 12 MiB/s per TiB baseline, 80 burst, 250 MiB/s cap.
    sc1 = catalog.volume("sc1")
    perf = volume_performance("sc1", sc1, VolumeSpec("sc1", 1024), catalog.instance("m5.large"))
    assert perf.baseline_bytes_s == 12 * MIB
    assert perf.burst_bytes_s == 80 * MIB


def test_catalog_check_lists_changed_and_unverified_figures(catalog: Catalog) -> None:
    listed = {item.where: item for item in findings(catalog, dt.date(2024, 1, 1))}
    # c4.large's 0.625 Gbps baseline is stated by no AWS source the catalog cites: listed as an estimate.
    assert listed["instance_types.c4.large.network"].reasons == ("estimate", "unverified")
    cross_az = listed["placements.cross-az"].reasons
    assert "estimate" in cross_az and "older than 2024-01-01" in cross_az
    # M6a's EBS figures changed after the entry was made and carry their own, newer date.
    assert "instance_types.m6a.large.ebs" not in listed
    assert catalog.instance("m6a.large").figure_sources["ebs"].as_of == dt.date(2026, 11, 28)
    newer = {item.where for item in findings(catalog)}
    assert "instance_types.m5.large" not in newer  # verified and no date given


def test_catalog_check_command_names_repository_path_and_commit(catalog: Catalog) -> None:
    import argparse

    out = io.StringIO()
    args = argparse.Namespace(
        catalog_command="check", older_than=dt.date(2030, 1, 1), catalog_json=False, catalog=[], catalog_files=[]
    )
    assert run_catalog(args, out) == 0
    text = out.getvalue()
    assert "volume_types.st1" in text
    assert "awsdocs/amazon-ec2-user-guide/doc_source/hdd-vols.md@0147f878dcbad26b1151a12701a773743f0cd496" in text
