"""Reports of a run, from its samples alone: cells, comparison tables, Markdown/CSV/HTML/text.

Pure: nothing here touches a node.  The pieces, in data-flow order:

* :mod:`~harness.report.aggregate`: samples → :class:`Cell` (repeats as median and spread);
* :mod:`~harness.report.comparison`: cells → :class:`Comparison` (tables with ratios);
* :mod:`~harness.report.formatting` and :mod:`~harness.report.header`: how values, verdicts and
  the run's header facts are written, the same in every format;
* :mod:`~harness.report.markdown`, :mod:`~harness.report.csvfile`, :mod:`~harness.report.page`,
  :mod:`~harness.report.terminal`: comparison → comparison.md, comparison.csv, report.html,
  the terminal summary;
* :mod:`~harness.runfiles.series`: per-second bandwidth (series.ndjson, fio bandwidth logs);
* :mod:`~harness.report.plot_data` / :mod:`~harness.report.plots`: cells and series → PNG plots
  (matplotlib; imported on use, not here, so importing the package stays cheap);
* :mod:`~harness.report.results`: a run's samples and series, read once, and what is computed
  from them (cells, comparison);
* :mod:`~harness.report.publish`: comparison.md/.csv, report.html and plots/*.png of a run
  directory (:mod:`harness.runfiles.rundir`), written in one go;
* :mod:`~harness.cli.report`: ``harness report RUN_DIR`` (imported by the CLI, not here).
"""

from harness.report.aggregate import (
    VERDICTS,
    Cell,
    Stat,
    Verdict,
    aggregate_samples,
    cell_sort_key,
    normalise_verdict,
    worst_verdict,
)
from harness.report.comparison import (
    TABLE_METRICS,
    Column,
    Comparison,
    Group,
    Ratio,
    RatioKind,
    Row,
    ScenarioTable,
    build_comparison,
    ratio_of,
)
from harness.report.csvfile import CSV_STAT_FIELDS, csv_fieldnames, render_csv
from harness.report.formatting import format_number, format_ratio, format_stat
from harness.report.markdown import render_markdown
from harness.report.page import FIGURES_SECTION_ID, Figure, render_html
from harness.report.publish import render_run, run_plots, write_report
from harness.report.results import RunResults
from harness.report.terminal import render_text

__all__ = [
    "CSV_STAT_FIELDS",
    "FIGURES_SECTION_ID",
    "TABLE_METRICS",
    "VERDICTS",
    "Cell",
    "Column",
    "Comparison",
    "Figure",
    "Group",
    "Ratio",
    "RatioKind",
    "Row",
    "RunResults",
    "ScenarioTable",
    "Stat",
    "Verdict",
    "aggregate_samples",
    "build_comparison",
    "cell_sort_key",
    "csv_fieldnames",
    "format_number",
    "format_ratio",
    "format_stat",
    "normalise_verdict",
    "ratio_of",
    "render_csv",
    "render_html",
    "render_markdown",
    "render_run",
    "render_text",
    "run_plots",
    "worst_verdict",
    "write_report",
]
