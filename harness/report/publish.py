"""A run's report files: comparison.md and .csv, report.html and plots/*.png, written in one go.

:func:`write_report` writes them from results already in memory (the end of a pytest run, and
``harness compare`` adding its baseline plot); :func:`render_run` reads a run directory once
and writes them, which is what ``harness report RUN_DIR`` does.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from harness.errors import ConfigError
from harness.report.csvfile import render_csv
from harness.report.firstscreen import FirstScreen
from harness.report.markdown import render_markdown
from harness.report.page import render_html
from harness.report.results import RunResults
from harness.runfiles.rundir import RunDir
from harness.runfiles.runinfo import RunInfo
from harness.userfiles.userfile import read_config_text

if TYPE_CHECKING:  # plots pulls in matplotlib, imported only when a report is rendered
    from harness.report.plots import Plot

__all__ = ["render_run", "run_plots", "write_atomic", "write_report"]

_PLOT_FILE: Final = re.compile(r"\A[a-z0-9][a-z0-9-]*\.png\Z")


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
    screen: FirstScreen | None = None,
) -> list[Path]:
    """Write comparison.md and .csv, report.html and plots/*.png; returns their paths.

    The plots are the run's own, then ``extra_plots`` (a baseline comparison made by the
    caller).  PNGs an earlier rendering wrote into plots/ that are not among them are removed:
    they would no longer match report.html (a user's own PNGs there are kept).  Nothing is
    written into a saved baseline or through a plots/ that is a symlink.  ``with_plots=False``
    writes the tables only (an interrupted run, which a CI runner may kill any moment; the plots
    cost seconds).  ``screen`` is the run's first screen, which report.html opens with.
    """
    comparison = results.comparison
    plots = [*run_plots(results), *extra_plots] if with_plots else []
    outputs: list[tuple[Path, str | bytes]] = [
        (run.comparison_md, render_markdown(comparison, info)),
        (run.comparison_csv, render_csv(comparison.cells)),
        (run.report_html, render_html(comparison, info, [p.figure for p in plots], screen)),
    ]
    names = [p.name for p in plots]
    if len(set(names)) != len(names):
        raise ValueError(f"plot names must be unique: {names}")
    run.check_writable()
    if plots:
        run.plots_dir.mkdir(exist_ok=True)
        outputs += [(run.plots_dir / f"{p.name}.png", p.png) for p in plots]
    _remove_stale_plots(run, {f"{name}.png" for name in names})
    for path, content in outputs:
        write_atomic(path, content)
    write_atomic(run.plots_written, "".join(f"{name}.png\n" for name in names))
    return [path for path, _ in outputs]


def _remove_stale_plots(run: RunDir, keep: set[str]) -> None:
    """Remove the PNGs an earlier rendering wrote that this one does not: only those it recorded
    (a user's own PNG in plots/ stays, and so does a link put in place of one)."""
    if not run.plots_dir.is_dir() or not run.plots_written.is_file():
        return
    try:
        earlier = read_config_text(run.plots_written, "list of written plots").splitlines()
    except ConfigError:
        return  # not the harness's own list: remove nothing
    for name in set(earlier) - keep:
        stale = run.plots_dir / name
        # a line of the list names a file in plots/ itself, never a path out of it
        if _PLOT_FILE.match(name) and not stale.is_symlink():
            stale.unlink(missing_ok=True)


def render_run(run_dir: RunDir | Path, extra_plots: Sequence[Plot] = ()) -> list[Path]:
    """(Re)write the run's report from its samples, series and run.json, read once; returns the paths."""
    run = run_dir if isinstance(run_dir, RunDir) else RunDir.open(run_dir)
    results = RunResults.read(run)
    return write_report(run, results, run.run_info(), extra_plots)
