"""The validity certificate on the recorded windows (tests/data/pressure: this machine quiet and
under a stress-ng hog, with and without PSI), its thresholds' schema, and its flattening; the
judging logic with hypothesis."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.probes.pressure import NodeWindow, parse_snapshot, pressure_window
from harness.rules.validity import RttCheck, ValidityField, certify
from harness.rules.validitythresholds import DEFAULT_THRESHOLDS, ValidityThresholds, parse_validity_thresholds

DATA = Path(__file__).resolve().parents[1] / "data" / "pressure"
QUIET = [f"r{r}-quiet{i}" for r in (2, 3) for i in (1, 2)]
HOGS = [f"r{r}-hog-{h}" for r in (1, 2, 3) for h in ("cpu1-load50-nice", "cpu2-load100-nice", "cpu2-load100")]


def window(case: str, node: str, kind: str = "psi") -> NodeWindow:
    before, after = (
        parse_snapshot((DATA / kind / f"{case}-{end}.txt").read_text(), node) for end in ("before", "after")
    )
    return pressure_window(before, after, node)


@pytest.mark.parametrize("case", QUIET)
def test_every_quiet_window_is_clean(case: str) -> None:
    cert = certify([window(case, "a1"), window(case, "a2")])
    assert cert.status == "clean" and cert.reason == "clean"


@pytest.mark.parametrize("case", HOGS)
def test_every_hog_window_is_disturbed_by_cpu_pressure(case: str) -> None:
    cert = certify([window("r2-quiet1", "a1"), window(case, "a2")])
    assert cert.disturbed
    assert [(f.where, f.name) for f in cert.disturbances] == [("a2", "cpu_pressure_pct")]
    assert cert.reason.startswith("cpu pressure ") and cert.reason.endswith(" % on a2 > 10 %")


def test_the_reason_reads_as_a_sentence_with_the_figures() -> None:
    cert = certify([window("r1-hog-cpu1-load50-nice", "a1"), window("r2-quiet1", "a2")])
    assert cert.reason == "cpu pressure 41 % on a1 > 10 %"


def test_without_psi_a_saturating_hog_shows_in_the_run_queue() -> None:
    quiet = certify([window("quiet", "a1", "no-psi"), window("quiet", "a2", "no-psi")])
    assert quiet.status == "clean"
    assert "validity.a1.cpu_pressure_pct" not in quiet.properties()
    hog = certify([window("quiet", "a1", "no-psi"), window("hog-cpu2-load100-nice", "a2", "no-psi")])
    assert hog.reason == "run queue per cpu 2 on a2 > 1.75"


def test_with_psi_the_run_queue_is_recorded_not_judged() -> None:
    cert = certify([window("r1-hog-cpu2-load100-nice", "a1")], ValidityThresholds(max_cpu_pressure_pct=None))
    runnable = next(f for f in cert.fields if f.name == "runnable_per_cpu")
    assert runnable.figure == 2.5 and runnable.threshold is None and not cert.disturbed


def test_the_replication_path_rtt_against_its_calibration() -> None:
    quiet = [window("r2-quiet1", "a1"), window("r2-quiet2", "a2")]
    # the busy lab's same-AZ round trip: 0.38-0.50 ms where the quiet lab reads 0.06 ms
    busy = certify(quiet, rtt=RttCheck("a1-a2", 0.06, before_ms=0.38, after_ms=0.50))
    assert busy.reason == "RTT before fio 0.38 ms on a1-a2 > 0.16 ms; RTT after fio 0.5 ms on a1-a2 > 0.16 ms"
    # a cross-AZ path a few percent above its calibration is jitter
    assert not certify(quiet, rtt=RttCheck("a1-b1", 2.06, before_ms=2.3, after_ms=2.44)).disturbed
    # a tiny path: twice the calibration but only 0.05 ms above it
    assert not certify(quiet, rtt=RttCheck("a1-a2", 0.05, before_ms=0.1)).disturbed


def test_burst_balance_host_pressure_and_guest_shares() -> None:
    node = window("r2-quiet1", "a1")
    host = window("r1-hog-cpu2-load100", "host")
    shares = {"a1": 0.31}
    cert = certify([node], burst_balance_pct={"a1": 12.0}, host=host, guest_cpu_shares=shares, other_cpu_share=0.4)
    assert cert.reason == "burst balance 12 % on a1 < 20 %; other programs' cpu 40 % on host > 5 %"
    strict = ValidityThresholds(max_host_cpu_pressure_pct=10)
    cert = certify([node], strict, burst_balance_pct={"a1": 12.0}, host=host, guest_cpu_shares=shares)
    assert cert.reason == "burst balance 12 % on a1 < 20 %; cpu pressure 98 % on host > 10 %"
    props = cert.properties()
    assert props["validity.a1.burst_balance_pct.min"] == "20"
    assert props["validity.host.guest_a1_cpu_pct"] == "31"
    assert props["validity.host.guest_a1_cpu_pct.disturbed"] == "no"
    assert "validity.host.guest_a1_cpu_pct.max" not in props


def test_the_certificate_flattens_into_properties() -> None:
    cert = certify([window("r1-hog-cpu1-load50-nice", "a1")], rtt=RttCheck("a1-a2", 0.06, after_ms=0.07))
    props = cert.properties()
    assert props["validity"] == "disturbed"
    assert props["validity.reason"] == "cpu pressure 41 % on a1 > 10 %"
    assert props["validity.a1.cpu_pressure_pct"] == "41.1008"
    assert props["validity.a1.cpu_pressure_pct.max"] == "10"
    assert props["validity.a1.cpu_pressure_pct.source"] == "/proc/pressure/cpu some"
    assert props["validity.a1.cpu_pressure_pct.disturbed"] == "yes"
    assert props["validity.a1.io_pressure_pct.disturbed"] == "no" and "validity.a1.io_pressure_pct.max" not in props
    assert props["validity.a1-a2.rtt_after_ms"] == "0.07" and props["validity.a1-a2.rtt_after_ms.max"] == "0.16"
    assert "validity.a1-a2.rtt_before_ms" not in props
    assert all(isinstance(v, str) for v in props.values())
    assert cert.properties("v")["v"] == "disturbed"


def test_thresholds_from_an_inventory_mapping() -> None:
    assert parse_validity_thresholds(None) is DEFAULT_THRESHOLDS
    t = parse_validity_thresholds({"max_cpu_pressure_pct": 50, "max_io_pressure_pct": 50, "max_steal_pct": "off"})
    assert (t.max_cpu_pressure_pct, t.max_io_pressure_pct, t.max_steal_pct) == (50, 50, None)
    assert t.max_memory_pressure_pct == DEFAULT_THRESHOLDS.max_memory_pressure_pct
    cert = certify([window("r1-hog-cpu1-load50-nice", "a1")], t)
    assert cert.status == "clean"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            {"max_steal_pct": 250},
            "lab.yaml validity: max_steal_pct: Input should be less than or equal to 100, got 250",
        ),
        (
            {"max_rtt_ratio": 0.5},
            "lab.yaml validity: max_rtt_ratio: Input should be greater than or equal to 1, got 0.5",
        ),
        ({"max_cpu_pressure_pct": float("nan")}, "max_cpu_pressure_pct: Input should be a finite number"),
        ({"max_cpu": 5}, "max_cpu: unknown key (allowed: max_cpu_pressure_pct, max_host_cpu_pressure_pct"),
        ({"min_rtt_excess_ms": None}, "min_rtt_excess_ms: Input should be a valid number, got None"),
    ],
)
def test_a_bad_threshold_is_one_line_naming_the_key_and_the_limit(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_validity_thresholds(values, "lab.yaml validity")
    text = str(err.value)
    assert message in text and "\n" not in text
    assert err.value.exit_code == 2


def test_a_bad_thresholds_section_that_is_no_mapping() -> None:
    with pytest.raises(ConfigError, match=r"^validity: must be a mapping of threshold names to numbers, got list$"):
        parse_validity_thresholds([1, 2])  # type: ignore[arg-type]


figures = st.floats(0, 1000, allow_nan=False)
thresholds = st.none() | st.floats(0, 1000, allow_nan=False)


@given(figure=figures, threshold=thresholds, limit=st.sampled_from(["max", "min"]))
def test_a_field_is_disturbed_exactly_beyond_its_threshold(figure: float, threshold: float | None, limit: str) -> None:
    field = ValidityField("x_pct", "a1", figure, "src", "x", "%", threshold, limit)  # type: ignore[arg-type]
    if threshold is None:
        assert not field.disturbed
    else:
        assert field.disturbed == (figure > threshold if limit == "max" else figure < threshold)
    assert field.reason.startswith("x ") and " on a1" in field.reason


@given(cpu=st.floats(0, 1), steal=st.floats(0, 1), swapin=st.floats(0, 100), runnable=st.floats(0, 4))
def test_clean_exactly_when_no_judged_figure_crosses_its_threshold(
    cpu: float, steal: float, swapin: float, runnable: float
) -> None:
    base = window("r2-quiet1", "a1")
    w = dataclasses.replace(base, cpu_some=cpu, steal=steal, swapin_per_s=swapin, runnable_per_cpu=runnable)
    cert = certify([w])
    t = DEFAULT_THRESHOLDS
    assert t.max_cpu_pressure_pct is not None and t.max_steal_pct is not None and t.max_swapin_pages_s is not None
    expected = 100 * cpu > t.max_cpu_pressure_pct or 100 * steal > t.max_steal_pct or swapin > t.max_swapin_pages_s
    assert cert.disturbed == expected
    props = cert.properties()
    assert props["validity"] == ("disturbed" if expected else "clean")
    assert all(props[f"validity.{f.where}.{f.name}.disturbed"] == ("yes" if f.disturbed else "no") for f in cert.fields)
