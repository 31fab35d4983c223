"""``harness bench repeats``: ``--repeat auto`` against a fixed number of repeats, in fio time and in
the interval each achieves.  Printed, never asserted.

Each cell is run repeat after repeat, once: ``auto`` is the prefix at which
:func:`harness.rules.repeats.next_step` stopped (tight, or the cap), ``fixed N`` the first N
repeats, so both read the same measurements and differ only in their stopping rule.  Both get
the same interval of the median, by the same method at the same confidence (``--interval``:
lognormal by default, so fixed 5 has a 95 % interval too; with ``order`` fewer than 6 repeats
reach only the coverage of the widest interval, 93.75 % for 5, which the table says).  For each
the table gives the repeats, fio's own time on the node and the interval of the median
bandwidth: its half-width over the median and its coverage.  The totals give the fio time auto
saves against the fixed count, and, beside both, the fixed count that gives every cell an
interval as tight as auto's: the most repeats any cell needed under auto.  Last, the interval's
assumption is checked on the measured repeats (:mod:`harness.bench.coveragecheck`): how often
the interval of ``k`` of a cell's repeats contains the median of all of them.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tabulate import tabulate

from harness.bench.coveragecheck import CoverageCheck, resampled_coverage
from harness.cell import CellRunner, CellSpec
from harness.cell.autorepeat import fio_seconds
from harness.fio.profiles import PROFILES
from harness.fio.workloads import for_profile, write_job
from harness.inventory import Inventory
from harness.progress import Progress
from harness.rules.medianinterval import IntervalMethod, MedianInterval, coverage, fitting_method, median_interval
from harness.rules.repeats import RepeatPlan, next_step

__all__ = ["RepeatBench", "RepeatRow", "repeat_rows", "run_repeat_bench"]

#: the cells measured: a latency-bound QD1 stream, many small writers, one large sequential stream
WORKLOADS = (
    write_job("randwrite", 4096),
    write_job("write", 4096, numjobs=8),
    write_job("write", 1024 * 1024, iodepth=16),
)
#: the fixed count compared with by default (the harness's own earlier advice for noisy hosts)
DEFAULT_FIXED = 5


@dataclass(frozen=True)
class Strategy:
    """One stopping rule on one cell: repeats run, fio seconds, the interval it reached."""

    repeats: int
    fio_s: float
    interval: MedianInterval | None
    method: IntervalMethod

    def describe(self) -> str:
        if self.interval is None:
            if self.method == "order" and self.repeats:
                return f"none (n={self.repeats} covers {coverage(self.repeats, 1):.2%} at most)"
            return f"none (n={self.repeats})"
        return f"±{self.interval.relative_half_width:.1%} ({self.interval.coverage:.1%})"


@dataclass(frozen=True)
class RepeatRow:
    cell: str
    auto: Strategy
    fixed: Strategy
    #: why auto stopped: tight or cap
    why: str
    #: fio seconds of one repeat, the median
    fio_per_repeat_s: float
    #: every repeat measured (MiB/s), in the order they ran
    values: tuple[float, ...] = ()


def _strategy(values: Sequence[float], seconds: Sequence[float], plan: RepeatPlan) -> Strategy:
    """``values`` judged as ``--repeat auto`` would: the plan's interval, or the order-statistic
    one where the lognormal cannot take them (a repeat of 0 MiB/s)."""
    method = fitting_method(plan.method, values)
    return Strategy(len(values), sum(seconds), median_interval(values, plan.confidence, method), method)


def repeat_rows(runs: Mapping[str, Sequence[tuple[float, float]]], plan: RepeatPlan, fixed: int) -> list[RepeatRow]:
    """One row per cell from its repeats in the order they ran, each ``(MiB/s, fio seconds)``."""
    rows = []
    for cell, measured in runs.items():
        values = [bw for bw, _ in measured]
        seconds = [s for _, s in measured]
        stop = next((n for n in range(1, len(values) + 1) if next_step(values[:n], plan).stop), len(values))
        why = next_step(values[:stop], plan).why
        auto = _strategy(values[:stop], seconds[:stop], plan)
        rows.append(
            RepeatRow(
                cell,
                auto,
                _strategy(values[:fixed], seconds[:fixed], plan),
                why,
                statistics.median(seconds) if seconds else 0.0,
                tuple(values),
            )
        )
    return rows


def _saved(auto: float, other: float) -> float | None:
    """The share of ``other``'s fio time that auto saves (negative: auto took longer)."""
    return 1 - auto / other if other else None


def _widest(sides: Sequence[Strategy]) -> float | None:
    """The widest relative half-width among ``sides``; None when one has no interval."""
    widths = [s.interval.relative_half_width if s.interval is not None else None for s in sides]
    return None if not widths or None in widths else max(w for w in widths if w is not None)


def _saving(saved: float | None) -> str:
    if saved is None:
        return ""
    return f"auto saves {saved:.0%}" if saved >= 0 else f"auto takes {-saved:.0%} more"


def _percent(share: float | None) -> str:
    return "n/a" if share is None else f"±{share:.1%}"


@dataclass(frozen=True)
class RepeatBench:
    rows: list[RepeatRow]
    plan: RepeatPlan
    fixed: int

    def totals(self) -> dict[str, Any]:
        auto = sum(r.auto.fio_s for r in self.rows)
        fixed = sum(r.fixed.fio_s for r in self.rows)
        same = max((r.auto.repeats for r in self.rows), default=0)
        same_s = sum(r.fio_per_repeat_s * same for r in self.rows)
        return {
            "auto_fio_s": auto,
            "fixed_fio_s": fixed,
            "fio_time_saved": _saved(auto, fixed),
            "auto_widest_half_width": _widest([r.auto for r in self.rows]),
            "fixed_widest_half_width": _widest([r.fixed for r in self.rows]),
            "all_tight": all(r.why == "tight" for r in self.rows),
            "same_interval_fixed_repeats": same,
            "same_interval_fixed_fio_s": same_s,
            "fio_time_saved_vs_same_interval": _saved(auto, same_s),
        }

    def coverage_checks(self) -> list[CoverageCheck]:
        """The interval's assumption on the measured repeats, for ``k`` from the first look to
        one fewer than the most repeats a cell has."""
        most = max((len(r.values) for r in self.rows), default=0)
        p = self.plan
        return [
            resampled_coverage((r.values for r in self.rows), k, p.confidence, p.method) for k in range(p.first, most)
        ]

    def to_json(self) -> dict[str, Any]:
        def side(s: Strategy) -> dict[str, Any]:
            i = s.interval
            return {
                "repeats": s.repeats,
                "fio_s": s.fio_s,
                "method": s.method,
                "interval": None if i is None else {"low": i.low, "high": i.high, "coverage": i.coverage},
                "relative_half_width": None if i is None else i.relative_half_width,
            }

        checks = [
            {"k": c.k, "cells": c.cells, "subsets": c.trials, "contained": c.hits, "share": c.share}
            for c in self.coverage_checks()
        ]
        return {
            "confidence": self.plan.confidence,
            "tolerance": self.plan.tolerance,
            "cap": self.plan.cap,
            "interval": self.plan.method,
            "fixed": self.fixed,
            "cells": [
                {"cell": r.cell, "why": r.why, "auto": side(r.auto), "fixed": side(r.fixed), "repeats": list(r.values)}
                for r in self.rows
            ],
            "totals": self.totals(),
            "coverage_check": checks,
        }

    def _total_lines(self) -> list[str]:
        t = self.totals()
        saved = _saving(t["fio_time_saved"])
        lines = [
            f"total fio time: auto {t['auto_fio_s']:.1f} s, fixed {self.fixed} {t['fixed_fio_s']:.1f} s"
            + (f": {saved}" if saved else ""),
            f"widest interval: auto {_percent(t['auto_widest_half_width'])}, "
            f"fixed {self.fixed} {_percent(t['fixed_widest_half_width'])}",
        ]
        if t["same_interval_fixed_repeats"]:
            tight = "" if t["all_tight"] else " (some cells reached the cap, not the tolerance)"
            same = _saving(t["fio_time_saved_vs_same_interval"])
            lines.append(
                f"a fixed count giving every cell auto's interval: {t['same_interval_fixed_repeats']} repeats, "
                f"{t['same_interval_fixed_fio_s']:.1f} s of fio" + (f" ({same})" if same else "") + tight
            )
        return lines

    def _check_lines(self) -> list[str]:
        p = self.plan
        checks = self.coverage_checks()
        if not checks:
            return [f"the {p.method} interval is not checked: no cell has more than {p.first} repeats (raise --fixed)"]
        head = f"the {p.method} interval checked on these repeats (each choice of k of a cell's repeats):"
        return [head, *(f"  {c.describe()}" for c in checks)]

    def render(self) -> str:
        p = self.plan
        headers = ["cell", "auto n", "auto fio s", "auto interval", "stop", f"fixed {self.fixed} fio s", "interval"]
        rows = [
            [
                r.cell,
                r.auto.repeats,
                f"{r.auto.fio_s:.1f}",
                r.auto.describe(),
                r.why,
                f"{r.fixed.fio_s:.1f}",
                r.fixed.describe(),
            ]
            for r in self.rows
        ]
        lines = [
            f"--repeat auto ({p.confidence:.0%} {p.method} interval of the median within ±{p.tolerance:.0%}, "
            f"cap {p.cap}) against --repeat {self.fixed}, the same interval for both",
            tabulate(rows, headers=headers, floatfmt=".1f", disable_numparse=True),
            "",
            *self._total_lines(),
            "",
            *self._check_lines(),
        ]
        return "\n".join(lines)


def _measure(
    runner: CellRunner, spec: CellSpec, plan: RepeatPlan, fixed: int, progress: Progress
) -> list[tuple[float, float]]:
    """Repeats of ``spec`` until auto would have stopped and at least ``fixed`` ran."""
    measured: list[tuple[float, float]] = []
    stopped = False
    while len(measured) < max(plan.cap, fixed):
        result = runner.run(replace(spec, repeat=len(measured)))
        measured.append((result.bw_mib_s, fio_seconds(result)))
        stopped = stopped or next_step([bw for bw, _ in measured], plan).stop
        progress(f"bench: {spec.id} repeat {len(measured)}: {result.bw_mib_s:.1f} MiB/s")
        if stopped and len(measured) >= fixed:
            break
    return measured


def run_repeat_bench(
    inventory: Inventory,
    *,
    pair: str,
    repeats: int,
    run_dir: Path,
    progress: Progress,
    plan: RepeatPlan | None = None,
    fixed: int = DEFAULT_FIXED,
) -> RepeatBench:
    """Measure :data:`WORKLOADS` on ``pair`` under the quick profile (``repeats``: how many of
    them, from the first)."""
    plan = plan or RepeatPlan()
    runner = CellRunner.standalone(inventory, run_dir)
    try:
        runs = {}
        for workload in WORKLOADS[: max(1, repeats)]:
            spec = CellSpec("bench_repeats", pair, for_profile(PROFILES["quick"], workload))
            runs[spec.id] = _measure(runner, spec, plan, fixed, progress)
    finally:
        runner.pool.close_all()
    return RepeatBench(repeat_rows(runs, plan, fixed), plan, fixed)
