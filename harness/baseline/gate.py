"""The CI gate: compare a run with a reference, write ``baseline-compare.md``, give an exit code.

Shared by ``harness compare`` and ``pytest --baseline-compare`` so the two can never disagree.
Exit codes follow :mod:`harness.errors`: 0 when nothing regressed (pass, improved, or
inconclusive — an inconclusive cell is reported, not failed), 1 on a regression; bad input
raises :class:`~harness.errors.ConfigError` (exit 2) before anything is written.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from harness.baseline.compare import BaselineComparison, compare_cells
from harness.baseline.markdown import render_markdown
from harness.baseline.refs import Side
from harness.baseline.tolerance import tolerance_rules

__all__ = ["COMPARE_MD", "EXIT_REGRESSED", "GateResult", "run_gate"]

#: File name of the Markdown summary inside the compared run's directory.
COMPARE_MD: Final = "baseline-compare.md"
#: Exit status of a comparison that found a regression (the CLI's "unhealthy / not met").
EXIT_REGRESSED: Final = 1


@dataclass(frozen=True)
class GateResult:
    comparison: BaselineComparison
    markdown: str
    #: The same without the full per-cell table, for a terminal.
    summary: str
    written: Path | None

    @property
    def exit_code(self) -> int:
        return EXIT_REGRESSED if self.comparison.regressed else 0


def run_gate(
    reference: Side,
    current: Side,
    tolerances: Mapping[str, float | None] | None = None,
    *,
    write_to: Path | None = None,
) -> GateResult:
    """Compare ``current`` with ``reference`` under the default rules plus ``tolerances``.

    With ``write_to`` (a run directory) the Markdown goes to ``write_to/baseline-compare.md``.
    """
    comparison = compare_cells(
        reference.cells,
        current.cells,
        tolerance_rules(tolerances),
        reference_info=reference.info,
        current_info=current.info,
    )
    ref_text, cur_text = reference.describe(), current.describe()
    markdown = render_markdown(comparison, ref_text, cur_text)
    summary = render_markdown(comparison, ref_text, cur_text, details=False)
    written = None
    if write_to is not None:
        written = write_to / COMPARE_MD
        # Atomic, like the other reports: a CI step uploading artifacts never sees half a file.
        tmp = written.with_name(f".{COMPARE_MD}.{os.getpid()}.tmp")
        tmp.write_text(markdown, encoding="utf-8")
        os.replace(tmp, written)
        _add_plot(write_to, reference, current)
    return GateResult(comparison, markdown, summary, written)


def _add_plot(run_dir: Path, reference: Side, current: Side) -> None:
    """Re-render the run's report with the baseline-vs-current bandwidth plot in it."""
    from harness.report.plots import Plot, plot_baseline_vs_current
    from harness.report.run_dir import render_run

    png = plot_baseline_vs_current(reference.cells, current.cells, "bw")
    if png is not None and (run_dir / "samples.ndjson").exists():
        title = f"Bandwidth: {reference.describe()} vs {current.describe()}"
        render_run(run_dir, extra_plots=[Plot("baseline-vs-current", title, png)])
