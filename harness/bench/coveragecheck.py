"""The interval of the median checked on measured repeats: how often the interval of ``k`` of a
cell's repeats contains the median of all of them.

The lognormal interval assumes its repeats are log-normal; whether the lab's are is a fact to
read off the lab.  For every cell with more than ``k`` repeats, each choice of ``k`` of them
(all, or a seeded sample of ``limit`` when there are more) gives an interval at the confidence,
and the check counts those containing the median of the cell's ``n`` repeats.  A share well
below the confidence says the assumption fails there (skewed, bimodal or drifting repeats):
use ``--interval order``.  It is a check, not an exact coverage: the median of ``n`` is itself
an estimate, from repeats the ``k`` are part of, which makes the share read high as ``k`` nears
``n``.  Pure.
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from harness.rules.medianinterval import IntervalMethod, fitting_method, median_interval

__all__ = ["CoverageCheck", "resampled_coverage"]

#: the most subsets of one cell's repeats taken for one ``k``
SUBSETS = 200


@dataclass(frozen=True)
class CoverageCheck:
    """Intervals from ``k`` repeats against the median of all of a cell's repeats."""

    k: int
    confidence: float
    method: IntervalMethod
    #: cells with more than ``k`` repeats, and the subsets of ``k`` taken from them
    cells: int
    trials: int
    #: subsets whose interval contained their cell's median of all repeats
    hits: int

    @property
    def share(self) -> float | None:
        return self.hits / self.trials if self.trials else None

    def describe(self) -> str:
        if not self.cells:
            return f"k={self.k}: no cell has more than {self.k} repeats"
        if self.share is None:
            return f"k={self.k}: {self.k} repeats give no {self.confidence:.0%} {self.method} interval"
        return (
            f"k={self.k}: the {self.confidence:.0%} {self.method} interval of {self.k} repeats contained the "
            f"median of all of its cell's repeats in {self.share:.0%} of {self.trials} subsets ({self.cells} cells)"
        )


def _subsets(n: int, k: int, rng: random.Random, limit: int) -> Iterator[Sequence[int]]:
    if math.comb(n, k) <= limit:
        yield from itertools.combinations(range(n), k)
    else:
        for _ in range(limit):
            yield rng.sample(range(n), k)


def resampled_coverage(
    runs: Iterable[Sequence[float]],
    k: int,
    confidence: float,
    method: IntervalMethod,
    *,
    limit: int = SUBSETS,
    seed: int = 0,
) -> CoverageCheck:
    """The check on each cell's repeats in ``runs`` (a cell whose repeats the lognormal interval
    cannot take is checked with the order-statistic one, as ``--repeat auto`` would judge it)."""
    if k < 1 or limit < 1:
        raise ValueError(f"k and the subsets per cell must be at least 1, got {k} and {limit}")
    rng = random.Random(seed)
    cells = trials = hits = 0
    for values in runs:
        if len(values) <= k:
            continue
        cells += 1
        median = statistics.median(values)
        cell_method = fitting_method(method, values)
        for chosen in _subsets(len(values), k, rng, limit):
            interval = median_interval([values[i] for i in chosen], confidence, cell_method)
            if interval is None:
                continue
            trials += 1
            hits += interval.low <= median <= interval.high
    return CoverageCheck(k, confidence, method, cells, trials, hits)
