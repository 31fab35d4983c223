"""The model-fit figure: share of predicted cells within ±20 % and the worst cells."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harness.report.modelfit import model_fit
from harness.runfiles.samples import Sample


def _ratio(workload: str, value: float, repeat: int = 0, bottleneck: str = "latency bound") -> Sample:
    meta = {
        "scenario": "s",
        "pair": "p",
        "mode": "replicated",
        "workload": workload,
        "impairment": "none",
        "repeat": repeat,
        "bottleneck": bottleneck,
    }
    return Sample("model_ratio", value, "×", meta)


@given(st.lists(st.floats(0.01, 100.0), min_size=1, max_size=30))
def test_share_counts_exactly_the_cells_inside_the_band(ratios: list[float]) -> None:
    fit = model_fit([_ratio(f"w{i}", r) for i, r in enumerate(ratios)])
    inside = sum(1 for r in ratios if 0.8 <= r <= 1.2)
    assert fit.fitted == inside
    assert fit.share == inside / len(ratios)
    worst = fit.worst(n=len(ratios))
    assert len(worst) == len(ratios) - inside
    errors = [c.error for c in worst]
    assert errors == sorted(errors, reverse=True)


def test_repeats_are_summarised_by_their_median_and_other_metrics_ignored() -> None:
    samples = [_ratio("w", 0.5, 0), _ratio("w", 1.0, 1), _ratio("w", 1.1, 2), Sample("bw", 3.0, "MiB/s", {})]
    fit = model_fit(samples)
    assert [c.ratio for c in fit.cells] == [1.0]
    assert fit.summary()[0].startswith("model: 1 of 1 predicted cells within ±20%")


def test_the_summary_names_the_worst_cell_and_its_limit() -> None:
    fit = model_fit([_ratio("a", 1.0), _ratio("b", 0.4, bottleneck="measured replication path"), _ratio("c", 1.5)])
    lines = fit.summary()
    assert "1 of 3" in lines[0]
    assert "0.40×" in lines[1] and "/b/" in lines[1] and "measured replication path" in lines[1]
    assert "1.50×" in lines[2]


def test_no_predictions_no_summary() -> None:
    assert model_fit([]).summary() == []
