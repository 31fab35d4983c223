"""Reports of a run, from its samples alone: cells, comparison tables, Markdown/CSV/HTML/text.

Pure: nothing here touches a node.  The pieces, in data-flow order:

* :mod:`~harness.report.aggregate`: samples → :class:`~harness.report.aggregate.Cell` (repeats as median and spread);
* :mod:`~harness.report.comparison`: cells → :class:`~harness.report.comparison.Comparison` (tables with ratios);
* :mod:`~harness.report.formatting` and :mod:`~harness.report.header`: how values, verdicts and
  the run's header facts are written, the same in every format;
* :mod:`~harness.report.validity`: each cell's validity certificate over its repeats, and the
  run's count of clean, disturbed and otherwise inconclusive cells;
* :mod:`~harness.report.markdown`, :mod:`~harness.report.csvfile`, :mod:`~harness.report.page`,
  :mod:`~harness.report.terminal`: comparison → comparison.md, comparison.csv, report.html,
  the terminal summary;
* :mod:`~harness.runfiles.series`: per-second bandwidth (series.ndjson, fio bandwidth logs);
* :mod:`~harness.report.plot_data` / :mod:`~harness.report.plots`: cells and series → PNG plots
  (matplotlib; imported on use, so importing the package stays cheap);
* :mod:`~harness.report.results`: a run's samples and series, read once, and what is computed
  from them (cells, comparison);
* :mod:`~harness.report.publish`: comparison.md/.csv, report.html and plots/*.png of a run
  directory (:mod:`harness.runfiles.rundir`), written in one go;
* :mod:`~harness.cli.report`: ``harness report RUN_DIR`` (imported by the CLI, not here).
"""
