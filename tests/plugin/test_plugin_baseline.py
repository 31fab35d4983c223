"""``--baseline-save`` / ``--baseline-compare`` / ``--baseline-overwrite`` in inner pytest sessions.

No node is touched: preflight is replaced by a no-op and the inner "scenario" drops recorded
samples (tests/data/runs, scaled in code for a regression) into its run directory, which is
what a measured cell leaves behind.  Everything after that — reports, comparison, saving, the
exit status — is the real end-of-run flow.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from harness.plugin.session import HarnessSession
from harness.runfiles.samples import SampleStore
from tests.plugin.test_plugin_collection import INVENTORY
from tests.unit.baseline_runs import SINGLE, cell_is, load, scaled

SCENARIO = """\
import shutil
from pathlib import Path

def test_cell(harness_session):
    shutil.copyfile(Path("recorded.ndjson"), harness_session.run_dir / "samples.ndjson")
"""
REGRESSED_CELL = "replicated_write multi-az write-1m-nj8-qd2 [none]"


@pytest.fixture(scope="module", autouse=True)
def plotting_stack_loaded() -> None:
    """pytester drops the modules a test imported when it ends, and numpy (pulled in by the
    end-of-run report's plots) cannot be imported twice in one process; loading the plotting
    stack before any pytester snapshot keeps it loaded for every inner run.  psycopg likewise:
    imported again, its compiled part keeps raising the first import's error classes, which the
    second import's ``except psycopg.Error`` no longer catches (later in-process runs of
    ``harness`` with a PostgreSQL URL would end in an internal error)."""
    importlib.import_module("harness.report.plots")
    importlib.import_module("psycopg")


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    # Preflight and the cluster lock would open SSH connections to the inventory's nodes.
    monkeypatch.setattr(HarnessSession, "start_run", lambda self: None)
    pytester.makeconftest('pytest_plugins = ["harness.plugin"]\n')
    pytester.makefile(".yaml", inv=INVENTORY)
    pytester.makepyfile(test_scenario=SCENARIO)
    record(pytester, factor=1.0)
    return pytester


def record(pytester: pytest.Pytester, factor: float) -> None:
    """What the next inner run measures: the recorded run, one cell's bandwidth scaled."""
    path = Path(pytester.path) / "recorded.ndjson"
    path.unlink(missing_ok=True)
    SampleStore(path).append(scaled(load(SINGLE), factor, where=cell_is("multi-az", "write-1m-nj8-qd2")))


def run(pytester: pytest.Pytester, run_id: str, *args: str) -> pytest.RunResult:
    return pytester.runpytest("--inventory", "inv.yaml", "--run-id", run_id, "-p", "no:cacheprovider", *args)


def baseline_json(pytester: pytest.Pytester, name: str) -> dict[str, object]:
    path = Path(pytester.path) / "reports" / "baselines" / "plugin-test" / name / "baseline.json"
    data: dict[str, object] = json.loads(path.read_text())
    return data


def test_save_then_compare_an_unchanged_run_passes(project: pytest.Pytester) -> None:
    saved = run(project, "r1", "--baseline-save", "main")
    assert saved.ret == pytest.ExitCode.OK
    saved.stdout.fnmatch_lines(["*= baseline =*", "saved baseline 'main' of inventory 'plugin-test': 17 cells"])
    info = baseline_json(project, "main")
    assert (info["run_id"], info["cells"], info["exitstatus"]) == ("r1", 17, 0)

    compared = run(project, "r2", "--baseline-compare", "main")
    assert compared.ret == pytest.ExitCode.OK
    compared.stdout.fnmatch_lines(["*= baseline =*", "## Baseline comparison: PASS", "*16 pass*"])
    md = (Path(project.path) / "reports" / "r2" / "baseline-compare.md").read_text()
    assert md.startswith("## Baseline comparison: PASS")
    assert "baseline `main` (inventory `plugin-test`, run `r1`" in md


def test_a_regression_fails_the_session_and_names_the_cell(project: pytest.Pytester) -> None:
    assert run(project, "r1", "--baseline-save", "main").ret == pytest.ExitCode.OK
    record(project, factor=0.5)
    result = run(project, "r2", "--baseline-compare", "main")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the test itself passed; the gate failed the run
    cell = REGRESSED_CELL.replace("[", "[[]")  # fnmatch reads [none] as a character class
    result.stdout.fnmatch_lines(["## Baseline comparison: REGRESSED", f"| {cell} *| MiB/s *| *−50 % *| *−5 % |"])
    md = (Path(project.path) / "reports" / "r2" / "baseline-compare.md").read_text()
    assert f"| {REGRESSED_CELL} | IOPS" in md


def test_inventory_tolerances_apply(project: pytest.Pytester) -> None:
    project.makefile(".yaml", inv=INVENTORY + "baseline_tolerances: {bw: 60%, iops: 60%}\n")
    assert run(project, "r1", "--baseline-save", "main").ret == pytest.ExitCode.OK
    record(project, factor=0.5)
    result = run(project, "r2", "--baseline-compare", "main")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*Tolerances: MiB/s −60 %, IOPS −60 %, p99 ms +10 %.*"])


def test_saving_over_a_baseline_needs_overwrite(project: pytest.Pytester) -> None:
    assert run(project, "r1", "--baseline-save", "main").ret == pytest.ExitCode.OK
    refused = run(project, "r2", "--baseline-save", "main")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*baseline 'main' of inventory 'plugin-test' already exists*--baseline-overwrite*"])
    # Refused before anything ran: nothing measured or recorded for r2, and no empty run
    # directory left behind that would refuse the corrected retry with the same run id.
    assert not (Path(project.path) / "reports" / "r2").exists()
    assert run(project, "r2", "--baseline-save", "main", "--baseline-overwrite").ret == pytest.ExitCode.OK
    assert baseline_json(project, "main")["run_id"] == "r2"


def test_a_directory_that_is_no_baseline_is_refused_before_the_run_and_kept(project: pytest.Pytester) -> None:
    notes = Path(project.path) / "reports" / "baselines" / "plugin-test" / "main" / "NOTES.md"
    notes.parent.mkdir(parents=True)
    notes.write_text("mine\n")
    refused = run(project, "r1", "--baseline-save", "main")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(
        ["*/main exists and holds no baseline (NOTES.md); nothing was changed: *--baseline-overwrite to save the*"]
    )
    assert run(project, "r1", "--baseline-save", "main", "--baseline-overwrite").ret == pytest.ExitCode.OK
    assert notes.read_text() == "mine\n" and baseline_json(project, "main")["run_id"] == "r1"


def test_a_regressed_run_is_not_rolled_forward(project: pytest.Pytester) -> None:
    assert run(project, "r1", "--baseline-save", "main").ret == pytest.ExitCode.OK
    record(project, factor=0.5)
    result = run(project, "r2", "--baseline-compare", "main", "--baseline-save", "main", "--baseline-overwrite")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*--baseline-save main: not saved, the run regressed against 'main'*"])
    assert baseline_json(project, "main")["run_id"] == "r1"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--baseline-save", "../escape"], "*--baseline-save: baseline name '../escape': use 1-64 letters*"),
        (["--baseline-compare", "latest"], "*--baseline-compare: baseline name 'latest' is reserved*"),
        (["--baseline-compare", "nightly"], "*no baseline 'nightly' for inventory 'plugin-test' (saved for it: none)*"),
    ],
)
def test_bad_baseline_names_are_usage_errors(project: pytest.Pytester, args: list[str], message: str) -> None:
    result = run(project, "r1", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert not (Path(project.path) / "reports" / "baselines").exists()


def test_options_are_listed_in_help(project: pytest.Pytester) -> None:
    result = project.runpytest("--inventory", "inv.yaml", "--help")
    result.stdout.fnmatch_lines(["*--baseline-save=NAME*", "*--baseline-compare=NAME*", "*--baseline-overwrite*"])
