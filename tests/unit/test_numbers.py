"""Nonsense numbers are refused where they enter — inventory thresholds and every
other inventory number, command-line options, sizing JSON, and measurements read back from
samples files (``harness compare``, ``harness baseline save``)."""

from __future__ import annotations

import argparse
import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.argtypes import number
from harness.cli import build_parser, main
from harness.errors import ConfigError
from harness.inventory import parse_inventory
from harness.runfiles.samples import Sample, SampleStore

from .baseline_runs import SINGLE, load, write_run
from .test_inventory import GOOD

ROOT = Path(__file__).resolve().parents[2]


def _strict_json(text: str) -> object:
    def refuse(token: str) -> float:
        raise ValueError(f"{token} is not JSON")

    return json.loads(text, parse_constant=refuse)


# --------------------------------------------------------------------------------------------
# Inventory numbers


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ("thresholds: {min_mib_s: {'*': -5}}", r"thresholds\.min_mib_s\.\*: Input should be greater than 0"),
        ("thresholds: {min_iops: {'*': 0}}", r"thresholds\.min_iops\.\*: Input should be greater than 0"),
        ("thresholds: {min_iops: {'*': inf}}", r"thresholds\.min_iops\.\*: Input should be a finite number"),
        ("thresholds: {min_iops: {'*': 1e999}}", r"inv\.yaml:\d+: 1e999 is not a finite number"),  # refused as read
        ("thresholds: {max_p99_ms: {'*': nan}}", r"thresholds\.max_p99_ms\.\*: Input should be a finite number"),
        ("thresholds: {multi_az_vs_single_az: 0}", r"multi_az_vs_single_az: Input should be greater than 0"),
        ("thresholds: {replicated_vs_local: 1.2}", r"replicated_vs_local: Input should be less than or equal to 1"),
        ("thresholds: {rate_cap_band: [1.0, 0.8]}", r"rate_cap_band: \[1, 0.8\] is reversed"),
        ("thresholds: {rate_cap_band: [0, 1.0]}", r"rate_cap_band: .*0 < low"),
        ("thresholds: {rate_cap_band: [-1, 0.5]}", r"rate_cap_band: .*0 < low"),
        ("thresholds: {rate_cap_band: [0.8, inf]}", r"rate_cap_band\.1: Input should be a finite number"),
        ("thresholds: {rate_cap_band: [0.8, 20]}", r"rate_cap_band: .*high ≤ 1.5"),
        ("network_profiles: {x: {loss_pct: nan}}", r"network_profiles\.x\.loss_pct: Input should be a finite number"),
        ("lab: {disk_tmpfs_size: 0}", r"lab\.disk_tmpfs_size: Input should be greater than or equal to"),
        ("lab: {az_link: {rate: 0bit}}", r"lab\.az_link: .*rate must be between 8kbit and 100gbit"),
    ],
)
def test_nonsense_inventory_numbers_are_refused(section: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_inventory(GOOD + section + "\n", "inv.yaml")


finite_positive = st.floats(min_value=1e-6, max_value=1e9, allow_nan=False, allow_infinity=False)


@given(finite_positive, finite_positive, st.floats(0.01, 1.0), st.floats(0.01, 1.0), st.floats(0.01, 1.5))
def test_finite_positive_thresholds_and_ordered_bands_pass(
    mib_s: float, p99: float, ratio: float, low: float, high: float
) -> None:
    low, high = min(low, high), max(low, high)
    text = GOOD + (
        f"thresholds: {{min_mib_s: {{'*': {mib_s!r}}}, max_p99_ms: {{'*': {p99!r}}}, "
        f"multi_az_vs_single_az: {ratio!r}, rate_cap_band: [{low!r}, {high!r}]}}\n"
    )
    thresholds = parse_inventory(text).thresholds
    assert thresholds.min_mib_s == {"*": mib_s} and thresholds.rate_cap_band == (low, high)


@given(st.sampled_from(["inf", "-inf", "nan", "1e999", "-1e999"]), st.sampled_from(["min_mib_s", "max_p99_ms"]))
def test_no_inventory_number_may_be_infinite(text: str, key: str) -> None:
    with pytest.raises(ConfigError, match="finite number"):
        parse_inventory(GOOD + f"thresholds: {{{key}: {{'*': {text}}}}}\n")


# --------------------------------------------------------------------------------------------
# Command-line numbers: one argparse type


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_the_number_type_accepts_exactly_finite_values_in_range(value: float) -> None:
    parse = number(float, 0, 3600, exclusive_minimum=True, what="seconds")
    if math.isfinite(value) and 0 < value <= 3600:
        assert parse(repr(value)) == value
    else:
        with pytest.raises(argparse.ArgumentTypeError, match=r"must be a finite number of seconds in \(0, 3600\]"):
            parse(repr(value))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["lab", "status", "--pings", "0"], "argument --pings: must be a whole number of pings in [1, 1000], got '0'"),
        (["lab", "bench", "--cycles", "-3"], "argument --cycles: must be a whole number of cycles in [1, 100]"),
        (["killcheck", "--trials", "1e9"], "argument --trials: must be a whole number of trials in [1, 1000]"),
        (["bench", "--repeats", "0"], "argument --repeats: must be a whole number of cells in [1, 100]"),
        (["report", "reports/latest", "--width", "-5"], "argument --width: must be a whole number of columns"),
        (
            ["sizing", "--instance-type", "t3.medium", "--workload", "randwrite:4k", "--local-iops", "inf"],
            "argument --local-iops: must be a finite number of IOPS in (0, 1e+09], got 'inf'",
        ),
    ],
)
def test_cli_numbers_are_refused_when_parsed(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    # Parsed only (build_parser, not main): a value that slipped through must not start a lab.
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# Sizing JSON is always valid JSON


def test_sizing_json_never_prints_infinity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lab = (ROOT / "inventories" / "catalogs" / "lab.yaml").read_text()
    argv = ["sizing", "--instance-type", "lab-uml", "--volume", "lab-file:2GiB", "--workload", "write:1m", "--json"]
    # A catalog figure of .inf is refused where the catalog is read...
    (tmp_path / "inf.yaml").write_text(lab.replace("mib_s: 4000", "mib_s: .inf"))
    assert main([*argv, "--catalog", str(tmp_path / "inf.yaml")]) == 2
    assert re.search(r"inf\.yaml:\d+:\d+: \.inf is not a finite number", capsys.readouterr().err)
    # ... and a finite one the model overflows becomes null, deliberately, not `Infinity`.
    (tmp_path / "huge.yaml").write_text(
        lab.replace("iops: 1000000", "iops: 1.0e+308").replace("mib_s: 4000", "mib_s: 1.0e+308")
    )
    assert main([*argv, "--no-replication", "--catalog", str(tmp_path / "huge.yaml")]) == 0
    payload = _strict_json(capsys.readouterr().out)
    assert isinstance(payload, dict) and payload["limits"]["primary.volume.throughput"]["bw_mib_s"] is None


# --------------------------------------------------------------------------------------------
# Measurements read back: one reader refuses corrupt and empty samples files


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    root = tmp_path / "reports"
    write_run(root, SINGLE, load(SINGLE), run_json_from=SINGLE)
    return root


def _corrupt_run(reports: Path, run_id: str, line: str | None) -> Path:
    samples = load(SINGLE)
    path = write_run(reports, run_id, samples[:3], run_json_from=SINGLE)
    if line is None:
        (path / "samples.ndjson").write_text("")
    else:
        with (path / "samples.ndjson").open("a") as f:
            f.write(line + "\n")
    return path


_BW = Sample("bw", 1.0, "MiB/s", load(SINGLE)[0].metadata, timestamp=1.0).to_json()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            _BW.replace('"value": 1.0', '"value": -5.0'),
            r"samples.ndjson:4: not a sample record: bw -5 MiB/s is negative",
        ),
        (
            _BW.replace('"value": 1.0', '"value": Infinity'),
            r"samples.ndjson:4: not a sample record: Infinity is not a finite number",
        ),
        (
            _BW.replace('"value": 1.0', '"value": 1e999'),
            r"samples.ndjson:4: not a sample record: 1e999 is not a finite number",
        ),
        (_BW.replace('"value": 1.0', '"value": "fast"'), r"samples.ndjson:4: not a sample record"),
        (None, r"samples.ndjson: empty — no sample"),
    ],
)
def test_compare_and_baseline_save_refuse_corrupt_measurements(
    reports: Path, capsys: pytest.CaptureFixture[str], line: str | None, message: str
) -> None:
    bad = _corrupt_run(reports, "20261121-130000-bad0", line)
    capsys.readouterr()
    assert main(["compare", SINGLE, "20261121-130000-bad0", "--reports", str(reports), "--no-write"]) == 2
    err = capsys.readouterr().err
    assert str(bad / "samples.ndjson") in err
    assert pytest.importorskip("re").search(message, err), err
    assert main(["baseline", "save", "x", "20261121-130000-bad0", "--reports", str(reports)]) == 2
    assert str(bad / "samples.ndjson") in capsys.readouterr().err
    assert not (reports / "baselines").exists()


def test_nan_gaps_and_signed_overheads_still_read(reports: Path) -> None:
    store = SampleStore(reports / "gaps" / "samples.ndjson")
    meta = load(SINGLE)[0].metadata
    store.append([Sample("clat_p99", float("nan"), "ms", meta), Sample("overhead", -0.2, "s", meta)])
    assert main(["report", str(reports / "gaps")]) == 0
