"""``harness bench overhead``: what each phase of a cell costs, and whether the harness's figure is
fio's figure.  Printed, never asserted (a noisy host moves every number).

* phases: N unimpaired and N impaired cells run through the ordinary cell pipeline; the phase
  boundaries come from the run's ledger (:mod:`harness.bench.cellphases`), median and max per phase;
  ``--from-run DIR`` reads them from an earlier run's ledger instead (any scenario, any inventory);
* fidelity: the same fio job (same argv, same device) run by the harness and by hand on the node,
  alternated; the median |Δ| beside the run-to-run spread of each side alone, which is what the
  host itself moves between two identical runs.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tabulate import tabulate

from harness.bench.cellphases import CellPhases, cell_phases, phase_table
from harness.bench.fidelity import fidelity_runs
from harness.cell import CellRunner, CellSpec
from harness.errors import ConfigError
from harness.fio.profiles import PROFILES
from harness.fio.workloads import for_profile, write_job
from harness.impair.profile import NetemProfile
from harness.inventory import Inventory
from harness.progress import Progress
from harness.runfiles.ledger import Ledger

__all__ = ["OverheadReport", "fidelity_summary", "phases_from_run", "run_overhead_bench"]


#: the impaired cells' fault: small enough for any resource's timeouts, large enough to prove
IMPAIRED_RTT_S = 0.002


def _pct(a: float, b: float) -> float:
    return 100.0 * abs(a - b) / b if b else float("nan")


def fidelity_summary(runs: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Median |Δ| % harness vs by hand, and the run-to-run spread of each side alone (median
    |Δ| % between consecutive runs of the same side: the host's own noise)."""
    if not runs:
        return {}
    hand = [r["by_hand_mib_s"] for r in runs]
    harness = [r["harness_mib_s"] for r in runs]
    out = {"median_abs_delta_pct": statistics.median(abs(r["delta_pct"]) for r in runs)}
    if len(runs) > 1:
        out["by_hand_spread_pct"] = statistics.median(_pct(b, a) for a, b in itertools.pairwise(hand))
        out["harness_spread_pct"] = statistics.median(_pct(b, a) for a, b in itertools.pairwise(harness))
    return out


@dataclass
class OverheadReport:
    cells: list[CellPhases]
    fidelity: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {
            "cells": [{"cell": c.cell, "kind": c.kind, **c.seconds, "total": c.total_s} for c in self.cells],
            "fidelity": self.fidelity,
            "fidelity_summary": fidelity_summary(self.fidelity),
        }

    def render(self) -> str:
        parts = []
        for kind in ("unimpaired", "impaired", "disconnected"):
            headers, rows = phase_table(self.cells, kind)
            if rows:
                parts.append(tabulate(rows, headers=headers, floatfmt=".3f"))
        if not parts:
            parts.append("no finished cell with phase marks in the ledger (a run of an older harness?)")
        if self.fidelity:
            rows = [[f["run"], f["harness_mib_s"], f["by_hand_mib_s"], f["delta_pct"]] for f in self.fidelity]
            parts.append(
                tabulate(rows, headers=["fidelity run", "harness MiB/s", "by hand MiB/s", "Δ %"], floatfmt=".2f")
            )
            summary = fidelity_summary(self.fidelity)
            parts.append(
                "\n".join(f"{key.replace('_', ' ')}: {value:.2f}" for key, value in summary.items())
                + "\n(spread: median |Δ| between consecutive runs of the same side, the host's own noise)"
            )
        return "\n\n".join(parts)


def phases_from_run(run_dir: Path) -> OverheadReport:
    """The phases of the cells of an earlier run (its ``ledger.ndjson``)."""
    ledger = run_dir / "ledger.ndjson"
    if not ledger.is_file():
        raise ConfigError(f"{run_dir}: no ledger.ndjson (not a run directory?)")
    return OverheadReport(cell_phases(Ledger(ledger, "").entries()), [])


def run_overhead_bench(
    inventory: Inventory, *, pair: str, repeats: int, run_dir: Path, progress: Progress
) -> OverheadReport:
    """``repeats`` unimpaired and impaired cells (QD1 4k writes, the quick profile), alternated,
    then ``repeats`` alternated fidelity pairs."""
    runner = CellRunner.standalone(inventory, run_dir)
    workload = for_profile(PROFILES["quick"], write_job("randwrite", 4096))
    impairment = NetemProfile.from_rtt(f"bench-{IMPAIRED_RTT_S * 1e3:g}ms", IMPAIRED_RTT_S)
    try:
        for i in range(repeats):
            for spec in (
                CellSpec("bench-overhead", pair, workload, repeat=i),
                CellSpec("bench-overhead", pair, workload, impairment=impairment, repeat=i),
            ):
                result = runner.run(spec)
                progress(f"bench: {spec.id}: {result.wall_s:.2f} s")
        cells = cell_phases(runner.ledger.entries())  # the fidelity cells run longer: not in the tables
        fidelity = fidelity_runs(runner, pair, repeats, progress)
    finally:
        runner.pool.close_all()
    return OverheadReport(cells, fidelity)
