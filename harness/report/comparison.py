"""Cells → comparison tables: the single-AZ vs multi-AZ (and replicated vs local) view.

One :class:`ScenarioTable` per scenario; one :class:`Row` per (workload, impairment).  A table
has one :class:`Section` (sub-table) per metric: every pair/mode side by side, then the ratios,
so the eye reads ``single-az | multi-az | multi-az/single-az`` left to right under "Bandwidth
(MiB/s)" — the DataKeeper study's comparison, per workload — followed by a section of verdicts
and measured RTT.  Sections rather than one table with every metric: with three groups and their
ratios, one table grows past 20 columns, which neither a pull request nor a terminal shows well.

Ratios are chosen from metadata, not from pair names (a user's pairs are called whatever their
inventory calls them):

* ``cross/same``: every replicated cross-AZ pair over the first replicated same-AZ pair — the
  price of distance;
* ``replicated/disconnected``: replicated over DRBD disconnected (local disk through DRBD) of the
  same pair, or of the only disconnected pair — the price of replication (a cross-AZ pair without
  its own local baseline is left to the chain disk → same-AZ → cross-AZ);
* ``disconnected/raw``: DRBD disconnected over the raw disk — DRBD's own overhead.

This module decides *what* is compared; the renderers (:mod:`harness.report.markdown`,
:mod:`~harness.report.page`, ...) decide how it looks.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

from harness.report.aggregate import (
    MODE_ORDER,
    PLACEMENT_ORDER,
    Cell,
    Stat,
    Verdict,
    natural_key,
    worst_verdict,
)

__all__ = [
    "METRIC_LABELS",
    "METRIC_TITLES",
    "RATIO_METRICS",
    "TABLE_METRICS",
    "Column",
    "ColumnKind",
    "Comparison",
    "Group",
    "Ratio",
    "RatioKind",
    "Row",
    "ScenarioTable",
    "Section",
    "build_comparison",
    "ratio_of",
]

#: Metrics a comparison table shows, in column order; a column nobody measured is dropped.
TABLE_METRICS: Final[tuple[str, ...]] = ("bw", "predicted_bw", "model_ratio", "iops", "ops", "clat_p99")
#: Metrics that get ratio columns.  Not IOPS: for one workload (one block size) its ratio is the
#: bandwidth ratio again.  Not predictions: compared across pairs they say nothing new.
RATIO_METRICS: Final[tuple[str, ...]] = ("bw", "clat_p99")
#: Short column labels with units; unknown metrics fall back to their name.
METRIC_LABELS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "bw": "MiB/s",
        "predicted_bw": "pred. MiB/s",
        "iops": "IOPS",
        "ops": "ops/s",
        "predicted_iops": "pred. IOPS",
        "model_ratio": "meas./pred.",
        "clat_mean": "mean ms",
        "clat_p50": "p50 ms",
        "clat_p99": "p99 ms",
        "clat_p999": "p99.9 ms",
        "rtt": "RTT ms",
        "runtime": "runtime s",
        "wall": "wall s",
        "overhead": "overhead s",
        "lost_writes": "lost blocks",
        "acked_writes": "acked blocks",
    }
)
#: Section titles of the per-metric sub-tables.
METRIC_TITLES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "bw": "Bandwidth (MiB/s)",
        "predicted_bw": "Predicted bandwidth (MiB/s)",
        "iops": "IOPS",
        "ops": "Operations per second (bonnie++ seeks, file create/stat/delete)",
        "predicted_iops": "Predicted IOPS",
        "model_ratio": "Measured / predicted bandwidth",
        "clat_mean": "Mean completion latency (ms)",
        "clat_p50": "Median completion latency (ms)",
        "clat_p99": "p99 completion latency (ms)",
        "clat_p999": "p99.9 completion latency (ms)",
        "lost_writes": "Lost acknowledged writes (blocks)",
        "acked_writes": "Acknowledged writes (blocks)",
    }
)
# Timing of the harness itself and the RTT (shown in its own column) are not comparison metrics.
_HOUSEKEEPING: Final[frozenset[str]] = frozenset({"rtt", "runtime", "wall", "overhead"})

_SHORT_MODES: Final[Mapping[str, str]] = MappingProxyType({"replicated": "repl", "disconnected": "disc", "raw": "raw"})

RatioKind = Literal["cross/same", "replicated/disconnected", "disconnected/raw"]
ColumnKind = Literal["workload", "impairment", "metric", "ratio", "rtt", "verdict", "bottleneck"]


def ratio_of(numerator: float | None, denominator: float | None) -> float | None:
    """``numerator / denominator``, or ``None`` when either is missing or the ratio is undefined."""
    if numerator is None or denominator is None or denominator == 0:
        return None
    value = numerator / denominator
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class Group:
    """A column group: one pair measured in one mode."""

    pair: str
    mode: str
    placement: str | None

    @property
    def label(self) -> str:
        # Replicated is the normal case and goes unmarked; local baselines say what they are.
        if self.mode == "replicated":
            return self.pair
        return self.mode if self.pair == "-" else f"{self.pair} ({self.mode})"

    @property
    def short_label(self) -> str:
        """Label for narrow places (the terminal): ``single-az disc`` rather than ``(disconnected)``."""
        if self.mode == "replicated":
            return self.pair
        mode = _SHORT_MODES.get(self.mode, self.mode)
        return mode if self.pair == "-" else f"{self.pair} {mode}"

    def sort_key(self) -> tuple[int, int, tuple[tuple[int, int, str], ...], tuple[tuple[int, int, str], ...]]:
        mode = MODE_ORDER.index(self.mode) if self.mode in MODE_ORDER else len(MODE_ORDER)
        place = PLACEMENT_ORDER.index(self.placement) if self.placement in PLACEMENT_ORDER else len(PLACEMENT_ORDER)
        # the mode's name last: modes outside MODE_ORDER (xfs, ext4, raid0x2) in one order every run
        return mode, place, natural_key(self.pair), natural_key(self.mode)


@dataclass(frozen=True)
class Ratio:
    """``numerator / denominator`` of a metric's medians, per row."""

    kind: RatioKind
    numerator: Group
    denominator: Group

    @property
    def label(self) -> str:
        num, den = self.numerator, self.denominator
        if self.kind == "cross/same":
            return f"{num.pair}/{den.pair}"
        num_mode, den_mode = (_SHORT_MODES.get(m, m) for m in (num.mode, den.mode))
        if num.pair == den.pair:
            return f"{num.pair} {num_mode}/{den_mode}"
        return f"{num.pair} {num_mode}/{den.pair} {den_mode}"


@dataclass(frozen=True)
class Column:
    """One table column; which fields are set depends on ``kind``."""

    kind: ColumnKind
    header: str
    group: Group | None = None
    metric: str | None = None
    ratio: Ratio | None = None


@dataclass(frozen=True)
class Row:
    """One (workload, impairment) of a scenario, with the cell of each group measured there."""

    workload: str
    impairment: str
    cells: Mapping[Group, Cell]

    def stat(self, group: Group, metric: str) -> Stat | None:
        cell = self.cells.get(group)
        return None if cell is None else cell.stats.get(metric)

    def bottleneck(self, group: Group) -> str:
        """The model's binding limit for the group's cell ("" when not predicted); limits that
        differ between repeats are all named."""
        cell = self.cells.get(group)
        if cell is None:
            return ""
        if "bottleneck" in cell.metadata:
            return str(cell.metadata["bottleneck"])
        return " / ".join(str(v) for v in cell.varying.get("bottleneck", ()) if v)

    def ratio(self, ratio: Ratio, metric: str) -> float | None:
        num = self.stat(ratio.numerator, metric)
        den = self.stat(ratio.denominator, metric)
        return ratio_of(None if num is None else num.median, None if den is None else den.median)

    def has_value(self, column: Column) -> bool:
        """Whether this row shows something in ``column`` (empty columns are dropped)."""
        if column.kind in ("workload", "impairment"):
            return True
        if column.kind == "ratio":
            assert column.ratio is not None and column.metric is not None
            return self.ratio(column.ratio, column.metric) is not None
        assert column.group is not None
        if column.kind == "verdict":
            cell = self.cells.get(column.group)
            return cell is not None and cell.verdict is not None
        if column.kind == "bottleneck":
            return bool(self.bottleneck(column.group))
        assert column.metric is not None
        return self.stat(column.group, column.metric) is not None


@dataclass(frozen=True)
class Section:
    """One sub-table of a scenario: a metric (or the verdicts and RTT) for every group side by side."""

    title: str
    #: The metric this section shows; ``None`` for the verdict/RTT section.
    metric: str | None
    columns: tuple[Column, ...]


@dataclass(frozen=True)
class ScenarioTable:
    """The comparison of one scenario: one section per metric, then verdicts and RTT."""

    scenario: str
    groups: tuple[Group, ...]
    ratios: tuple[Ratio, ...]
    rows: tuple[Row, ...]
    sections: tuple[Section, ...]

    @property
    def cells(self) -> tuple[Cell, ...]:
        return tuple(c for row in self.rows for g in self.groups if (c := row.cells.get(g)) is not None)

    @property
    def repeat_counts(self) -> tuple[int, ...]:
        """Distinct repeat counts of the cells (one value when every cell ran equally often)."""
        return tuple(sorted({len(c.repeats) for c in self.cells}))

    @property
    def typical_repeats(self) -> int:
        """The repeat count most cells have; a value with a different n is flagged with its n."""
        counts: dict[int, int] = {}
        for c in self.cells:
            counts[len(c.repeats)] = counts.get(len(c.repeats), 0) + 1
        return max(counts, key=lambda n: (counts[n], n)) if counts else 1

    def section(self, metric: str | None) -> Section | None:
        return next((s for s in self.sections if s.metric == metric), None)


@dataclass(frozen=True)
class Comparison:
    """Every cell of a run and the comparison tables built from them."""

    cells: tuple[Cell, ...]
    tables: tuple[ScenarioTable, ...]

    @property
    def verdict(self) -> Verdict | None:
        return worst_verdict(c.verdict for c in self.cells)

    @property
    def not_passed(self) -> tuple[Cell, ...]:
        """Cells whose verdict is fail or inconclusive, worst first."""
        bad = [c for c in self.cells if c.verdict in ("fail", "inconclusive")]
        return tuple(sorted(bad, key=lambda c: c.verdict != "fail"))

    def table(self, scenario: str) -> ScenarioTable:
        for t in self.tables:
            if t.scenario == scenario:
                return t
        raise KeyError(scenario)


def _group_of(cell: Cell) -> Group:
    return Group(cell.pair, cell.mode, cell.placement)


def _reference(candidates: Sequence[Group], pair: str) -> Group | None:
    # Same pair first (same hardware); otherwise only an unambiguous single candidate.
    for g in candidates:
        if g.pair == pair:
            return g
    return candidates[0] if len(candidates) == 1 else None


def _ratios(groups: Sequence[Group]) -> list[Ratio]:
    out: list[Ratio] = []
    replicated = [g for g in groups if g.mode == "replicated"]
    same = [g for g in replicated if g.placement == "same-az"]
    if same:
        out += [Ratio("cross/same", g, same[0]) for g in replicated if g.placement == "cross-az"]
    disconnected = [g for g in groups if g.mode == "disconnected"]
    for g in replicated:
        ref = _reference(disconnected, g.pair)
        # A cross-AZ pair without a local baseline of its own is already compared with the
        # same-AZ pair, which is compared with the disk: the stack reads as a chain of steps.
        chained = same and g.placement == "cross-az" and (ref is None or ref.pair != g.pair)
        if ref is not None and not chained:
            out.append(Ratio("replicated/disconnected", g, ref))
    raw = [g for g in groups if g.mode == "raw"]
    for g in disconnected:
        ref = _reference(raw, g.pair)
        if ref is not None:
            out.append(Ratio("disconnected/raw", g, ref))
    return out


def _table_metrics(cells: Iterable[Cell], metrics: Sequence[str]) -> tuple[str, ...]:
    present = {m for c in cells for m in c.stats}
    chosen = [m for m in metrics if m in present]
    if chosen:
        return tuple(chosen)
    # A scenario that measures none of the usual metrics (e.g. failover: lost/acked writes)
    # still gets a table of what it did measure.
    return tuple(sorted(present - _HOUSEKEEPING))


def _key_columns() -> list[Column]:
    return [Column("workload", "workload"), Column("impairment", "impairment")]


def _sections(metrics: Sequence[str], groups: Sequence[Group], ratios: Sequence[Ratio]) -> list[Section]:
    sections = []
    for metric in metrics:
        columns = _key_columns()
        columns += [Column("metric", g.label, group=g, metric=metric) for g in groups]
        if metric in RATIO_METRICS:
            columns += [Column("ratio", r.label, metric=metric, ratio=r) for r in ratios]
        if metric == "model_ratio":
            # what the model says binds, beside how far off it was
            columns += [Column("bottleneck", f"{g.label} binding limit", group=g) for g in groups]
        sections.append(Section(METRIC_TITLES.get(metric, metric), metric, tuple(columns)))
    columns = _key_columns()
    columns += [Column("verdict", g.label, group=g) for g in groups]
    # Measured RTT of the replication path: context for every latency above.  A local (raw or
    # disconnected) cell has no replication path, whatever a probe may have recorded.
    columns += [
        Column("rtt", f"{g.label} {METRIC_LABELS['rtt']}", group=g, metric="rtt")
        for g in groups
        if g.mode == "replicated"
    ]
    sections.append(Section("Verdict and measured RTT", None, tuple(columns)))
    return sections


def _scenario_table(scenario: str, cells: Sequence[Cell], metrics: Sequence[str]) -> ScenarioTable:
    groups = sorted({_group_of(c) for c in cells}, key=Group.sort_key)
    rows_by_key: dict[tuple[str, str], dict[Group, Cell]] = {}
    for c in cells:
        rows_by_key.setdefault((c.workload, c.impairment), {})[_group_of(c)] = c
    order = sorted(rows_by_key, key=lambda k: (natural_key(k[0]), k[1] != "none", natural_key(k[1])))
    rows = tuple(Row(w, i, MappingProxyType(rows_by_key[(w, i)])) for w, i in order)
    ratios = _ratios(groups)
    sections = []
    for section in _sections(_table_metrics(cells, metrics), groups, ratios):
        # A column nobody measured (a pair that skipped this metric, a ratio without its
        # denominator anywhere) is noise; drop it.
        columns = tuple(c for c in section.columns if any(r.has_value(c) for r in rows))
        sections.append(Section(section.title, section.metric, columns))
    return ScenarioTable(scenario, tuple(groups), tuple(ratios), rows, tuple(sections))


def build_comparison(cells: Iterable[Cell], metrics: Sequence[str] = TABLE_METRICS) -> Comparison:
    """One table per scenario (in natural scenario order) from aggregated ``cells``."""
    all_cells = tuple(cells)
    by_scenario: dict[str, list[Cell]] = {}
    for c in all_cells:
        by_scenario.setdefault(c.scenario, []).append(c)
    tables = tuple(_scenario_table(s, by_scenario[s], metrics) for s in sorted(by_scenario, key=natural_key))
    return Comparison(all_cells, tables)
