"""Change detection by E-divisive means, as Apache Otava computes it, as :class:`Shift` values.

E-divisive (Matteson and James, 2014) splits a series where the energy distance between the
two sides is largest, and keeps splitting each side while the split is significant.  Otava's
variant (Fleming et al., "Hunter", ICPE 2023) looks for splits in sliding windows and judges
each with Student's t-test rather than permutations: the same series always gives the same
change points (no random permutations), and a handful of runs is enough.  A split is kept
when its p-value is below ``max_pvalue`` *and* the means either side differ by more than
``min_change`` (the same smallest move as the median/MAD detector's, so both answer "did the
cell change by at least this much").

The library's change points become the harness's :class:`~harness.history.changes.Shift`: the
segment before each change point (from the previous one) and the segment after it (to the
next), their medians, the noise of the segment before, and the new level's distance from
the old in units of that noise.  Otava is imported when first used: it pulls in SciPy, which
costs a second that ``harness history`` with the default detector need not pay.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Final

from harness.history.changes import MIN_CHANGE, Shift, robust_noise

__all__ = ["MAX_PVALUE", "WINDOW", "edivisive_shifts"]

#: Otava's own default: one chance in a thousand that a split is noise.
MAX_PVALUE: Final = 0.001
#: Otava's default window: longer than any history the command reads (``--last`` ≤ 1000 runs
#: are windowed in halves of it), so a short history is judged in one piece.
WINDOW: Final = 50


def _change_points(series: list[float], max_pvalue: float, min_change: float, window: int) -> list[int]:
    from otava.analysis import compute_change_points

    points, _weak = compute_change_points(series, window_len=window, max_pvalue=max_pvalue, min_magnitude=min_change)
    return sorted({int(p.index) for p in points if 0 < int(p.index) < len(series)})


def _shift(before: list[float], after: list[float], index: int) -> Shift:
    centre, noise, level = statistics.median(before), robust_noise(before), statistics.median(after)
    distance = abs(level - centre)
    # no noise: any move is infinitely far out, no move is none
    score = distance / noise if noise > 0 else (math.inf if distance else 0.0)
    return Shift(index, centre, level, noise, score)


def edivisive_shifts(
    values: Sequence[float],
    *,
    max_pvalue: float = MAX_PVALUE,
    min_change: float = MIN_CHANGE,
    window: int = WINDOW,
) -> list[Shift]:
    """Every change point E-divisive finds in ``values``, oldest first, as shifts."""
    series = [float(v) for v in values]
    if any(not math.isfinite(v) for v in series):
        raise ValueError("a history series holds finite numbers only")
    if not 0 < max_pvalue < 1:
        raise ValueError(f"max p-value must be between 0 and 1, got {max_pvalue!r}")
    if window < 2:
        raise ValueError(f"window must be at least 2 runs, got {window}")
    if len(series) < 2:
        return []
    points = _change_points(series, max_pvalue, min_change, window)
    edges = [0, *points, len(series)]
    return [_shift(series[edges[i] : k], series[k : edges[i + 2]], k) for i, k in enumerate(points)]
