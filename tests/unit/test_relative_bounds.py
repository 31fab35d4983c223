"""Bounds between cells of one run: cross-AZ is held against same-AZ of the same replication
product, so a fast DRBD pair never excuses a slow md-nbd one (or the reverse)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harness.inventory.models import ThresholdSpec
from harness.plugin.relative import relative_verdicts
from harness.runfiles.samples import Sample


def _cell(pair: str, placement: str, replication: str | None, mib_s: float) -> Sample:
    meta = {
        "scenario": "replicated_write",
        "pair": pair,
        "mode": "replicated",
        "workload": "write-4k-nj1-qd1",
        "impairment": "none",
        "placement": placement,
    }
    if replication is not None:
        meta["replication"] = replication
    return Sample("bw", mib_s, "MiB/s", meta)


@given(
    drbd=st.tuples(st.floats(1, 1e4), st.floats(1, 1e4)),
    md=st.tuples(st.floats(1, 1e4), st.floats(1, 1e4)),
    limit=st.floats(0.01, 1),
)
def test_cross_az_is_compared_with_same_az_of_its_own_product(
    drbd: tuple[float, float], md: tuple[float, float], limit: float
) -> None:
    samples = [
        _cell("single-az", "same-az", "drbd", drbd[0]),
        _cell("multi-az", "cross-az", "drbd", drbd[1]),
        _cell("single-az-md-nbd", "same-az", "md-nbd", md[0]),
        _cell("multi-az-md-nbd", "cross-az", "md-nbd", md[1]),
    ]
    verdicts = dict(relative_verdicts(samples, ThresholdSpec(multi_az_vs_single_az=limit)))
    assert len(verdicts) == 2
    drbd_verdict = verdicts["replicated_write write-4k-nj1-qd1 [none] cross-AZ vs same-AZ MiB/s"]
    md_verdict = verdicts["replicated_write write-4k-nj1-qd1 [none] md-nbd cross-AZ vs same-AZ MiB/s"]
    assert (drbd_verdict.verdict == "pass") == (drbd[1] / drbd[0] >= limit)
    assert (md_verdict.verdict == "pass") == (md[1] / md[0] >= limit)


def test_cells_recorded_before_the_product_was_count_as_drbd() -> None:
    samples = [_cell("single-az", "same-az", None, 100.0), _cell("multi-az", "cross-az", "drbd", 10.0)]
    ((label, verdict),) = relative_verdicts(samples, ThresholdSpec(multi_az_vs_single_az=0.5))
    # paired as DRBD (no product in the label), and held to the ratio of the two: 10 / 100
    assert label == "replicated_write write-4k-nj1-qd1 [none] cross-AZ vs same-AZ MiB/s"
    assert (verdict.verdict, verdict.reason) == ("fail", "cross/same ratio 0.10 < 0.5")
