"""Reports of a run, from its samples alone: cells, comparison tables, Markdown/CSV/HTML/text.

Pure: nothing here touches a node.  The pieces, in data-flow order:

* :mod:`~harness.report.aggregate`: samples → :class:`Cell` (repeats as median and spread);
* :mod:`~harness.report.comparison`: cells → :class:`Comparison` (tables with ratios);
* :mod:`~harness.report.render`: comparison → Markdown, CSV, HTML, terminal text;
* :mod:`~harness.series`: per-second bandwidth (series.ndjson, fio bandwidth logs);
* :mod:`~harness.report.plot_data` / :mod:`~harness.report.plots`: cells and series → PNG plots
  (matplotlib; imported on use, not here, so importing the package stays cheap);
* :mod:`~harness.report.run_info` / :mod:`~harness.report.run_dir`: ``reports/<run-id>/``;
* :mod:`~harness.report.cli`: ``harness report RUN_DIR`` (imported by the CLI, not here).
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
from harness.report.render import (
    FIGURES_SECTION_ID,
    Figure,
    csv_fieldnames,
    format_number,
    format_ratio,
    format_stat,
    render_csv,
    render_html,
    render_markdown,
    render_text,
)
from harness.report.run_dir import (
    LATEST,
    RunDir,
    list_runs,
    load_comparison,
    render_run,
    run_plots,
    update_latest,
    write_report,
)
from harness.report.run_info import RunInfo

__all__ = [
    "FIGURES_SECTION_ID",
    "LATEST",
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
    "RunDir",
    "RunInfo",
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
    "list_runs",
    "load_comparison",
    "normalise_verdict",
    "ratio_of",
    "render_csv",
    "render_html",
    "render_markdown",
    "render_run",
    "render_text",
    "run_plots",
    "update_latest",
    "worst_verdict",
    "write_report",
]
