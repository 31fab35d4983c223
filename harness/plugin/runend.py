"""The end of a run, in the controller only (registered like pytest-xdist's ``DSession``).

One object owns everything that happens once the cells are done, in this order:

1. read the run's samples.ndjson and series.ndjson, once (:class:`~harness.report.results.RunResults`);
2. judge the ratios between cells (the inventory's ``thresholds:``) and the model's fit;
3. gate on a baseline (``--baseline-compare``), with the same results;
4. write run.json (:mod:`harness.runfiles.runinfo`) with the exit status these judged, and the run into
   the results database (:mod:`harness.resultsdb`; ``--results-db``, off with ``none``);
5. write the report, once: tables, report.html and plots, the baseline plot among them;
6. point ``reports/latest`` at the run, and write its metrics for Prometheus (``metrics.prom``,
   ``--openmetrics-file``, ``--pushgateway``: :mod:`harness.plugin.metrics`);
7. save the run as a baseline (``--baseline-save``), from the same results;

and prints the comparison, the judgements and the baseline in the terminal summary.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import pytest

from harness.baseline.refs import Side
from harness.plugin.baseline import BaselineStep
from harness.plugin.interrupt import INTERRUPT_KEY
from harness.plugin.metrics import export_run_metrics
from harness.plugin.relative import relative_verdicts
from harness.plugin.resultsdb import results_db_of
from harness.plugin.session import HarnessSession, fail_session
from harness.report.modelfit import model_fit
from harness.report.publish import write_report
from harness.report.results import RunResults
from harness.resultsdb.writer import write_results
from harness.runfiles.rundir import update_latest

__all__ = ["RunEnd"]


class RunEnd:
    """The controller's end of a run: reads the results once and hands them to every consumer."""

    def __init__(self, hs: HarnessSession, config: pytest.Config) -> None:
        self.hs = hs
        self.config = config
        #: The "relative bounds and reports" lines; ``None`` until a run with samples finished.
        self.lines: list[str] | None = None
        self.baseline: BaselineStep | None = None

    # trylast: after pytest's own sessionfinish tore the fixtures down (their undo included)
    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        hs, run = self.hs, self.hs.run
        guard = self.config.stash.get(INTERRUPT_KEY, None)
        if guard is not None and guard.interrupted:
            # every undo has run: free the cluster now, before the report is written (a CI
            # runner may kill us any moment after its SIGTERM)
            hs.end_run()
            hs.interrupted = guard.describe()  # shown in run.json and the report's header
        self.baseline = BaselineStep.of(self.config, hs)
        if not run.samples_ndjson.exists():
            if self.baseline is not None:
                self.baseline.nothing_recorded()
            return
        results = RunResults.read(run)
        verdicts = relative_verdicts(results.samples, hs.inventory.thresholds)
        if any(result.verdict == "fail" for _, result in verdicts):
            fail_session(session, pytest.ExitCode.TESTS_FAILED)
        info = hs.record(exitstatus=int(session.exitstatus))
        gate = None
        if self.baseline is not None:
            gate = self.baseline.compare(session, Side.of_run(run, results, info))
        baseline_plot = None if gate is None else gate.plot()
        info = dataclasses.replace(info, exitstatus=int(session.exitstatus))
        run.write_run_info(info)
        db = results_db_of(self.config, hs.reports_root)
        verdict = None if gate is None else gate.comparison.verdict
        stored = [] if db is None else [write_results(db, info, results, gate=verdict).line]
        # interrupted: the tables only (`harness report` draws the plots later)
        paths = write_report(
            run, results, info, [] if baseline_plot is None else [baseline_plot], with_plots=hs.interrupted is None
        )
        update_latest(hs.reports_root, run)
        metrics = export_run_metrics(self.config, run, results, info)
        reports = [f"reports: {run.path} (reports/latest)"] + [f"  {os.path.relpath(p, run.path)}" for p in paths]
        judged = [f"{result.verdict.upper():12} {label}: {result.reason}" for label, result in verdicts]
        self.lines = reports + stored + metrics + judged + model_fit(results.samples).summary()
        if self.baseline is not None:
            self.baseline.save(session, results, info)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.lines is not None:
            terminalreporter.write_sep("=", "replication comparison")
            md = self.hs.run.comparison_md
            if md.exists():
                for line in md.read_text().splitlines():
                    terminalreporter.write_line(line)
            terminalreporter.write_sep("-", "relative bounds and reports")
            for line in self.lines:
                terminalreporter.write_line(line)
        if self.baseline is not None and self.baseline.lines:
            terminalreporter.write_sep("=", "baseline")
            for line in self.baseline.lines:
                terminalreporter.write_line(line)
