"""The report names the calibrations a run's predictions used: recorded lab runs."""

from __future__ import annotations

from pathlib import Path

from harness.report.aggregate import aggregate_samples
from harness.report.comparison import build_comparison
from harness.report.header import header_items
from harness.runfiles.samples import read_samples

DATA = Path(__file__).parent.parent / "data" / "calibration"


def _calibrations(name: str) -> str | None:
    comparison = build_comparison(aggregate_samples(read_samples(DATA / name)))
    return dict(header_items(comparison, None)).get("calibrations")


def test_a_run_that_reused_its_calibrations_says_so() -> None:
    text = _calibrations("reused-run-samples.ndjson")
    assert text is not None
    parts = text.split("; ")
    assert [p.split(" ")[0].rsplit("-", 3)[0] for p in parts] == ["multi-az", "single-az"]
    assert all(p.endswith(", reused)") for p in parts)


def test_a_run_that_measured_names_the_same_calibrations_the_next_run_reused() -> None:
    measured = _calibrations("measured-run-samples.ndjson")
    reused = _calibrations("reused-run-samples.ndjson")
    assert measured is not None and reused is not None
    assert all(p.endswith(", measured in this run)") for p in measured.split("; "))
    assert [p.split(" ")[0] for p in measured.split("; ")] == [p.split(" ")[0] for p in reused.split("; ")]


def test_cells_without_predictions_make_no_calibrations_line() -> None:
    # the calibration cells themselves are not predicted
    samples = [s for s in read_samples(DATA / "measured-run-samples.ndjson") if s.metadata["scenario"] == "calibration"]
    assert len(samples) > 100
    assert "calibrations" not in dict(header_items(build_comparison(aggregate_samples(samples)), None))
