"""The CI gate: compare a run with a reference, write ``baseline-compare.md``, give an exit code.

Shared by ``harness compare`` and ``pytest --baseline-compare`` so the two can never disagree.
Exit codes follow :mod:`harness.errors`: 0 when nothing regressed (pass, improved, or
inconclusive — an inconclusive cell is reported, not failed), 1 on a regression; bad input
raises :class:`~harness.errors.ConfigError` (exit 2) before anything is written.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from harness.baseline.compare import BaselineComparison, compare_cells
from harness.baseline.markdown import render_markdown
from harness.baseline.refs import Side
from harness.rules.tolerance import tolerance_rules
from harness.runfiles.rundir import RunDir

if TYPE_CHECKING:  # plots pulls in matplotlib, imported only when the plot is drawn
    from harness.report.plots import Plot

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
    reference: Side = field(repr=False)
    current: Side = field(repr=False)

    @property
    def exit_code(self) -> int:
        return EXIT_REGRESSED if self.comparison.regressed else 0

    def plot(self) -> Plot | None:
        """The current run's report plot of this comparison: bandwidth per cell, baseline vs
        current; ``None`` when neither side measured bandwidth."""
        from harness.report.plots import Plot, plot_baseline_vs_current

        png = plot_baseline_vs_current(self.reference.cells, self.current.cells, "bw")
        if png is None:
            return None
        title = f"Bandwidth: {self.reference.describe()} vs {self.current.describe()}"
        return Plot("baseline-vs-current", title, png)


def run_gate(
    reference: Side,
    current: Side,
    tolerances: Mapping[str, float | None] | None = None,
    *,
    write_to: Path | None = None,
) -> GateResult:
    """Compare ``current`` with ``reference`` under the default rules plus ``tolerances``.

    With ``write_to`` (a run directory) the Markdown goes to ``write_to/baseline-compare.md``;
    the caller puts :meth:`GateResult.plot` into the run's report when it writes it.
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
        RunDir(write_to).check_writable()
        written = write_to / COMPARE_MD
        # Atomic, like the other reports: a CI step uploading artifacts never sees half a file.
        tmp = written.with_name(f".{COMPARE_MD}.{os.getpid()}.tmp")
        tmp.write_text(markdown, encoding="utf-8")
        os.replace(tmp, written)
    return GateResult(comparison, markdown, summary, written, reference, current)
