"""``harness bench repeats``: ``--repeat auto`` against a fixed number of repeats, in fio time and in
the interval each achieves.  Printed, never asserted.

Each cell is run repeat after repeat, once: ``auto`` is the prefix at which
:func:`harness.rules.repeats.next_step` stopped (tight, or the cap), ``fixed N`` the first N
repeats, so both read the same measurements and differ only in their stopping rule.  For each the
table gives the repeats, fio's own time on the node and the interval of the median bandwidth:
its half-width over the median and its coverage.  ``N`` fixed repeats below the fewest that give
an interval at the confidence (6 for 95 %) only reach the coverage of the widest interval
(93.75 % for 5), which the table says.  The totals add, beside both, the fixed count that gives
every cell an interval as tight as auto's: the most repeats any cell needed under auto.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tabulate import tabulate

from harness.cell import CellRunner, CellSpec
from harness.cell.autorepeat import fio_seconds
from harness.fio.profiles import PROFILES
from harness.fio.workloads import for_profile, write_job
from harness.inventory import Inventory
from harness.progress import Progress
from harness.rules.repeats import MedianInterval, RepeatPlan, coverage, median_interval, next_step

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
    #: the coverage of the widest interval when there are too few repeats for the confidence
    widest_coverage: float

    def describe(self) -> str:
        if self.interval is None:
            return f"none (n={self.repeats} covers {self.widest_coverage:.2%} at most)"
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


def _strategy(values: Sequence[float], seconds: Sequence[float], confidence: float) -> Strategy:
    n = len(values)
    return Strategy(n, sum(seconds), median_interval(values, confidence), coverage(n, 1) if n else 0.0)


def repeat_rows(runs: Mapping[str, Sequence[tuple[float, float]]], plan: RepeatPlan, fixed: int) -> list[RepeatRow]:
    """One row per cell from its repeats in the order they ran, each ``(MiB/s, fio seconds)``."""
    rows = []
    for cell, measured in runs.items():
        values = [bw for bw, _ in measured]
        seconds = [s for _, s in measured]
        stop = next((n for n in range(1, len(values) + 1) if next_step(values[:n], plan).stop), len(values))
        why = next_step(values[:stop], plan).why
        auto = _strategy(values[:stop], seconds[:stop], plan.confidence)
        rows.append(
            RepeatRow(
                cell,
                auto,
                _strategy(values[:fixed], seconds[:fixed], plan.confidence),
                why,
                statistics.median(seconds) if seconds else 0.0,
            )
        )
    return rows


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
            "auto_vs_fixed": auto / fixed - 1 if fixed else None,
            "all_tight": all(r.why == "tight" for r in self.rows),
            "same_interval_fixed_repeats": same,
            "same_interval_fixed_fio_s": same_s,
            "auto_vs_same_interval_fixed": auto / same_s - 1 if same_s else None,
        }

    def to_json(self) -> dict[str, Any]:
        def side(s: Strategy) -> dict[str, Any]:
            i = s.interval
            return {
                "repeats": s.repeats,
                "fio_s": s.fio_s,
                "interval": None if i is None else {"low": i.low, "high": i.high, "coverage": i.coverage},
                "relative_half_width": None if i is None else i.relative_half_width,
            }

        return {
            "confidence": self.plan.confidence,
            "tolerance": self.plan.tolerance,
            "cap": self.plan.cap,
            "fixed": self.fixed,
            "cells": [{"cell": r.cell, "why": r.why, "auto": side(r.auto), "fixed": side(r.fixed)} for r in self.rows],
            "totals": self.totals(),
        }

    def render(self) -> str:
        p = self.plan
        headers = ["cell", "auto n", "auto fio s", "auto interval", "stop", f"fixed {self.fixed} fio s", "interval"]
        rows = [
            [r.cell, r.auto.repeats, r.auto.fio_s, r.auto.describe(), r.why, r.fixed.fio_s, r.fixed.describe()]
            for r in self.rows
        ]
        t = self.totals()
        lines = [
            f"--repeat auto ({p.confidence:.0%} interval of the median within ±{p.tolerance:.0%}, cap {p.cap}) "
            f"against --repeat {self.fixed}",
            tabulate(rows, headers=headers, floatfmt=".1f", disable_numparse=True),
            "",
            f"total fio time: auto {t['auto_fio_s']:.1f} s, fixed {self.fixed} {t['fixed_fio_s']:.1f} s"
            + ("" if t["auto_vs_fixed"] is None else f" (auto {t['auto_vs_fixed']:+.0%})"),
        ]
        if t["same_interval_fixed_repeats"]:
            tight = "" if t["all_tight"] else " (some cells reached the cap, not the tolerance)"
            saving = t["auto_vs_same_interval_fixed"]
            lines.append(
                f"a fixed count giving every cell auto's interval: {t['same_interval_fixed_repeats']} repeats, "
                f"{t['same_interval_fixed_fio_s']:.1f} s of fio"
                + ("" if saving is None else f" (auto {saving:+.0%})")
                + tight
            )
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
