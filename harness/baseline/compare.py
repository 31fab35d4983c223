"""Reference cells × current cells → a verdict per cell and metric, and one overall.

Cells are matched on their identity (:func:`harness.runfiles.samples.cell_key`: scenario, pair, mode,
workload, impairment), never on test ids.  For each metric with a :class:`Tolerance`:

* the change is the ratio of the two *medians* over repeats (one noisy repeat must not move it);
* a change within the tolerance is a **pass**;
* a change beyond it is a **regression** (or an **improvement** the other way) only when the
  two sides' ranges of repeats (min–max) do not overlap; otherwise it is inside the noise of
  the measurements and **inconclusive** — the gate says so instead of failing the build on
  noise.  With one measurement on each side there is no noise estimate and the tolerance
  alone decides; the reason says so and suggests ``--repeat``;
* when both sides were repeated until their medians' intervals were tight (``--repeat auto``),
  the intervals decide instead of the ranges (:mod:`harness.baseline.intervals`).

A cell is the worst of its metrics (regressed > inconclusive > improved > pass); a cell whose
own validity check was inconclusive on either side (DRBD left Connected, a resync) cannot be
evidence of a regression and is inconclusive at worst.  Cells only in the current run are
**new**, only in the reference **missing**; neither changes the overall verdict, but both are
listed.  Provenance (:data:`harness.runfiles.samples.PROVENANCE_KEYS`) that differs between the sides
is reported as a warning: a kernel or instance-type change explains a number, it is not a
reason to reject it.

Pure: cells and run metadata in, a :class:`BaselineComparison` out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal, get_args

from harness.baseline.intervals import IntervalBasis, judge_intervals, shared_basis
from harness.report.aggregate import Cell, Stat, cell_sort_key
from harness.report.formatting import format_number
from harness.rules.tolerance import Tolerance, format_percent
from harness.runfiles.runinfo import RunInfo
from harness.runfiles.samples import PROVENANCE_KEYS

__all__ = [
    "CELL_VERDICTS",
    "BaselineComparison",
    "CellDelta",
    "CellVerdict",
    "MetricDelta",
    "MetricVerdict",
    "OverallVerdict",
    "ProvenanceChange",
    "compare_cells",
    "compare_metric",
    "log_ratio",
]

MetricVerdict = Literal["pass", "improved", "inconclusive", "regressed"]
CellVerdict = Literal["pass", "improved", "inconclusive", "regressed", "new", "missing"]
OverallVerdict = Literal["pass", "improved", "inconclusive", "regressed"]
#: Every cell verdict, in the order summaries list them.
CELL_VERDICTS: Final[tuple[CellVerdict, ...]] = ("regressed", "inconclusive", "improved", "pass", "new", "missing")
_RANK: Final[Mapping[str, int]] = {v: i for i, v in enumerate(get_args(MetricVerdict))}

#: Run-level metadata that makes two runs hard to compare when it differs.
_RUN_KEYS: Final[tuple[tuple[str, str], ...]] = (("inventory_name", "inventory"), ("profile", "profile"))


def log_ratio(reference: float, current: float) -> float | None:
    """``log(current / reference)``; ±inf when one side is 0; ``None`` for negative values.

    Computed as a difference of logs so that swapping the sides negates it exactly (no
    rounding asymmetry at a tolerance boundary).
    """
    if reference < 0 or current < 0:
        return None
    if reference == current:
        return 0.0
    if reference == 0:
        return math.inf
    if current == 0:
        return -math.inf
    return math.log(current) - math.log(reference)


def _change(ratio: float) -> float:
    try:
        return math.expm1(ratio)
    except OverflowError:
        return math.inf


def _range(stat: Stat) -> str:
    if stat.n == 1:
        return format_number(stat.median)
    return f"{format_number(stat.min)}–{format_number(stat.max)} (n={stat.n})"


def _overlap(a: Stat, b: Stat) -> bool:
    return a.min <= b.max and b.min <= a.max


@dataclass(frozen=True)
class MetricDelta:
    """One metric of one cell: reference and current statistics and what the change means."""

    rule: Tolerance
    reference: Stat | None
    current: Stat | None
    verdict: MetricVerdict
    reason: str
    #: ``current / reference - 1`` of the medians; ``None`` when it cannot be computed.
    change: float | None = None
    #: A few words for a table column ("inside the noise"); ``reason`` is the full sentence.
    note: str = ""

    @property
    def metric(self) -> str:
        return self.rule.metric


def compare_metric(rule: Tolerance, reference: Stat, current: Stat, basis: IntervalBasis | None = None) -> MetricDelta:
    """Judge one metric's change against ``rule``, taking the repeats' spread into account;
    with ``basis`` (both sides repeated to its confidence), their medians' intervals."""
    ratio = log_ratio(reference.median, current.median)
    if ratio is None:
        reason = "negative values cannot be compared as ratios"
        return MetricDelta(rule, reference, current, "inconclusive", reason, note="negative values")
    change = _change(ratio)
    text = format_percent(change) if math.isfinite(change) else "from 0"
    within = not rule.is_regression(ratio) and not rule.is_improvement(ratio)
    judged = (
        None
        if basis is None
        else judge_intervals(rule, reference, current, basis=basis, change_text=text, within=within)
    )
    if judged is not None:
        return MetricDelta(rule, reference, current, judged.verdict, judged.reason, change, judged.note)
    tol = rule.describe()
    if rule.is_regression(ratio):
        verdict: MetricVerdict = "regressed"
    elif rule.is_improvement(ratio):
        verdict = "improved"
    else:
        reason = f"{text}, within the {tol} tolerance"
        return MetricDelta(rule, reference, current, "pass", reason, change, "within tolerance")
    sides = f"baseline {_range(reference)}, now {_range(current)}"
    if _overlap(reference, current):
        reason = f"{text} is beyond the {tol} tolerance but inside the noise ({sides})"
        return MetricDelta(rule, reference, current, "inconclusive", reason, change, "inside the noise")
    if reference.n == 1 and current.n == 1:
        reason = f"{text}, beyond the {tol} tolerance ({sides}; one measurement a side, noise unknown: use --repeat)"
        return MetricDelta(rule, reference, current, verdict, reason, change, "noise unknown (n=1)")
    reason = f"{text}, beyond the {tol} tolerance and outside the noise ({sides})"
    return MetricDelta(rule, reference, current, verdict, reason, change, "outside the noise")


@dataclass(frozen=True)
class ProvenanceChange:
    """A provenance key whose value differs between the sides, and the cells where it does."""

    key: str
    reference: str
    current: str
    cells: tuple[str, ...]

    def describe(self) -> str:
        where = f"{len(self.cells)} cell{'s' if len(self.cells) != 1 else ''}"
        return f"{self.key}: {self.reference} → {self.current} ({where})"


@dataclass(frozen=True)
class CellDelta:
    """One cell: its verdict against the reference and the metrics behind it."""

    key: str
    identity: Mapping[str, str]
    verdict: CellVerdict
    reason: str
    metrics: tuple[MetricDelta, ...] = ()
    reference: Cell | None = None
    current: Cell | None = None
    #: Why a regression or improvement was downgraded: the cell's own validity check was
    #: inconclusive on one side (its numbers cannot prove a change either way).
    invalid: str | None = None

    @property
    def label(self) -> str:
        """``replicated_write multi-az randwrite-4k-nj8-qd1 [none]`` (mode named when not replicated)."""
        i = self.identity
        mode = "" if i.get("mode") == "replicated" else f" ({i.get('mode')})"
        return f"{i.get('scenario')} {i.get('pair')}{mode} {i.get('workload')} [{i.get('impairment')}]"

    def metric(self, name: str) -> MetricDelta | None:
        return next((m for m in self.metrics if m.metric == name), None)


def _worst(verdicts: Iterable[MetricVerdict]) -> MetricVerdict:
    return max(verdicts, key=lambda v: _RANK[v], default="pass")


def _suspect(cell: Cell) -> bool:
    return cell.verdict_counts.get("inconclusive", 0) > 0


def _compare_cell(rules: Sequence[Tolerance], reference: Cell, current: Cell) -> CellDelta | None:
    deltas: list[MetricDelta] = []
    basis = shared_basis(reference, current)
    for rule in rules:
        ref, cur = reference.stats.get(rule.metric), current.stats.get(rule.metric)
        if ref is not None and cur is not None:
            deltas.append(compare_metric(rule, ref, cur, basis))
        elif ref is not None:
            reason = "measured in the baseline, not in this run"
            deltas.append(MetricDelta(rule, ref, None, "inconclusive", reason, note="not measured in this run"))
        # Only in the current run: a metric the baseline did not record yet, nothing to compare.
    if not deltas:
        return None
    verdict: MetricVerdict = _worst(d.verdict for d in deltas)
    bad = [d for d in deltas if d.verdict == verdict] if verdict != "pass" else []
    reason = "; ".join(f"{d.metric} {d.reason}" for d in bad) or "every metric within tolerance"
    # A repeat whose validity check failed (DRBD not Connected, a resync) still left numbers in
    # the statistics; they cannot prove a change either way.
    suspect = [(side, c) for side, c in (("the baseline", reference), ("this run", current)) if _suspect(c)]
    invalid = None
    if suspect and verdict in ("regressed", "improved"):
        side, cell = suspect[0]
        why = f": {cell.verdict_reason}" if cell.verdict == "inconclusive" and cell.verdict_reason else ""
        invalid = f"the cell was inconclusive in {side}{why}"
        reason = f"{invalid}, so its change does not count ({reason})"
        verdict = "inconclusive"
    return CellDelta(current.key, current.identity, verdict, reason, tuple(deltas), reference, current, invalid)


def _provenance(pairs: Sequence[tuple[Cell, Cell]]) -> tuple[ProvenanceChange, ...]:
    found: dict[tuple[str, str, str], list[str]] = {}
    for ref, cur in pairs:
        for key in PROVENANCE_KEYS:
            a, b = ref.value_text(key), cur.value_text(key)
            # An absent value (an older harness did not record it) is unknown, not different.
            if a and b and a != b:
                found.setdefault((key, a, b), []).append(cur.key)
    return tuple(ProvenanceChange(k, a, b, tuple(cells)) for (k, a, b), cells in found.items())


def _run_warnings(reference: RunInfo | None, current: RunInfo | None) -> list[str]:
    if reference is None or current is None:
        return []
    out = []
    for attr, label in _RUN_KEYS:
        a, b = getattr(reference, attr), getattr(current, attr)
        if a and b and a != b:
            out.append(f"{label} differs: baseline {a}, this run {b}")
    return out


@dataclass(frozen=True)
class BaselineComparison:
    """Every cell of both sides, judged; run-level warnings; the overall verdict."""

    cells: tuple[CellDelta, ...]
    rules: tuple[Tolerance, ...]
    provenance: tuple[ProvenanceChange, ...] = ()
    warnings: tuple[str, ...] = ()
    #: Cells on both sides without any metric that has a tolerance (e.g. failover counts).
    not_compared: tuple[str, ...] = ()

    def with_verdict(self, verdict: CellVerdict) -> tuple[CellDelta, ...]:
        return tuple(c for c in self.cells if c.verdict == verdict)

    @property
    def counts(self) -> Mapping[CellVerdict, int]:
        return MappingProxyType({v: len(self.with_verdict(v)) for v in CELL_VERDICTS})

    @property
    def compared(self) -> int:
        """Cells present on both sides with at least one metric judged."""
        return sum(self.counts[v] for v in get_args(MetricVerdict))

    @property
    def verdict(self) -> OverallVerdict:
        """The worst cell verdict among regressed, inconclusive and improved; pass when none.

        Nothing compared at all is inconclusive, not a pass: a gate that matched no cell checked nothing.
        """
        counts = self.counts
        for v in ("regressed", "inconclusive", "improved"):
            if counts[v]:
                return v
        return "pass" if self.compared else "inconclusive"

    @property
    def regressed(self) -> bool:
        return self.verdict == "regressed"


#: scenarios whose cells a baseline comparison leaves out (see :func:`compare_cells`)
NOT_GATED: frozenset[str] = frozenset({"calibration"})


def compare_cells(
    reference: Iterable[Cell],
    current: Iterable[Cell],
    rules: Sequence[Tolerance],
    *,
    reference_info: RunInfo | None = None,
    current_info: RunInfo | None = None,
) -> BaselineComparison:
    """Match ``current`` cells to ``reference`` cells by identity and judge each with ``rules``.

    Calibration cells are not compared: they are the model's inputs, measured once per pair
    without repeats, and a change in them shows up in the scenario cells that matter."""
    ref_by_key = {c.key: c for c in reference if c.scenario not in NOT_GATED}
    cur_by_key = {c.key: c for c in current if c.scenario not in NOT_GATED}
    deltas: list[CellDelta] = []
    pairs: list[tuple[Cell, Cell]] = []
    not_compared: list[str] = []
    for key in ref_by_key.keys() | cur_by_key.keys():
        ref, cur = ref_by_key.get(key), cur_by_key.get(key)
        if ref is None:
            assert cur is not None
            deltas.append(CellDelta(key, cur.identity, "new", "not in the baseline", current=cur))
        elif cur is None:
            deltas.append(
                CellDelta(key, ref.identity, "missing", "in the baseline, not measured in this run", reference=ref)
            )
        else:
            pairs.append((ref, cur))
            delta = _compare_cell(rules, ref, cur)
            if delta is None:
                not_compared.append(key)
            else:
                deltas.append(delta)

    def order(d: CellDelta) -> tuple[object, ...]:
        cell = d.current or d.reference
        assert cell is not None
        return cell_sort_key(cell)

    deltas.sort(key=order)
    warnings = _run_warnings(reference_info, current_info)
    if not pairs:
        warnings.append("no cell of the baseline was measured in this run: nothing was compared")
    return BaselineComparison(
        cells=tuple(deltas),
        rules=tuple(rules),
        provenance=_provenance(pairs),
        warnings=tuple(warnings),
        not_compared=tuple(sorted(not_compared)),
    )
