"""Samples → cells: repeat statistics, verdict precedence, metadata merging, ordering."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.report.aggregate import (
    VERDICTS,
    Stat,
    Verdict,
    aggregate_samples,
    natural_key,
    normalise_verdict,
    worst_verdict,
)
from harness.runfiles.samples import METRICS, Sample

IDENTITY = {
    "scenario": "replicated_write",
    "pair": "single-az",
    "mode": "replicated",
    "workload": "randwrite-4k-nj8-qd1",
    "impairment": "none",
}
RANK = {"pass": 0, "inconclusive": 1, "fail": 2}

finite = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_infinity=False)
positive = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)
verdicts = st.sampled_from(VERDICTS)


def sample(metric: str, value: float, **metadata: Any) -> Sample:
    return Sample(metric, value, METRICS.get(metric, ""), {**IDENTITY, **metadata})


# --------------------------------------------------------------------------------------------
# Stat


@given(st.lists(finite, min_size=1, max_size=30))
def test_median_lies_within_min_and_max(values: list[float]) -> None:
    stat = Stat.of("bw", "MiB/s", values)
    assert stat is not None
    assert stat.n == len(values)
    assert stat.min == min(values) and stat.max == max(values)
    assert stat.min <= stat.median <= stat.max
    q1, q3 = stat.quartiles
    assert stat.min <= q1 <= stat.median <= q3 <= stat.max
    assert stat.iqr >= 0


@given(st.lists(positive, min_size=1, max_size=30))
def test_spread_is_range_over_median(values: list[float]) -> None:
    stat = Stat.of("bw", "MiB/s", values)
    assert stat is not None
    assert stat.spread is not None and stat.spread >= 0
    assert stat.spread == pytest.approx((max(values) - min(values)) / stat.median)
    if len(set(values)) == 1:
        assert stat.spread == 0


@given(st.lists(finite, max_size=10), st.integers(min_value=0, max_value=5))
def test_non_finite_values_are_counted_as_missing(values: list[float], nans: int) -> None:
    stat = Stat.of("bw", "MiB/s", [*values, *[math.nan] * nans])
    if not values:
        assert stat is None
        return
    assert stat is not None
    assert stat.n == len(values)
    assert stat.missing == nans


def test_median_of_even_count_and_of_huge_values() -> None:
    assert Stat("x", "", (1.0, 4.0, 2.0, 3.0)).median == 2.5
    huge = Stat("x", "", (1e308, 1.7e308))
    assert math.isfinite(huge.median) and 1e308 <= huge.median <= 1.7e308


def test_spread_undefined_when_median_is_zero_but_values_differ() -> None:
    assert Stat("x", "", (-1.0, 0.0, 1.0)).spread is None
    assert Stat("x", "", (0.0, 0.0)).spread == 0.0


def test_stat_refuses_empty_or_non_finite() -> None:
    with pytest.raises(ValueError, match="at least one"):
        Stat("x", "", ())
    with pytest.raises(ValueError, match="finite"):
        Stat("x", "", (1.0, math.inf))


# --------------------------------------------------------------------------------------------
# Verdicts


def test_worst_verdict_precedence() -> None:
    assert worst_verdict([]) is None
    assert worst_verdict([None, None]) is None
    assert worst_verdict(["pass", None]) == "pass"
    assert worst_verdict(["pass", "inconclusive"]) == "inconclusive"
    assert worst_verdict(["inconclusive", "fail", "pass"]) == "fail"


def test_normalise_verdict() -> None:
    assert normalise_verdict(None) is None
    assert normalise_verdict("") is None
    assert normalise_verdict(" FAIL ") == "fail"
    assert normalise_verdict("error") == "inconclusive"  # unknown is never a pass


@given(st.lists(st.lists(verdicts, min_size=1, max_size=3), min_size=1, max_size=6))
def test_cell_verdict_is_worst_repeat(per_repeat: list[list[Verdict]]) -> None:
    samples = []
    for r, repeat_verdicts in enumerate(per_repeat):
        for i, v in enumerate(repeat_verdicts):
            samples.append(sample("bw", 10.0 + i, repeat=r, verdict=v, verdict_reason=f"r{r} {v}"))
    [cell] = aggregate_samples(samples)
    repeat_worst = [max(vs, key=RANK.__getitem__) for vs in per_repeat]
    expected = max(repeat_worst, key=RANK.__getitem__)
    assert cell.verdict == expected
    assert sum(cell.verdict_counts.values()) == len(per_repeat)
    assert cell.verdict_counts[expected] == repeat_worst.count(expected)
    first = repeat_worst.index(expected)
    assert cell.verdict_reason == f"r{first} {expected}"
    assert cell.repeats == tuple(range(len(per_repeat)))


def test_cell_without_verdicts_has_none() -> None:
    [cell] = aggregate_samples([sample("bw", 1.0)])
    assert cell.verdict is None and cell.verdict_reason is None and not cell.verdict_counts


# --------------------------------------------------------------------------------------------
# Grouping and metadata


@given(st.lists(positive, min_size=1, max_size=8), st.lists(positive, min_size=1, max_size=8))
def test_repeats_of_one_cell_are_aggregated_per_metric(bws: list[float], iops: list[float]) -> None:
    samples = [sample("bw", v, repeat=r, placement="same-az") for r, v in enumerate(bws)]
    samples += [sample("iops", v, repeat=r, placement="same-az") for r, v in enumerate(iops)]
    samples.append(sample("bw", 5.0, pair="multi-az", placement="cross-az"))
    cells = aggregate_samples(samples)
    assert [c.pair for c in cells] == ["single-az", "multi-az"]
    single = cells[0]
    assert single.stats["bw"].n == len(bws)
    assert single.stats["iops"].n == len(iops)
    assert single.stats["bw"].unit == "MiB/s"
    assert single.median("bw") == Stat("bw", "MiB/s", tuple(bws)).median
    assert single.median("clat_p99") is None
    assert cells[1].stats["bw"].values == (5.0,)


def test_metadata_common_varying_and_per_repeat() -> None:
    base = {"placement": "same-az", "protocol": "C", "fio_version": "fio-3.33", "tc": {"delay": "1ms"}}
    samples = [
        sample("bw", 10.0, **base, repeat=0, kernel="6.1.0", verdict="pass", test_id="t[r0]", rtt_ms=0.30),
        sample("bw", 12.0, **base, repeat=1, kernel="6.1.1", verdict="pass", test_id="t[r1]", rtt_ms=0.34),
        sample("iops", 3000.0, **base, repeat=1, kernel="6.1.1", verdict="pass", test_id="t[r1]", rtt_ms=0.34),
    ]
    [cell] = aggregate_samples(samples)
    assert cell.identity == IDENTITY
    assert cell.key == "replicated_write/single-az/replicated/randwrite-4k-nj8-qd1/none"
    assert cell.metadata["protocol"] == "C" and cell.metadata["tc"] == {"delay": "1ms"}
    assert cell.placement == "same-az"
    assert cell.varying == {"kernel": ("6.1.0", "6.1.1")}
    assert cell.value_text("kernel") == "6.1.0 | 6.1.1"
    assert cell.value_text("nothing") == ""
    for key in ("repeat", "verdict", "rtt_ms", "test_id"):
        assert key not in cell.metadata and key not in cell.varying
    assert cell.test_ids == ("t[r0]", "t[r1]")
    # No rtt metric recorded: the probe's rtt_ms is used, once per repeat.
    assert cell.stats["rtt"].values == (0.30, 0.34)


def test_rtt_metric_wins_over_metadata() -> None:
    [cell] = aggregate_samples([sample("rtt", 2.0, rtt_ms=9.0), sample("bw", 1.0, rtt_ms=9.0)])
    assert cell.stats["rtt"].values == (2.0,)


def test_missing_identity_keys_become_dashes() -> None:
    [cell] = aggregate_samples([Sample("bw", 1.0, "MiB/s", {"scenario": "s"})])
    assert cell.key == "s/-/-/-/-"
    assert cell.pair == "-" and cell.mode == "-"


def test_all_nan_metric_is_left_out() -> None:
    [cell] = aggregate_samples([sample("bw", math.nan), sample("iops", 5.0)])
    assert "bw" not in cell.stats and cell.median("iops") == 5.0


def _matrix() -> list[Sample]:
    out = []
    for workload in ("write-1m-nj1-qd16", "randwrite-4k-nj16-qd1", "randwrite-4k-nj8-qd1"):
        for pair, placement, mode in (
            ("multi-az", "cross-az", "replicated"),
            ("single-az", "same-az", "replicated"),
            ("single-az", "local", "disconnected"),
            ("single-az", "local", "raw"),
        ):
            for impairment in ("delay-5ms", "none"):
                out.append(
                    sample(
                        "bw", 1.0, pair=pair, placement=placement, mode=mode, workload=workload, impairment=impairment
                    )
                )
    return out


def test_cells_are_sorted_naturally_and_by_stack_and_distance() -> None:
    keys = [(c.workload, c.impairment, c.mode, c.pair) for c in aggregate_samples(_matrix())]
    assert keys[:5] == [
        ("randwrite-4k-nj8-qd1", "none", "raw", "single-az"),
        ("randwrite-4k-nj8-qd1", "none", "disconnected", "single-az"),
        ("randwrite-4k-nj8-qd1", "none", "replicated", "single-az"),
        ("randwrite-4k-nj8-qd1", "none", "replicated", "multi-az"),
        ("randwrite-4k-nj8-qd1", "delay-5ms", "raw", "single-az"),
    ]
    assert [w for w, *_ in keys[::8]] == ["randwrite-4k-nj8-qd1", "randwrite-4k-nj16-qd1", "write-1m-nj1-qd16"]


@given(st.permutations(_matrix()))
def test_cell_order_does_not_depend_on_sample_order(samples: list[Sample]) -> None:
    assert [c.key for c in aggregate_samples(samples)] == [c.key for c in aggregate_samples(_matrix())]


def test_natural_key() -> None:
    assert sorted(["nj16", "nj8", "NJ1", "a"], key=natural_key) == ["a", "NJ1", "nj8", "nj16"]
