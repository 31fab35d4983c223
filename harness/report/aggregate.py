"""Samples → cells: one :class:`Cell` per :func:`~harness.runfiles.samples.cell_key`, repeats aggregated.

A cell is one point of the test matrix (scenario, pair, mode, workload, impairment).  With
``--repeat N`` it holds N measurements of every metric; every table, CSV row and baseline
comparison reports the *median* of those, with their spread, because one noisy repeat must not
move the number a verdict is read from.

Pure: this module reads :class:`~harness.runfiles.samples.Sample` records and nothing else.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal, get_args

from harness.report.validity import CellValidity, cell_validity
from harness.runfiles.samples import IDENTITY_KEYS, METRICS, Sample, cell_key

__all__ = [
    "MODE_ORDER",
    "PER_REPEAT_KEYS",
    "PLACEMENT_ORDER",
    "VERDICTS",
    "Cell",
    "Stat",
    "Verdict",
    "aggregate_samples",
    "cell_sort_key",
    "natural_key",
    "normalise_verdict",
    "worst_verdict",
]

Verdict = Literal["pass", "inconclusive", "fail"]
#: Verdicts from best to worst: when repeats disagree the worst one is the cell's verdict, so a
#: single failed repeat can never hide behind passing ones, and "too noisy to tell" (inconclusive)
#: still outranks a pass.
VERDICTS: Final[tuple[Verdict, ...]] = get_args(Verdict)
_VERDICT_RANK: Final[Mapping[str, int]] = {v: i for i, v in enumerate(VERDICTS)}

#: Stack order (raw disk → DRBD disconnected → replicated), used to order table columns.
MODE_ORDER: Final[tuple[str, ...]] = ("raw", "disconnected", "replicated")
#: Distance order: the nearer placement is the reference a farther one is compared to.
PLACEMENT_ORDER: Final[tuple[str, ...]] = ("local", "same-az", "cross-az")

#: Metadata that differs between the repeats of one cell by construction; it is aggregated
#: (verdict, repeats, the ``rtt`` statistic) rather than reported as "varying provenance".
PER_REPEAT_KEYS: Final[frozenset[str]] = frozenset({"repeat", "verdict", "verdict_reason", "rtt_ms", "test_id"})

_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key that orders ``nj8`` before ``nj16`` (plain string order would not)."""
    return tuple(
        (0, int(part), "") if part.isdecimal() else (1, 0, part.lower()) for part in _DIGITS.split(text) if part
    )


def _rank(value: str | None, order: Sequence[str]) -> int:
    return order.index(value) if value in order else len(order)


def normalise_verdict(value: object) -> Verdict | None:
    """A sample's ``verdict`` metadata as a :data:`Verdict`; ``None`` when the sample has none.

    An unknown word counts as ``inconclusive``: the harness cannot call it a pass, and it is not
    evidence of a regression either.
    """
    if value is None or value == "":
        return None
    text = str(value).strip().lower()
    if text in _VERDICT_RANK:
        return text  # type: ignore[return-value]  # membership in VERDICTS checked just above
    return "inconclusive"


def worst_verdict(verdicts: Iterable[Verdict | None]) -> Verdict | None:
    """fail beats inconclusive beats pass; ``None`` (no verdict recorded) never wins."""
    worst: Verdict | None = None
    for v in verdicts:
        if v is not None and (worst is None or _VERDICT_RANK[v] > _VERDICT_RANK[worst]):
            worst = v
    return worst


@dataclass(frozen=True)
class Stat:
    """The repeats of one metric in one cell: finite values only, sorted."""

    metric: str
    unit: str
    values: tuple[float, ...]
    #: Values dropped because they were NaN/inf (a JSON ``null`` in samples.ndjson).
    missing: int = 0

    def __post_init__(self) -> None:
        if not self.values:
            raise ValueError(f"{self.metric}: a statistic needs at least one finite value")
        if any(not math.isfinite(v) for v in self.values):
            raise ValueError(f"{self.metric}: values must be finite")
        object.__setattr__(self, "values", tuple(sorted(float(v) for v in self.values)))

    @classmethod
    def of(cls, metric: str, unit: str, values: Iterable[float]) -> Stat | None:
        """The statistic of ``values`` ignoring non-finite ones; ``None`` if none is finite."""
        raw = [float(v) for v in values]
        finite = [v for v in raw if math.isfinite(v)]
        return cls(metric, unit, tuple(finite), len(raw) - len(finite)) if finite else None

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def median(self) -> float:
        n = len(self.values)
        if n % 2:
            return self.values[n // 2]
        lo, hi = self.values[n // 2 - 1], self.values[n // 2]
        mid = (lo + hi) / 2
        if not math.isfinite(mid):  # lo + hi overflowed near the float limit
            mid = lo / 2 + hi / 2
        # Rounding must never push the median outside the two values it lies between.
        return min(max(mid, lo), hi)

    @property
    def min(self) -> float:
        return self.values[0]

    @property
    def max(self) -> float:
        return self.values[-1]

    @property
    def spread(self) -> float | None:
        """Relative spread ``(max - min) / |median|``; ``None`` when the median is 0 but values differ."""
        width = self.max - self.min
        if width == 0:
            return 0.0
        median = abs(self.median)
        return width / median if median > 0 else None

    @property
    def quartiles(self) -> tuple[float, float]:
        """(Q1, Q3), inclusive method so that they stay inside [min, max] for small n."""
        if self.n == 1:
            return self.values[0], self.values[0]
        q1, _, q3 = statistics.quantiles(self.values, n=4, method="inclusive")
        return q1, q3

    @property
    def iqr(self) -> float:
        q1, q3 = self.quartiles
        return q3 - q1


@dataclass(frozen=True)
class Cell:
    """All repeats of one cell, aggregated."""

    key: str
    identity: Mapping[str, str]
    #: Metadata with the same value in every sample of the cell (identity, provenance, shape).
    metadata: Mapping[str, Any]
    #: Metadata whose value differs between samples (per-repeat keys excluded): distinct values
    #: in first-seen order.  Provenance showing up here means the repeats are not comparable.
    varying: Mapping[str, tuple[Any, ...]]
    stats: Mapping[str, Stat]
    verdict: Verdict | None = None
    verdict_reason: str | None = None
    #: How many repeats ended in each verdict (a repeat's verdict is the worst of its samples).
    verdict_counts: Mapping[str, int] = field(default_factory=dict)
    repeats: tuple[int, ...] = (0,)
    test_ids: tuple[str, ...] = ()
    #: the cell's validity certificates over its repeats
    validity: CellValidity = field(default_factory=CellValidity)

    @property
    def scenario(self) -> str:
        return self.identity["scenario"]

    @property
    def pair(self) -> str:
        return self.identity["pair"]

    @property
    def mode(self) -> str:
        return self.identity["mode"]

    @property
    def workload(self) -> str:
        return self.identity["workload"]

    @property
    def impairment(self) -> str:
        return self.identity["impairment"]

    @property
    def placement(self) -> str | None:
        value = self.metadata.get("placement")
        return None if value is None else str(value)

    def median(self, metric: str) -> float | None:
        stat = self.stats.get(metric)
        return None if stat is None else stat.median

    def value_text(self, key: str) -> str:
        """Metadata ``key`` as text: the common value, or all values joined with `` | ``."""
        if key in self.metadata:
            value = self.metadata[key]
            return "" if value is None else str(value)
        if key in self.varying:
            return " | ".join(str(v) for v in self.varying[key])
        return ""


def _repeat_index(metadata: Mapping[str, Any]) -> int:
    value = metadata.get("repeat", 0)
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _distinct(values: Iterable[Any]) -> tuple[Any, ...]:
    # Metadata values may be dicts/lists (e.g. a tc read-back), so dedupe by equality, not hash.
    out: list[Any] = []
    for value in values:
        if value not in out:
            out.append(value)
    return tuple(out)


def _split_metadata(samples: Sequence[Sample]) -> tuple[dict[str, Any], dict[str, tuple[Any, ...]]]:
    """The metadata common to every sample, and the metadata whose value differs between them."""
    keys: dict[str, None] = {}
    for s in samples:
        keys.update(dict.fromkeys(s.metadata))
    metadata: dict[str, Any] = {}
    varying: dict[str, tuple[Any, ...]] = {}
    for k in keys:
        if k in PER_REPEAT_KEYS:
            continue
        # A key absent from some samples counts as differing (None), which is what it is.
        distinct = _distinct(s.metadata.get(k) for s in samples)
        if len(distinct) == 1:
            metadata[k] = distinct[0]
        else:
            varying[k] = distinct
    return metadata, varying


def _metric_stats(samples: Sequence[Sample]) -> dict[str, Stat]:
    by_metric: dict[str, list[Sample]] = {}
    for s in samples:
        by_metric.setdefault(s.metric, []).append(s)
    stats: dict[str, Stat] = {}
    for metric, group in by_metric.items():
        stat = Stat.of(metric, group[0].unit or METRICS.get(metric, ""), (s.value for s in group))
        if stat is not None:
            stats[metric] = stat
    return stats


def _probe_rtt_stat(samples: Sequence[Sample]) -> Stat | None:
    """Before the rtt metric exists every sample still carries the probe's rtt_ms: one value per
    repeat, so the tables can show measured RTT either way."""
    per_repeat: dict[int, float] = {}
    for s in samples:
        rtt = s.metadata.get("rtt_ms")
        if isinstance(rtt, int | float) and not isinstance(rtt, bool):
            per_repeat.setdefault(_repeat_index(s.metadata), float(rtt))
    return Stat.of("rtt", METRICS["rtt"], per_repeat.values())


def _repeat_verdicts(samples: Sequence[Sample]) -> tuple[dict[int, Verdict | None], dict[int, dict[str, str]]]:
    """Each repeat's verdict (the worst of its samples), and per repeat the first reason given for each verdict."""
    verdicts: dict[int, Verdict | None] = {}
    reasons: dict[int, dict[str, str]] = {}
    for s in samples:
        r = _repeat_index(s.metadata)
        verdict = normalise_verdict(s.metadata.get("verdict"))
        verdicts[r] = worst_verdict([verdicts.get(r), verdict])
        text = s.metadata.get("verdict_reason")
        if verdict is not None and text:
            reasons.setdefault(r, {}).setdefault(verdict, str(text))
    return verdicts, reasons


def _verdict_counts(repeat_verdicts: Mapping[int, Verdict | None]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for v in repeat_verdicts.values():
        if v is not None:
            counts[v] = counts.get(v, 0) + 1
    return counts


def _verdict_reason(
    overall: Verdict | None, repeat_verdicts: Mapping[int, Verdict | None], reasons: Mapping[int, Mapping[str, str]]
) -> str | None:
    """The reason of the first repeat that earned the cell's verdict explains that verdict."""
    if overall is None:
        return None
    for r in sorted(repeat_verdicts):
        if repeat_verdicts[r] == overall and overall in reasons.get(r, {}):
            return reasons[r][overall]
    return None


def _aggregate_cell(key: str, samples: Sequence[Sample]) -> Cell:
    identity = {k: str(samples[0].metadata.get(k, "-")) for k in IDENTITY_KEYS}
    metadata, varying = _split_metadata(samples)
    stats = _metric_stats(samples)
    if "rtt" not in stats:
        rtt = _probe_rtt_stat(samples)
        if rtt is not None:
            stats["rtt"] = rtt
    repeat_verdicts, repeat_reasons = _repeat_verdicts(samples)
    overall = worst_verdict(repeat_verdicts.values())
    test_ids = _distinct(str(s.metadata["test_id"]) for s in samples if s.metadata.get("test_id"))
    return Cell(
        key=key,
        identity=MappingProxyType(identity),
        metadata=MappingProxyType(metadata),
        varying=MappingProxyType(varying),
        stats=MappingProxyType(stats),
        verdict=overall,
        verdict_reason=_verdict_reason(overall, repeat_verdicts, repeat_reasons),
        verdict_counts=MappingProxyType(_verdict_counts(repeat_verdicts)),
        repeats=tuple(sorted(repeat_verdicts)),
        test_ids=test_ids,
        validity=cell_validity(s.metadata for s in samples),
    )


def cell_sort_key(cell: Cell) -> tuple[Any, ...]:
    """Deterministic report order: scenario, workload, impairment ("none" first), then stack
    order (raw, disconnected, replicated) and distance (same-az before cross-az)."""
    return (
        natural_key(cell.scenario),
        natural_key(cell.workload),
        cell.impairment != "none",
        natural_key(cell.impairment),
        _rank(cell.mode, MODE_ORDER),
        _rank(cell.placement, PLACEMENT_ORDER),
        natural_key(cell.pair),
        cell.key,
    )


def aggregate_samples(samples: Iterable[Sample]) -> list[Cell]:
    """Group ``samples`` by cell key and aggregate each cell's repeats; sorted by :func:`cell_sort_key`.

    The order does not depend on the order samples were appended in, which under xdist is
    whatever order the workers finished in.
    """
    groups: dict[str, list[Sample]] = {}
    for s in samples:
        groups.setdefault(cell_key(s.metadata), []).append(s)
    return sorted((_aggregate_cell(k, g) for k, g in groups.items()), key=cell_sort_key)
