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

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tabulate import tabulate

from harness.bench.cellphases import CellPhases, cell_phases, phase_table
from harness.bench.fidelity import fidelity_runs, fidelity_summary, render_fidelity
from harness.cell import CellRunner, CellSpec
from harness.errors import ConfigError
from harness.fio.profiles import PROFILES
from harness.fio.workloads import for_profile, write_job
from harness.impair.profile import NetemProfile
from harness.inventory import Inventory
from harness.progress import Progress
from harness.runfiles.ledger import Ledger

__all__ = ["OverheadReport", "phases_from_run", "run_overhead_bench"]


#: the impaired cells' fault: small enough for any resource's timeouts, large enough to prove
IMPAIRED_RTT_S = 0.002


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
            parts.append(render_fidelity(self.fidelity))
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
