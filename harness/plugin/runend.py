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

and writes the run's first screen, ``summary.md`` (what failed and why, the baseline's verdict,
where the tables are, :mod:`harness.report.firstscreen`) and ``bounds.txt`` (every relative
bound and the model's fit), and prints the first screen at the head of the terminal summary,
then the files, then the baseline comparison.  The tables stay in their files.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import pytest

from harness.baseline.gate import GateResult
from harness.baseline.markdown import regressed_cells, verdict_line
from harness.baseline.refs import Side
from harness.durability.durmap import MAP_FILE
from harness.plugin.baseline import BaselineStep
from harness.plugin.interrupt import INTERRUPT_KEY
from harness.plugin.metrics import export_run_metrics
from harness.plugin.relative import relative_verdicts
from harness.plugin.resultsdb import results_db_of
from harness.plugin.session import HarnessSession, fail_session
from harness.plugin.uncelled import uncelled_failures
from harness.report.firstscreen import FirstScreen, first_screen, judgement_lines
from harness.report.modelfit import model_fit
from harness.report.publish import write_atomic, write_report
from harness.report.results import RunResults
from harness.resultsdb.writer import write_results
from harness.rules.bounds import BoundResult
from harness.runfiles.rundir import update_latest

__all__ = ["RunEnd"]


class RunEnd:
    """The controller's end of a run: reads the results once and hands them to every consumer."""

    def __init__(self, hs: HarnessSession, config: pytest.Config) -> None:
        self.hs = hs
        self.config = config
        #: The "files" lines; ``None`` until a run with samples finished.
        self.lines: list[str] | None = None
        #: What failed and why, shown first; ``None`` until a run with samples finished.
        self.screen: FirstScreen | None = None
        self.baseline: BaselineStep | None = None
        #: the report's files, relative to the run directory
        self.names: list[str] = []

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
        # report.html opens with the first screen, whose output problems the metrics add after
        screen = self._screen(results, verdicts, gate)
        # interrupted: the tables only (`harness report` draws the plots later)
        paths = write_report(
            run,
            results,
            info,
            [] if baseline_plot is None else [baseline_plot],
            with_plots=hs.interrupted is None,
            screen=screen,
        )
        update_latest(hs.reports_root, run)
        metrics = export_run_metrics(self.config, run, results, info)
        names = [os.path.relpath(p, run.path) for p in paths]
        fit = model_fit(results.samples).summary()
        self._first_screen(session, screen, verdicts=verdicts, gate=gate, names=names, metrics=metrics, fit=fit)
        self.lines = self._file_lines(stored, metrics, fit)
        if self.baseline is not None:
            self.baseline.save(session, results, info)

    def _screen(
        self, results: RunResults, verdicts: list[tuple[str, BoundResult]], gate: GateResult | None
    ) -> FirstScreen:
        """What failed and why, the baseline's verdict and its regressed cells."""
        baseline = None
        problems = []
        if self.baseline is not None:
            problems += [] if self.baseline.error is None else [self.baseline.error]
            if gate is not None:
                baseline = f"baseline {self.baseline.compare_with}: {verdict_line(gate.comparison)}"
        recorded = {test_id for cell in results.comparison.cells for test_id in cell.test_ids}
        return first_screen(
            results.comparison,
            verdicts,
            uncelled=uncelled_failures(self.config, recorded),
            baseline=baseline,
            regressed=self.baseline is not None and self.baseline.regressed,
            regressions=[] if gate is None else regressed_cells(gate.comparison),
            problems=problems,
        )

    def _first_screen(
        self,
        session: pytest.Session,
        screen: FirstScreen,
        *,
        verdicts: list[tuple[str, BoundResult]],
        gate: GateResult | None,
        names: list[str],
        metrics: list[str],
        fit: list[str],
    ) -> None:
        """Write bounds.txt and summary.md, and keep the first screen for the terminal."""
        run = self.hs.run
        write_atomic(run.bounds_txt, "\n".join([*judgement_lines(verdicts), *fit]) + "\n")
        problems = [line for line in metrics if line.startswith("metrics: NOT")]
        files = _files(names, compared=gate is not None, mapped=(run.path / MAP_FILE).exists())
        self.screen = dataclasses.replace(screen, problems=(*problems, *screen.problems), files=files)
        self.names = names
        write_atomic(run.summary_md, self.screen.markdown(run.run_id, int(session.exitstatus)))

    def _file_lines(self, stored: list[str], metrics: list[str], fit: list[str]) -> list[str]:
        run = self.hs.run
        names = [run.summary_md.name, *self.names, run.bounds_txt.name]
        lines = [f"reports: {run.path} (reports/latest)"] + [f"  {name}" for name in names]
        problems = set(self.screen.problems) if self.screen is not None else set()
        return lines + stored + [line for line in metrics if line not in problems] + fit[:1]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        # what failed and why first; the tables are in the files listed after it
        if self.screen is not None:
            terminalreporter.write_sep("=", self.screen.title)
            for line in self.screen.lines():
                terminalreporter.write_line(line)
        if self.lines is not None:
            terminalreporter.write_sep("-", "harness: files (tables, bounds, report)")
            for line in self.lines:
                terminalreporter.write_line(line)
        if self.baseline is not None and self.baseline.lines:
            terminalreporter.write_sep("=", "baseline")
            for line in self.baseline.lines:
                terminalreporter.write_line(line)


def _files(names: list[str], compared: bool, mapped: bool = False) -> tuple[tuple[str, str], ...]:
    """The run's files a reader looks at next, and what each holds."""
    what = {
        "comparison.md": "every scenario's table: pairs side by side, ratios, predictions, verdicts",
        "comparison.csv": "the same, one row per cell",
        "report.html": "the tables and plots in one page",
    }
    files = [(name, what[name]) for name in names if name in what]
    files.append(("bounds.txt", "every relative bound (cross- vs same-AZ, replicated vs local) and the model's fit"))
    if compared:
        files.append(("baseline-compare.md", "the baseline comparison, every compared cell"))
    if mapped:
        files.append((MAP_FILE, "the durability map: crash trials, acknowledged and lost writes, bounds"))
    files.append(("junit.xml", "one test case per cell, with its metrics"))
    return tuple(files)
