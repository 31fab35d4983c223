"""The validity certificate in the report: each cell's certificate over its repeats, the first
screen's count of clean, disturbed and otherwise inconclusive cells, the calibration cells no
test reports, the HTML validity column, the terminal line and the model fit that leaves the
disturbed cells out.  The cells are real recorded runs (tests/data/runs, tests/data/calibration)
with certificates made from the recorded pressure windows (tests/data/pressure)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.cell.certificate import Readings, cell_certificate
from harness.report.aggregate import aggregate_samples
from harness.report.comparison import build_comparison
from harness.report.header import calibration_line, header_items, validity_line
from harness.report.modelfit import model_fit
from harness.report.page import render_html
from harness.report.terminal import render_text
from harness.report.validity import cell_validity, disturbance_label, validity_summary
from harness.rules.validitythresholds import DEFAULT_THRESHOLDS
from harness.runfiles.samples import Sample, read_samples
from tests.unit.baseline_runs import SINGLE, cell_is, load

PRESSURE = Path(__file__).resolve().parents[1] / "data" / "pressure"
CALIBRATED = Path(__file__).resolve().parents[1] / "data" / "calibration" / "measured-run-samples.ndjson"


def certificate(a2_case: str) -> dict[str, str]:
    """The certificate properties of a window: a1 quiet, a2 as ``a2_case`` (recorded)."""
    cases = {"a1": "psi/r2-quiet1", "a2": a2_case}
    start, end = (
        Readings({n: (PRESSURE / f"{c}-{end}.txt").read_text() for n, c in cases.items()})
        for end in ("before", "after")
    )
    return cell_certificate(start, end, DEFAULT_THRESHOLDS).properties()


QUIET = certificate("psi/r3-quiet1")
HOG = certificate("psi/r1-hog-cpu1-load50-nice")


def certified(samples: Iterable[Sample], where: Any, props: dict[str, str], **meta: Any) -> list[Sample]:
    """``samples`` with the certificate ``props`` (and ``meta``) on the cells ``where`` picks."""
    return [
        dataclasses.replace(s, metadata={**s.metadata, **props, **meta}) if where(s.metadata) else s for s in samples
    ]


def test_a_label_names_the_figure_and_where_it_was_read() -> None:
    assert disturbance_label("validity.a2.cpu_pressure_pct.disturbed") == "cpu pressure on a2"
    assert disturbance_label("validity.a1-a2.rtt_after_ms.disturbed") == "rtt after on a1-a2"
    assert disturbance_label("validity.a2.cpu_pressure_pct") is None and disturbance_label("verdict") is None


def test_a_cell_is_disturbed_when_any_repeat_was_with_that_repeats_reason() -> None:
    repeats = [{**QUIET, "repeat": 0}, {**HOG, "repeat": 1}, {**QUIET, "repeat": 2}]
    validity = cell_validity(repeats)
    assert validity.status == "disturbed" and validity.text == "disturbed 1/3"
    assert validity.reason == "cpu pressure 41 % on a2 > 10 %"
    assert validity.disturbances == ("cpu pressure on a2",)
    assert cell_validity([QUIET]).text == "clean"
    # a recorded run before certificates: its "validity" was the replication window's reason
    old = load(SINGLE)[0].metadata
    assert cell_validity([old]).status is None and cell_validity([old]).text == "–"


def test_the_first_screen_counts_clean_disturbed_and_other_inconclusive_cells() -> None:
    samples = certified(load(SINGLE), lambda m: True, QUIET)
    samples = certified(samples, cell_is("multi-az", "write-1m-nj8-qd2"), HOG, verdict="inconclusive")
    samples = certified(
        samples, cell_is("single-az", "write-4k-nj8-qd1"), QUIET, verdict="inconclusive", verdict_reason="resync"
    )
    comparison = build_comparison(aggregate_samples(samples))
    line = validity_line(comparison)
    assert line == "15 certified clean, 1 disturbed (cpu pressure on a2 1), 1 inconclusive for other reasons"
    assert ("validity", line) in header_items(comparison, None)
    assert f"validity: {line}" in render_text(comparison).splitlines()
    page = render_html(comparison)
    assert '<th scope="col">validity</th>' in page
    assert 'title="cpu pressure 41 % on a2 &gt; 10 %">disturbed</td>' in page


def test_a_run_without_certificates_says_nothing_of_them() -> None:
    comparison = build_comparison(aggregate_samples(load(SINGLE)))
    assert validity_line(comparison) is None
    assert "validity" not in dict(header_items(comparison, None))
    assert validity_summary([]) == "0 certified clean, 0 disturbed, 0 inconclusive for other reasons"


def test_calibration_cells_are_counted_apart_and_a_failed_one_says_what_it_did() -> None:
    samples = read_samples(CALIBRATED)
    comparison = build_comparison(aggregate_samples(samples))
    assert calibration_line(comparison) == "12 cells, the model's inputs (no test reports them): all passed"
    failed = certified(
        samples,
        lambda m: (
            m.get("scenario") == "calibration"
            and m.get("workload") == "write-1m-nj1-qd16"
            and m["pair"] == "multi-az"
            and m["mode"] == "replicated"
        ),
        {},
        verdict="fail",
        verdict_reason="18.7 MiB/s < min 20 MiB/s",
    )
    line = calibration_line(build_comparison(aggregate_samples(failed)))
    assert line is not None and line.startswith("12 cells, the model's inputs (no test reports them); 1 did not pass")
    assert "still fed their pair's predictions" in line and "the run's exit status does not count them" in line
    assert line.endswith("calibration/multi-az/replicated/write-1m-nj1-qd16/none fail: 18.7 MiB/s < min 20 MiB/s")
    # the validity line counts the scenario cells only
    assert validity_line(build_comparison(aggregate_samples(certified(failed, lambda m: True, QUIET)))) == (
        "2 certified clean, 0 disturbed, 0 inconclusive for other reasons"
    )


def _ratio(workload: str, value: float, props: dict[str, str]) -> Sample:
    meta = {"scenario": "s", "pair": "p", "mode": "replicated", "workload": workload, "impairment": "none", **props}
    return Sample("model_ratio", value, "×", meta)


def test_the_model_fit_leaves_out_disturbed_cells_and_gives_the_share_with_them() -> None:
    fit = model_fit([_ratio("a", 1.0, QUIET), _ratio("b", 0.5, HOG), _ratio("c", 1.1, QUIET)])
    assert [c.key for c in fit.cells] == ["s/p/replicated/a/none", "s/p/replicated/c/none"]
    lines = fit.summary()
    assert lines[0] == (
        "model: 2 of 2 predicted cells within ±20% of the prediction (100%); "
        "1 disturbed cell left out (with them: 2 of 3, 67%)"
    )
    assert lines[1] == "  left out: s/p/replicated/b/none: disturbed: cpu pressure 41 % on a2 > 10 %"
    clean = model_fit([_ratio("a", 1.0, QUIET), _ratio("c", 1.1, QUIET)])
    assert clean.summary() == ["model: 2 of 2 predicted cells within ±20% of the prediction (100%)"]
