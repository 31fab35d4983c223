"""The confidence interval of the median of a cell's repeats, by one of two methods.

``lognormal`` (the default) assumes run-to-run bandwidth on a steady host is close to
log-normal: a product of many small independent slowdowns, never below 0, with a longer slow
tail than fast one.  The median of a log-normal is ``exp(μ)``, ``μ`` the mean of the logarithms,
so on ``log(values)`` the interval is ``mean ± t_{(1+c)/2, n−1} · s/√n``, exponentiated (Student's
t, as the spread ``s`` is estimated from the same repeats); its centre, the geometric mean, is
the estimate of the median.  It exists from 2 repeats, though ``t_{0.975, 1} = 12.7`` makes two
rarely tight, and takes positive finite values only.

``order`` assumes nothing of the distribution (for a noisy host whose repeats are skewed or
bimodal).  With ``n`` repeats sorted, the true median lies between the ``l``-th smallest and the
``l``-th largest with probability ``1 − 2·P(B ≤ l − 1)``, ``B`` the number of repeats below the
median, binomial ``(n, ½)``; the interval takes the tightest ``l`` whose coverage still reaches
the confidence.  Even the widest, from the smallest repeat to the largest, covers only
``1 − 2·½ⁿ``, so a 95 % interval needs at least 6 repeats (5 give 93.75 %; :func:`min_runs`).

Pure; Student's t quantiles from SciPy.
"""

from __future__ import annotations

import math
import statistics
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, Literal, get_args

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_METHOD",
    "INTERVAL_METHODS",
    "METHOD_HELP",
    "IntervalMethod",
    "MedianInterval",
    "check_confidence",
    "check_method",
    "coverage",
    "fitting_method",
    "lognormal_fits",
    "median_interval",
    "min_runs",
    "t_quantile",
]

IntervalMethod = Literal["lognormal", "order"]
INTERVAL_METHODS: Final[tuple[IntervalMethod, ...]] = get_args(IntervalMethod)
#: bandwidth on a steady host is close to log-normal, and that interval is tight with fewer repeats
DEFAULT_METHOD: Final[IntervalMethod] = "lognormal"
#: what each method assumes, as ``--interval``'s help says it (an argparse help: ``%%`` is ``%``)
METHOD_HELP: Final = (
    "the interval of the median: lognormal assumes run-to-run bandwidth on a steady host is close to "
    "log-normal and can stop from 3 repeats; order assumes nothing, for a noisy or skewed host, and "
    "needs 6 repeats at 95 %%"
)
#: The usual 95 %: one cell in twenty may have its true median outside its interval.
DEFAULT_CONFIDENCE: Final = 0.95


def check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1 (0.95 is 95 %), got {confidence!r}")


def check_method(method: str) -> None:
    if method not in INTERVAL_METHODS:
        raise ValueError(f"interval method must be {' or '.join(INTERVAL_METHODS)}, got {method!r}")


def coverage(n: int, rank: int) -> float:
    """Probability that the median lies between the ``rank``-th smallest and the ``rank``-th
    largest of ``n`` independent repeats (``1 ≤ rank ≤ (n + 1) / 2``)."""
    if not 1 <= rank <= (n + 1) // 2:
        raise ValueError(f"rank must be 1..{(n + 1) // 2} for {n} repeats, got {rank}")
    below = sum(math.comb(n, k) for k in range(rank))
    return 1.0 - 2.0 * below / 2.0**n


def min_runs(confidence: float = DEFAULT_CONFIDENCE, method: IntervalMethod = DEFAULT_METHOD) -> int:
    """The fewest repeats with which ``method`` gives an interval at ``confidence``: 2 for the
    lognormal one (a spread needs two); for the order-statistic one the smallest ``n`` whose
    widest interval covers it, ``1 − 2·½ⁿ ≥ confidence``."""
    check_confidence(confidence)
    check_method(method)
    if method == "lognormal":
        return 2
    n = max(1, math.ceil(math.log2(2.0 / (1.0 - confidence))))
    while coverage(n, 1) < confidence:  # guards the float rounding of the logarithm
        n += 1
    return n


@lru_cache(maxsize=1024)
def t_quantile(p: float, df: int) -> float:
    """Student's t quantile: the ``t`` with ``P(T ≤ t) = p`` for ``df`` degrees of freedom."""
    if not 0 < p < 1:
        raise ValueError(f"a quantile's probability must be between 0 and 1, got {p!r}")
    if df < 1:
        raise ValueError(f"Student's t needs at least 1 degree of freedom, got {df}")
    from scipy.special import stdtrit

    return float(stdtrit(df, p))


@dataclass(frozen=True)
class MedianInterval:
    """The median of ``n`` repeats and its interval by ``method``."""

    n: int
    #: The method's estimate of the median: the middle repeat (``order``) or the geometric
    #: mean (``lognormal``, the interval's centre on a log scale).
    median: float
    low: float
    high: float
    #: The interval's coverage: exact and at least the confidence asked for (``order``), or the
    #: confidence itself, exact when the repeats are log-normal (``lognormal``).
    coverage: float
    method: IntervalMethod
    #: ``order``: ``low`` is the ``rank``-th smallest repeat, ``high`` the ``rank``-th largest.
    rank: int | None = None

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    @property
    def relative_half_width(self) -> float:
        """Half-width over ``|median|``; 0 for a point interval, inf around a zero median."""
        if self.half_width == 0:
            return 0.0
        return self.half_width / abs(self.median) if self.median else math.inf


def _finite(values: Iterable[float]) -> list[float]:
    data = [float(v) for v in values]
    if any(not math.isfinite(v) for v in data):
        raise ValueError("repeats hold finite numbers only")
    return data


def lognormal_fits(values: Iterable[float]) -> bool:
    """Whether the lognormal interval can take ``values``: every one finite and above 0."""
    return all(math.isfinite(v) and v > 0 for v in values)


def fitting_method(method: IntervalMethod, *sides: Sequence[float]) -> IntervalMethod:
    """``method``, or ``order`` where the lognormal interval cannot take a side's values (a
    figure of 0): the distribution-free interval takes any finite repeats."""
    return method if method == "order" or all(lognormal_fits(side) for side in sides) else "order"


_LOG_MAX: Final = math.log(sys.float_info.max)


def _order_interval(data: Sequence[float], confidence: float) -> MedianInterval | None:
    data = sorted(data)
    n = len(data)
    if n == 0 or coverage(n, 1) < confidence:
        return None
    rank = 1
    while rank + 1 <= (n + 1) // 2 and coverage(n, rank + 1) >= confidence:
        rank += 1
    median = statistics.median(data)
    return MedianInterval(n, median, data[rank - 1], data[n - rank], coverage(n, rank), "order", rank)


def _exp(x: float) -> float:
    """``exp(x)``, infinite past the float range (an interval of wildly apart repeats)."""
    return math.exp(x) if x < _LOG_MAX else math.inf


def _lognormal_interval(data: Sequence[float], confidence: float) -> MedianInterval | None:
    bad = next((v for v in data if v <= 0), None)
    if bad is not None:
        raise ValueError(f"the lognormal interval takes repeats above 0 only (a bandwidth), got {bad!r}")
    n = len(data)
    if n < 2:
        return None
    logs = [math.log(v) for v in data]
    mean = math.fsum(logs) / n
    half = t_quantile((1 + confidence) / 2, n - 1) * statistics.stdev(logs, mean) / math.sqrt(n)
    # the geometric mean lies between the smallest and the largest repeat, and inside its own
    # interval: the rounding of exp must not move it out (identical repeats give exactly them)
    centre = min(max(math.exp(mean), min(data)), max(data))
    if half == 0:
        return MedianInterval(n, centre, centre, centre, confidence, "lognormal")
    low, high = min(math.exp(mean - half), centre), max(_exp(mean + half), centre)
    return MedianInterval(n, centre, low, high, confidence, "lognormal")


def median_interval(
    values: Iterable[float], confidence: float = DEFAULT_CONFIDENCE, method: IntervalMethod = DEFAULT_METHOD
) -> MedianInterval | None:
    """The interval of the median of ``values`` at ``confidence`` by ``method``; ``None`` with
    fewer than :func:`min_runs` repeats.  The order-statistic interval is the tightest that
    covers ``confidence``.  A value that is not finite, or (lognormal) not above 0, is refused."""
    check_confidence(confidence)
    check_method(method)
    data = _finite(values)
    return _lognormal_interval(data, confidence) if method == "lognormal" else _order_interval(data, confidence)
