"""Tolerance rules: how much a metric may move against a baseline before it is a regression.

A rule is one metric, the direction that is better for it, and an allowed relative change:
``bw: 5%`` lets bandwidth drop by 5 %, ``clat_p99: 10%`` lets p99 latency rise by 10 %.
The inventory may set its own in ``baseline_tolerances:`` (``off`` drops a default rule).

Changes are judged on the log of the ratio of medians, ``log(current / reference)``, with
the improvement threshold mirroring the regression one.  That makes the judgement exactly
antisymmetric: if A → B is a regression, B → A is an improvement by the same rule.  With
plain percentages it would not be (a +100 % latency rise is a -50 % fall when swapped, which
a 100 % tolerance could never call an improvement).

Pure: no file, no inventory import.  Below both of its users: the inventory model parses its
``baseline_tolerances:`` section here, and the baseline gate (:mod:`harness.baseline`) judges
with the rules.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

__all__ = [
    "DEFAULT_TOLERANCES",
    "METRIC_DIRECTIONS",
    "TOLERANCES_JSON_SCHEMA",
    "Direction",
    "Tolerance",
    "format_percent",
    "parse_tolerances",
    "tolerance_rules",
]

#: Which way is better for a metric.
Direction = Literal["higher", "lower"]

#: The metrics a tolerance may be given for.  Harness timings (wall, overhead) measure the
#: harness, not the cluster, and predictions are not measurements, so they are not here.
METRIC_DIRECTIONS: Final[Mapping[str, Direction]] = MappingProxyType(
    {
        "bw": "higher",
        "iops": "higher",
        "clat_mean": "lower",
        "clat_p50": "lower",
        "clat_p99": "lower",
        "clat_p999": "lower",
        "rtt": "lower",
        "lost_writes": "lower",
    }
)

#: Rules used when the inventory says nothing (bandwidth/IOPS -5 %, p99 +10 %).
DEFAULT_TOLERANCES: Final[Mapping[str, float]] = MappingProxyType({"bw": 0.05, "iops": 0.05, "clat_p99": 0.10})

# "5%", "-5 %", "+10%", "2.5%": a percentage with an optional sign.
_PERCENT: Final = re.compile(r"\A\s*([+-]?)\s*([0-9]+(?:\.[0-9]+)?)\s*%\s*\Z")
_OFF: Final = frozenset({"off"})

#: JSON Schema of the inventory's ``baseline_tolerances:`` as written (percent strings), for
#: editors; the validated values are fractions, which is not what a user types.
TOLERANCES_JSON_SCHEMA: Final[dict[str, object]] = {
    "type": "object",
    "propertyNames": {"enum": list(METRIC_DIRECTIONS)},
    "additionalProperties": {
        "anyOf": [{"type": "string", "pattern": r"^\s*[+-]?\s*[0-9]+(\.[0-9]+)?\s*%\s*$"}, {"enum": ["off", None]}]
    },
}
# A drop of 100 % or more would let anything pass; a rise is unbounded but 1000 % is already
# "ten times slower is fine", which is no gate at all.
_MAX_DROP_PCT: Final = 100.0
_MAX_RISE_PCT: Final = 1000.0


def format_percent(fraction: float, *, signed: bool = True) -> str:
    """``-0.052`` → ``-5.2 %`` (a real minus sign reads better in a pull request)."""
    # One decimal below 100 %, none above; round first so that -0.04 % reads "0 %", not "−0 %".
    pct = round(fraction * 100, 1 if abs(fraction) < 1 else None)
    text = f"{abs(pct):.1f}".rstrip("0").rstrip(".")
    if not signed or pct == 0:
        return f"{text} %"
    return f"{'+' if pct > 0 else '−'}{text} %"


@dataclass(frozen=True)
class Tolerance:
    """``metric`` may get worse by ``limit`` (a fraction, ``0.05`` = 5 %) relative to the baseline."""

    metric: str
    direction: Direction
    limit: float

    def __post_init__(self) -> None:
        pct = self.limit * 100
        ok = 0 <= pct < _MAX_DROP_PCT if self.direction == "higher" else 0 <= pct <= _MAX_RISE_PCT
        if not ok:  # also false for NaN
            raise ValueError(f"{self.metric}: tolerance {self.limit!r} out of range")

    @property
    def _bound(self) -> float:
        """The log-ratio at which a change becomes a regression (negative for higher-is-better)."""
        return math.log1p(-self.limit) if self.direction == "higher" else math.log1p(self.limit)

    def is_regression(self, log_ratio: float) -> bool:
        """``log(current / reference)`` is worse than the tolerance allows."""
        bound = self._bound
        return log_ratio < bound if self.direction == "higher" else log_ratio > bound

    def is_improvement(self, log_ratio: float) -> bool:
        """The mirror of :meth:`is_regression`: the reverse change would be a regression."""
        return self.is_regression(-log_ratio)

    def describe(self) -> str:
        """``−5 %`` for a drop, ``+10 %`` for a rise: the change the rule still accepts."""
        return format_percent(-self.limit if self.direction == "higher" else self.limit)


def _parse_one(metric: str, value: object) -> float | None:
    direction = METRIC_DIRECTIONS[metric]
    if value is None or (isinstance(value, str) and value.strip().lower() in _OFF):
        return None
    if isinstance(value, bool) or not isinstance(value, str):
        # A bare number is ambiguous (is 5 five percent or 500 %?); make the unit explicit.
        raise ValueError(f"{metric}: write the tolerance as a percentage such as 5%, or off; got {value!r}")
    match = _PERCENT.match(value)
    if match is None:
        raise ValueError(f"{metric}: {value!r} is not a percentage such as 5% (or off)")
    sign, number = match.groups()
    pct = float(number)
    if direction == "higher" and sign == "+":
        raise ValueError(
            f"{metric}: higher is better, so its tolerance is an allowed drop: write {number}% or -{number}%"
        )
    if direction == "lower" and sign == "-":
        raise ValueError(
            f"{metric}: lower is better, so its tolerance is an allowed rise: write {number}% or +{number}%"
        )
    if direction == "higher" and pct >= _MAX_DROP_PCT:
        raise ValueError(f"{metric}: {value!r} allows any drop; use less than {_MAX_DROP_PCT:g}%, or off")
    if direction == "lower" and pct > _MAX_RISE_PCT:
        raise ValueError(f"{metric}: {value!r} allows almost any rise; use at most {_MAX_RISE_PCT:g}%, or off")
    return pct / 100


def parse_tolerances(value: object) -> dict[str, float | None]:
    """The inventory's ``baseline_tolerances:`` mapping → metric → fraction (``None``: rule off).

    Raises ValueError (pydantic turns it into a file:line error) for unknown metrics, values that
    are not percentages, and a sign that points the wrong way for the metric.
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError("expected a mapping of metric to tolerance, e.g. {bw: 5%, clat_p99: 10%}")
    out: dict[str, float | None] = {}
    for metric, tolerance in value.items():
        if metric not in METRIC_DIRECTIONS:
            known = ", ".join(METRIC_DIRECTIONS)
            raise ValueError(f"unknown metric {metric!r} (misspelled?); tolerances exist for: {known}")
        out[str(metric)] = _parse_one(str(metric), tolerance)
    return out


def tolerance_rules(overrides: Mapping[str, float | None] | None = None) -> tuple[Tolerance, ...]:
    """The defaults with ``overrides`` applied (``None`` removes a rule), in a stable order."""
    merged: dict[str, float | None] = {**DEFAULT_TOLERANCES, **(overrides or {})}
    return tuple(
        Tolerance(metric, METRIC_DIRECTIONS[metric], limit)
        for metric in METRIC_DIRECTIONS
        if (limit := merged.get(metric)) is not None
    )
