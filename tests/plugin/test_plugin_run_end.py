"""The end of a run in inner pytest sessions: run.json, the report, ``latest``, the terminal summary.

No node is touched: preflight is a no-op and the inner "scenario" drops recorded samples into
its run directory, as in test_plugin_baseline.  The inner conftest also notes the path of every
samples file the harness reads (the real reader runs; it is only watched), so the end of a run
is seen to read its samples once, however many consumers they feed.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

import pytest

from harness.plugin.session import HarnessSession
from harness.report.publish import render_run
from harness.runfiles.rundir import RunDir
from tests.plugin.test_plugin_baseline import SCENARIO, record, run
from tests.plugin.test_plugin_collection import INVENTORY

CONFTEST = """\
import harness.runfiles.samples

pytest_plugins = ["harness.plugin"]
_read_ndjson = harness.runfiles.samples.read_ndjson


def _watched(path, parse, **options):
    if options.get("what") == "sample":
        with open("reads.txt", "a") as f:
            f.write(f"{path}\\n")
    return _read_ndjson(path, parse, **options)


harness.runfiles.samples.read_ndjson = _watched


def pytest_unconfigure():
    harness.runfiles.samples.read_ndjson = _read_ndjson
"""


@pytest.fixture(scope="module", autouse=True)
def plotting_stack_loaded() -> None:
    """See test_plugin_baseline: numpy cannot be imported twice in one process."""
    import harness.report.plots  # noqa: F401


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setattr(HarnessSession, "start_run", lambda self: None)
    pytester.makeconftest(CONFTEST)
    pytester.makefile(".yaml", inv=INVENTORY)
    pytester.makepyfile(test_scenario=SCENARIO)
    record(pytester, factor=1.0)
    return pytester


def reads(pytester: pytest.Pytester) -> list[str]:
    """Which samples files were read since the last call, as paths under the project."""
    path = Path(pytester.path) / "reads.txt"
    if not path.exists():
        return []
    lines = path.read_text().splitlines()
    path.unlink()
    return [str(Path(line).relative_to(pytester.path)) for line in lines]


def test_the_end_of_a_run_reads_its_samples_once_for_every_consumer(project: pytest.Pytester) -> None:
    assert run(project, "r1", "--baseline-save", "main").ret == pytest.ExitCode.OK
    assert reads(project) == ["reports/r1/samples.ndjson"]  # summary, report, model fit and save
    result = run(project, "r2", "--baseline-compare", "main", "--baseline-save", "main", "--baseline-overwrite")
    assert result.ret == pytest.ExitCode.OK
    # The run's samples once; the compared baseline's once (at start-up only its metadata is read).
    assert reads(project) == ["reports/r2/samples.ndjson", "reports/baselines/plugin-test/main/samples.ndjson"]


def test_the_report_is_written_once_with_the_baseline_plot_in_it(project: pytest.Pytester) -> None:
    assert run(project, "r1", "--baseline-save", "main").ret == pytest.ExitCode.OK
    result = run(project, "r2", "--baseline-compare", "main")
    assert result.ret == pytest.ExitCode.OK
    # The files listed are the report as written: one rendering, the baseline plot among its plots.
    result.stdout.fnmatch_lines(
        ["*- harness: files (tables, bounds, report) -*", "reports: */reports/r2 (reports/latest)", "  summary.md"]
    )
    result.stdout.fnmatch_lines(["  comparison.md", "  report.html", "  plots/*", "  plots/baseline-vs-current.png"])
    html = (Path(project.path) / "reports" / "r2" / "report.html").read_text()
    assert html.count("<img ") == 3 and 'alt="Bandwidth: baseline `main`' in html


def test_run_json_is_the_runs_record(project: pytest.Pytester) -> None:
    assert run(project, "r1").ret == pytest.ExitCode.OK
    reports = Path(project.path) / "reports"
    data = json.loads((reports / "r1" / "run.json").read_text())
    assert sorted(data) == [
        "argv",
        "clock_offsets",
        "exitstatus",
        "finished",
        "interrupted",
        "inventory_name",
        "inventory_path",
        "profile",
        "run_id",
        "started",
        "versions",
    ]
    assert (data["run_id"], data["inventory_path"], data["inventory_name"]) == ("r1", "inv.yaml", "plugin-test")
    assert (data["profile"], data["exitstatus"]) == ("standard", 0)
    assert (data["clock_offsets"], data["interrupted"]) == ({}, None)  # this run's start was a no-op
    assert datetime.fromisoformat(data["started"]) <= datetime.fromisoformat(data["finished"])
    assert data["argv"] == sys.argv  # the command line of the process (here the outer pytest's)
    assert {"harness", "python", "pytest"} <= set(data["versions"])
    md = (reports / "r1" / "comparison.md").read_text()
    assert "- **inventory**: plugin-test (inv.yaml)" in md and f"- **finished**: {data['finished']}" in md
    assert f"harness {data['versions']['harness']}" in md
    assert (reports / "latest").resolve() == (reports / "r1").resolve()


def test_run_json_holds_the_exit_status_the_gate_decided(project: pytest.Pytester) -> None:
    assert run(project, "r1", "--baseline-save", "main").ret == pytest.ExitCode.OK
    record(project, factor=0.5)
    assert run(project, "r2", "--baseline-compare", "main").ret == pytest.ExitCode.TESTS_FAILED
    data = json.loads((Path(project.path) / "reports" / "r2" / "run.json").read_text())
    assert data["exitstatus"] == pytest.ExitCode.TESTS_FAILED  # every test passed; the gate failed the run


def test_a_run_that_recorded_nothing_writes_no_record_and_says_so(project: pytest.Pytester) -> None:
    project.makepyfile(test_scenario="def test_nothing():\n    pass\n")
    result = run(project, "r1", "--baseline-save", "main")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*= baseline =*", "no samples were recorded in this run: nothing to compare or save"])
    result.stdout.no_fnmatch_line("*harness: files*")
    assert reads(project) == []
    run_dir = Path(project.path) / "reports" / "r1"
    # pytest's JUnit and its strict copy (harness.plugin.junit), nothing of the harness's own
    assert sorted(p.name for p in run_dir.iterdir()) == ["junit-strict.xml", "junit.xml"]
    assert not (Path(project.path) / "reports" / "latest").exists()


def test_harness_report_rewrites_the_end_of_run_report_byte_for_byte(project: pytest.Pytester) -> None:
    # One writer of run.json and one reader: the report re-rendered from the run directory alone
    # is the one the run wrote, header included.
    assert run(project, "r1").ret == pytest.ExitCode.OK
    run_dir = RunDir.open(Path(project.path) / "reports" / "r1")
    files = [run_dir.comparison_md, run_dir.comparison_csv, run_dir.report_html, *run_dir.plots_dir.glob("*.png")]
    written = {path: path.read_bytes() for path in files}
    assert sorted(render_run(run_dir)) == sorted(written)
    assert {path: path.read_bytes() for path in files} == written


FAILING_RUN = Path(__file__).parents[1] / "data" / "runs" / "history-lab4" / "20261125-120534-2874"


def _harness_section(stdout: list[str]) -> list[str]:
    """The terminal summary from the harness's first line to the end."""
    start = next(i for i, line in enumerate(stdout) if line.startswith("=") and " harness: " in line)
    return stdout[start:]


def test_the_summary_leads_with_what_failed_and_keeps_the_tables_in_files(project: pytest.Pytester) -> None:
    # the recorded run in which the lab's AZ link was slowed: two multi-az cells failed their bound
    recorded = Path(project.path) / "recorded.ndjson"
    recorded.write_text((FAILING_RUN / "samples.ndjson").read_text())
    result = run(project, "r1")
    section = _harness_section(result.outlines)
    assert section[0].startswith("=") and "harness: 2 failed" in section[0]
    failed = "FAIL replicated_write/multi-az/replicated/{}/none: 145 IOPS < min 150 IOPS"
    assert section[1:3] == [failed.format("randwrite-4k-nj1-qd1"), failed.format("write-4k-nj1-qd1")]
    assert section[3] == "result: 12 cells; 10 pass, 2 fail, 0 inconclusive"
    assert "harness: files" in section[4]
    run_dir = Path(project.path) / "reports" / "r1"
    # the tables are in comparison.md, not on the screen
    table_lines = [line for line in (run_dir / "comparison.md").read_text().splitlines() if line.startswith("|")]
    assert table_lines and not set(table_lines) & set(result.outlines)
    summary = (run_dir / "summary.md").read_text()
    # the headline is pytest's exit status: here the inner test only copied the samples, and passed
    assert summary.startswith("## Storage gate: passed\n\nRun `r1`: 12 cells; 10 pass, 2 fail, 0 inconclusive.\n")
    assert "- **FAIL** `replicated_write/multi-az/replicated/write-4k-nj1-qd1/none`: 145 IOPS < min 150 IOPS" in summary
    assert "- `comparison.md`: every scenario's table" in summary
    assert (run_dir / "bounds.txt").read_text().endswith("\n")


def test_a_regression_against_the_baseline_is_on_the_first_screen(project: pytest.Pytester) -> None:
    assert run(project, "r1", "--baseline-save", "main").ret == pytest.ExitCode.OK
    record(project, factor=0.5)
    result = run(project, "r2", "--baseline-compare", "main")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    section = _harness_section(result.outlines)
    assert "harness: regressed against the baseline" in section[0]
    assert section[1].startswith("baseline main: REGRESSED: 1 regressed · ")
    summary = (Path(project.path) / "reports" / "r2" / "summary.md").read_text()
    assert "**baseline main: REGRESSED: 1 regressed · " in summary and "`baseline-compare.md`" in summary
