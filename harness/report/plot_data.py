"""What each report plot shows, picked out of aggregated cells: pure data, no drawing.

:mod:`harness.report.plots` draws; this module decides which cells feed which plot and how
they pair up, so that logic is testable without rendering a pixel:

* :func:`latency_sweeps`: the ``latency_sweep`` scenario per pair — IOPS against the RTT measured
  with the impairment in place, and the pair's local write latency from its ``calibration``
  cell, the two inputs of the model ``IOPS = 1 / (RTT + local write)``;
* :func:`numjobs_sweeps`: any scenario's cells whose workloads differ only in ``numjobs``, when
  there are at least :data:`MIN_NUMJOBS_VALUES` of them;
* :func:`placement_groups`: the ``replicated_write`` scenario's same-AZ and cross-AZ pairs per
  workload (the DataKeeper study's comparison);
* :func:`baseline_pairs`: the same cell in a baseline run and in the current run;
* :func:`series_to_plot`: the handful of per-second bandwidth series worth a plot.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from harness.report.aggregate import Cell, Stat, cell_sort_key, natural_key
from harness.runfiles.series import CellSeries

__all__ = [
    "CALIBRATION_SCENARIO",
    "FAILOVER_SCENARIO",
    "LATENCY_SWEEP_SCENARIO",
    "MAX_SERIES_PLOTS",
    "MIN_NUMJOBS_VALUES",
    "PLACEMENT_SCENARIO",
    "BaselinePair",
    "LatencySweep",
    "NumjobsPoint",
    "NumjobsSweep",
    "PlacementBar",
    "PlacementGroup",
    "SweepPoint",
    "baseline_pairs",
    "cell_label",
    "latency_sweeps",
    "local_write_ms",
    "numjobs_sweeps",
    "placement_groups",
    "series_to_plot",
    "workload_family",
]

LATENCY_SWEEP_SCENARIO: Final = "latency_sweep"
CALIBRATION_SCENARIO: Final = "calibration"
PLACEMENT_SCENARIO: Final = "replicated_write"
FAILOVER_SCENARIO: Final = "failover_integrity"
#: Two numjobs values are a comparison, not a sweep; the replicated_write matrix (nj1, nj8)
#: already shows those in its table.
MIN_NUMJOBS_VALUES: Final = 3
#: Per-second plots in one report: one figure each, so a run with a whole latency sweep of
#: impaired cells would otherwise bury the tables under near-identical flat lines.
MAX_SERIES_PLOTS: Final = 6
#: Placements the single-AZ vs multi-AZ plot compares, nearer first.
_PLACEMENTS: Final = ("same-az", "cross-az")
_NJ_TOKEN: Final = re.compile(r"(?<=-)nj(\d+)(?=-|\Z)")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def cell_label(cell: Cell) -> str:
    """A short name for a cell in plots: what differs between cells of a report, not the key.

    ``replicated_write · multi-az · write-1m-nj8-qd2``; the impairment and the mode are added
    only when they are not the common case (none, replicated).
    """
    parts = [cell.scenario, cell.pair, cell.workload]
    if cell.impairment != "none":
        parts.append(cell.impairment)
    if cell.mode != "replicated":
        parts.append(cell.mode)
    return " · ".join(parts)


# ---------------------------------------------------------------------------------------------
# Latency sweep


@dataclass(frozen=True)
class SweepPoint:
    """One latency-sweep cell."""

    label: str
    #: The delay injected on the replication path (round trip); 0 for the unimpaired cell,
    #: ``None`` when the impairment does not say.
    added_rtt_ms: float | None
    #: RTT measured over the replication path with the impairment in place; ``None`` when the
    #: cell did not probe it (the unimpaired cell does not).
    rtt: Stat | None
    iops: Stat


@dataclass(frozen=True)
class LatencySweep:
    """One pair's latency sweep."""

    pair: str
    placement: str | None
    protocol: str | None
    #: Per-I/O time of the pair's calibration write (ms), the model's disk term.
    local_write_ms: float | None
    points: tuple[SweepPoint, ...]


def _added_rtt_ms(cell: Cell) -> float | None:
    if cell.impairment == "none":
        return 0.0
    detail = cell.metadata.get("impairment_detail")
    added = _number(detail.get("added_rtt_s")) if isinstance(detail, Mapping) else None
    return None if added is None else added * 1000.0


def local_write_ms(cells: Iterable[Cell], pair: str) -> float | None:
    """The local write time the latency model uses for ``pair`` (ms), or ``None``.

    As :mod:`harness.prediction.calibrate` defines it: the per-I/O time, ``1 / IOPS``, of the pair's QD1 4k
    random write with DRBD disconnected — fio's whole time per write, submission included,
    which completion latency alone leaves out.  It is recorded as a ``calibration`` cell of the
    same run; with repeats, the median IOPS.
    """
    for c in cells:
        m = c.metadata
        if (
            c.scenario == CALIBRATION_SCENARIO
            and c.pair == pair
            and c.mode == "disconnected"
            and m.get("rw") == "randwrite"
            and m.get("bs") == 4096
            and m.get("iodepth") == 1
            and m.get("numjobs") == 1
            and "iops" in c.stats
            and c.stats["iops"].median > 0
        ):
            return 1000.0 / c.stats["iops"].median
    return None


def latency_sweeps(cells: Sequence[Cell]) -> list[LatencySweep]:
    """The ``latency_sweep`` cells per pair, points ordered by added RTT; pairs in report order."""
    by_pair: dict[str, list[Cell]] = {}
    for c in cells:
        if c.scenario == LATENCY_SWEEP_SCENARIO and c.mode == "replicated" and "iops" in c.stats:
            by_pair.setdefault(c.pair, []).append(c)
    out = []
    for pair in sorted(by_pair, key=natural_key):
        pair_cells = by_pair[pair]
        points = [SweepPoint(c.impairment, _added_rtt_ms(c), c.stats.get("rtt"), c.stats["iops"]) for c in pair_cells]
        points.sort(key=lambda p: (p.added_rtt_ms is None, p.added_rtt_ms or 0.0, natural_key(p.label)))
        first = pair_cells[0]
        protocol = first.metadata.get("protocol")
        out.append(
            LatencySweep(
                pair=pair,
                placement=first.placement,
                protocol=None if protocol is None else str(protocol),
                local_write_ms=local_write_ms(cells, pair),
                points=tuple(points),
            )
        )
    return out


# ---------------------------------------------------------------------------------------------
# numjobs sweep


def workload_family(workload: str) -> str | None:
    """The workload id with its ``nj<N>`` part replaced by ``nj*``; ``None`` without one.

    ``randwrite-4k-nj8-qd1`` → ``randwrite-4k-nj*-qd1``: ids that map to the same family
    differ only in numjobs (the id names everything that shapes the I/O).
    """
    family, count = _NJ_TOKEN.subn("nj*", workload)
    return family if count == 1 else None


def _numjobs(cell: Cell) -> int | None:
    value = cell.metadata.get("numjobs")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    match = _NJ_TOKEN.search(cell.workload)
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class NumjobsPoint:
    numjobs: int
    bw: Stat | None
    iops: Stat | None


@dataclass(frozen=True)
class NumjobsSweep:
    """Cells of one scenario, pair, mode and impairment whose workloads differ only in numjobs."""

    scenario: str
    family: str
    pair: str
    mode: str
    impairment: str
    #: Block size in bytes when every point has the same fixed one (for an IOPS scale).
    bs: int | None
    points: tuple[NumjobsPoint, ...]

    @property
    def label(self) -> str:
        parts = [self.pair] + ([self.mode] if self.mode != "replicated" else [])
        parts += [self.impairment] if self.impairment != "none" else []
        return " · ".join(parts)


def numjobs_sweeps(cells: Iterable[Cell], minimum: int = MIN_NUMJOBS_VALUES) -> list[NumjobsSweep]:
    """Every group of cells that sweeps numjobs over at least ``minimum`` values.

    Ordered by scenario, workload family, then pair/mode/impairment, points by numjobs.  Two
    cells with the same numjobs in one group cannot happen (they would be the same cell).
    """
    groups: dict[tuple[str, str, str, str, str], list[Cell]] = {}
    for c in cells:
        family = workload_family(c.workload)
        if family is None or _numjobs(c) is None or not ({"bw", "iops"} & set(c.stats)):
            continue
        groups.setdefault((c.scenario, family, c.pair, c.mode, c.impairment), []).append(c)
    out = []
    for (scenario, family, pair, mode, impairment), group in groups.items():
        if len({_numjobs(c) for c in group}) < minimum:
            continue
        group.sort(key=lambda c: _numjobs(c) or 0)
        sizes = {c.metadata.get("bs") for c in group}
        bs = sizes.pop() if len(sizes) == 1 else None
        points = tuple(NumjobsPoint(_numjobs(c) or 0, c.stats.get("bw"), c.stats.get("iops")) for c in group)
        out.append(
            NumjobsSweep(
                scenario=scenario,
                family=family,
                pair=pair,
                mode=mode,
                impairment=impairment,
                bs=bs if isinstance(bs, int) and not isinstance(bs, bool) and bs > 0 else None,
                points=points,
            )
        )
    out.sort(key=lambda s: (natural_key(s.scenario), natural_key(s.family), s.impairment != "none", s.label))
    return out


# ---------------------------------------------------------------------------------------------
# Single-AZ vs multi-AZ


@dataclass(frozen=True)
class PlacementBar:
    pair: str
    placement: str
    stat: Stat


@dataclass(frozen=True)
class PlacementGroup:
    """One workload (and impairment) of the placement comparison: a bar per pair."""

    workload: str
    impairment: str
    bars: tuple[PlacementBar, ...]

    @property
    def title(self) -> str:
        return self.workload if self.impairment == "none" else f"{self.workload} · {self.impairment}"


def placement_groups(
    cells: Iterable[Cell], metric: str = "bw", scenario: str = PLACEMENT_SCENARIO
) -> list[PlacementGroup]:
    """Replicated cells of ``scenario`` per workload, same-AZ pairs first.

    Empty unless the scenario measured both a same-AZ and a cross-AZ pair: with one placement
    there is nothing to compare.
    """
    chosen = [
        c
        for c in cells
        if c.scenario == scenario and c.mode == "replicated" and c.placement in _PLACEMENTS and metric in c.stats
    ]
    if {c.placement for c in chosen} != set(_PLACEMENTS):
        return []
    groups: dict[tuple[str, str], list[PlacementBar]] = {}
    for c in sorted(chosen, key=cell_sort_key):
        assert c.placement is not None  # filtered on above
        groups.setdefault((c.workload, c.impairment), []).append(PlacementBar(c.pair, c.placement, c.stats[metric]))
    return [PlacementGroup(w, i, tuple(bars)) for (w, i), bars in groups.items()]


# ---------------------------------------------------------------------------------------------
# Baseline vs current


@dataclass(frozen=True)
class BaselinePair:
    """One cell's ``metric`` in the baseline and in the current run (``None``: not measured there)."""

    key: str
    label: str
    baseline: Stat | None
    current: Stat | None


def baseline_pairs(baseline_cells: Iterable[Cell], current_cells: Iterable[Cell], metric: str) -> list[BaselinePair]:
    """Cells matched on their key (the identity, never a test id), in report order.

    A cell measured on one side only is kept, with ``None`` on the other: a cell that vanished
    or appeared is part of the comparison.  Cells without ``metric`` on either side are left out.
    """
    baseline = {c.key: c for c in baseline_cells}
    current = {c.key: c for c in current_cells}
    out = []
    for key in {**baseline, **current}:
        cell = current.get(key) or baseline[key]
        b = baseline[key].stats.get(metric) if key in baseline else None
        c = current[key].stats.get(metric) if key in current else None
        if b is not None or c is not None:
            out.append((cell_sort_key(cell), BaselinePair(key, cell_label(cell), b, c)))
    return [pair for _, pair in sorted(out, key=lambda item: item[0])]


# ---------------------------------------------------------------------------------------------
# Per-second series


def _series_priority(s: CellSeries) -> tuple[Any, ...]:
    return (
        not s.windows,  # a fault window is what the plot is for
        s.scenario != FAILOVER_SCENARIO,
        natural_key(s.scenario),
        natural_key(s.workload),
        natural_key(s.impairment),
        natural_key(s.pair),
        s.mode,
        s.repeat,
    )


def series_to_plot(series: Iterable[CellSeries], limit: int = MAX_SERIES_PLOTS) -> list[CellSeries]:
    """The series worth a per-second plot, at most ``limit``, one repeat per cell.

    Worth it: a series with a fault window, any of the failover scenario, any measured under an
    impairment — where bandwidth over time tells more than the cell's mean.  Chosen in that
    order, then in report order; of a cell's repeats the first so ordered (one with a window
    before one without, else the lowest repeat).  Empty series are skipped.
    """
    seen: set[str] = set()
    out: list[CellSeries] = []
    candidates = [
        s for s in series if s.bw_mib_s and (s.windows or s.scenario == FAILOVER_SCENARIO or s.impairment != "none")
    ]
    for s in sorted(candidates, key=_series_priority):
        if s.key in seen:
            continue
        seen.add(s.key)
        out.append(s)
        if len(out) == limit:
            break
    return out
