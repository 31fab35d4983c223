"""A run's report files: comparison.md and .csv, report.html and plots/*.png, written in one go.

:func:`write_report` writes them from results already in memory (the end of a pytest run, and
``harness compare`` adding its baseline plot); :func:`render_run` reads a run directory once
and writes them, which is what ``harness report RUN_DIR`` does.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from harness.report.csvfile import render_csv
from harness.report.markdown import render_markdown
from harness.report.page import render_html
from harness.report.results import RunResults
from harness.runfiles.rundir import RunDir
from harness.runfiles.runinfo import RunInfo

if TYPE_CHECKING:  # plots pulls in matplotlib, imported only when a report is rendered
    from harness.report.plots import Plot

__all__ = ["render_run", "run_plots", "write_atomic", "write_report"]


def write_atomic(path: Path, content: str | bytes) -> None:
    # A reader (CI artifact upload, a browser reloading) never sees a half-written file.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    if isinstance(content, bytes):
        tmp.write_bytes(content)
    else:
        tmp.write_text(content, encoding="utf-8")
    os.replace(tmp, path)


def run_plots(results: RunResults) -> list[Plot]:
    """Every plot the run has data for: its cells and its per-second series."""
    # Imported here, not at the top: matplotlib costs half a second, and this module is loaded
    # by the pytest plugin in every xdist worker, while only the controller renders the report.
    from harness.report.plots import run_plots as plots_of

    return plots_of(results.comparison.cells, results.series)


def write_report(
    run: RunDir,
    results: RunResults,
    info: RunInfo | None = None,
    extra_plots: Sequence[Plot] = (),
    *,
    with_plots: bool = True,
) -> list[Path]:
    """Write comparison.md and .csv, report.html and plots/*.png; returns their paths.

    The plots are the run's own, then ``extra_plots`` (a baseline comparison made by the
    caller).  PNGs in plots/ that are not among them are removed: they would be from an earlier
    rendering and no longer match report.html.  ``with_plots=False`` writes the tables only (an
    interrupted run, which a CI runner may kill any moment; the plots cost seconds).
    """
    comparison = results.comparison
    plots = [*run_plots(results), *extra_plots] if with_plots else []
    outputs: list[tuple[Path, str | bytes]] = [
        (run.comparison_md, render_markdown(comparison, info)),
        (run.comparison_csv, render_csv(comparison.cells)),
        (run.report_html, render_html(comparison, info, [p.figure for p in plots])),
    ]
    names = [p.name for p in plots]
    if len(set(names)) != len(names):
        raise ValueError(f"plot names must be unique: {names}")
    if plots:
        run.plots_dir.mkdir(exist_ok=True)
        outputs += [(run.plots_dir / f"{p.name}.png", p.png) for p in plots]
    if run.plots_dir.is_dir():
        keep = {f"{name}.png" for name in names}
        for stale in run.plots_dir.glob("*.png"):
            if stale.name not in keep:
                stale.unlink()
    for path, content in outputs:
        write_atomic(path, content)
    return [path for path, _ in outputs]


def render_run(run_dir: RunDir | Path, extra_plots: Sequence[Plot] = ()) -> list[Path]:
    """(Re)write the run's report from its samples, series and run.json, read once; returns the paths."""
    run = run_dir if isinstance(run_dir, RunDir) else RunDir.open(run_dir)
    results = RunResults.read(run)
    return write_report(run, results, run.run_info(), extra_plots)
