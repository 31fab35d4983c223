"""The end of a run writes the results database; ``--baseline-compare history:N`` gates on it.

Inner pytest sessions as in test_plugin_baseline: no node is touched, the inner "scenario"
drops the recorded lab run (scaled in code for a regression) into its run directory, and the
rest is the real end of the run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.resultsdb.sqlite import SqliteStore
from tests.plugin.test_plugin_baseline import REGRESSED_CELL, plotting_stack_loaded, project, record, run

__all__ = ["plotting_stack_loaded", "project"]  # the fixtures, shared


def _db(pytester: pytest.Pytester) -> Path:
    return Path(pytester.path) / "reports" / "results.sqlite"


def test_every_finished_run_lands_in_the_default_database(project: pytest.Pytester) -> None:
    result = run(project, "r1")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["results db: run r1 written to *results.sqlite (* samples, 17 cells)"])
    with SqliteStore(_db(project)) as store:
        (stored,) = store.runs()
        row = (stored.run_id, stored.inventory_name, stored.info.exitstatus, stored.gate)
        assert row == ("r1", "plugin-test", 0, None)
        assert len(store.samples("r1")) == len((Path(project.path) / "recorded.ndjson").read_text().splitlines())


def test_results_db_none_writes_no_database(project: pytest.Pytester) -> None:
    result = run(project, "r1", "--results-db", "none")
    assert result.ret == pytest.ExitCode.OK
    assert not _db(project).exists()
    assert "results db:" not in result.stdout.str()


def test_a_slower_run_fails_against_the_last_three_and_is_not_history_after(project: pytest.Pytester) -> None:
    for run_id in ("r1", "r2", "r3"):
        assert run(project, run_id).ret == pytest.ExitCode.OK
    record(project, factor=0.5)
    slow = run(project, "r4", "--baseline-compare", "history:3")
    assert slow.ret == pytest.ExitCode.TESTS_FAILED
    cell = REGRESSED_CELL.replace("[", "[[]")
    slow.stdout.fnmatch_lines(["## Baseline comparison: REGRESSED", f"| {cell} *| MiB/s *| *−50 % *| *−5 % |"])
    md = (Path(project.path) / "reports" / "r4" / "baseline-compare.md").read_text()
    assert "the last 3 good runs of inventory `plugin-test` (`r1`, `r2`, `r3`)" in md
    # The regressed run is in the database with its verdict, and is no reference for later runs.
    record(project, factor=1.0)
    after = run(project, "r5", "--baseline-compare", "history:2")
    assert after.ret == pytest.ExitCode.OK
    assert "(`r2`, `r3`)" in (Path(project.path) / "reports" / "r5" / "baseline-compare.md").read_text()
    with SqliteStore(_db(project)) as store:
        gates = {r.run_id: r.gate for r in store.runs()}
    assert gates == {"r1": None, "r2": None, "r3": None, "r4": "regressed", "r5": "pass"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--baseline-compare", "history:3"], "*history:3: *no finished run of inventory 'plugin-test'*"),
        (["--baseline-compare", "history:x"], "*expected history:N*"),
        (["--baseline-compare", "history:3", "--results-db", "none"], "*needs the results database*"),
        (["--results-db", "mysql://db/x"], "*not a database this harness writes*"),
    ],
)
def test_history_gate_misuse_is_refused_before_the_run(project: pytest.Pytester, args: list[str], message: str) -> None:
    result = run(project, "r1", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert not (Path(project.path) / "reports" / "r1" / "samples.ndjson").exists()


def test_a_database_that_cannot_be_written_is_reported_and_the_run_kept(project: pytest.Pytester) -> None:
    (Path(project.path) / "notes").write_text("a file where the database's directory would be\n")
    result = run(project, "r1", "--results-db", "notes/results.sqlite")
    assert result.ret == pytest.ExitCode.OK  # the measurements stand; the database is an index of them
    result.stdout.fnmatch_lines(
        ["results db: NOT written (*cannot open the results database*); "
         "add it later with `harness results import <reports>/r1`"]
    )  # fmt: skip
    assert (Path(project.path) / "reports" / "r1" / "samples.ndjson").is_file()


def test_collect_only_never_opens_the_database(project: pytest.Pytester) -> None:
    result = project.runpytest(
        "--inventory", "inv.yaml", "-p", "no:cacheprovider", "--collect-only", "--baseline-compare", "history:3"
    )
    assert result.ret == pytest.ExitCode.OK
    assert not (Path(project.path) / "reports").exists()  # neither opened nor made


def test_a_password_in_a_url_leaves_no_trace(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "Qs3cr3tPassw0rd"
    options = [
        "--results-db",
        f"postgresql://ci:{secret}@127.0.0.1:1/h",
        "--pushgateway",
        f"http://u:{secret}@127.0.0.1:1/",
    ]
    # run.json records the command line as the process got it
    monkeypatch.setattr(sys, "argv", ["pytest", "--inventory", "inv.yaml", *options])
    result = run(project, "r1", *options, "--baseline-save", "main")
    assert result.ret == pytest.ExitCode.OK
    # the summary names the failed push first (an output problem), the database with the files
    result.stdout.fnmatch_lines(["metrics: NOT pushed: *"])
    result.stdout.fnmatch_lines(["results db: NOT written (*)*"])
    assert secret not in result.stdout.str() + result.stderr.str()
    for path in (Path(project.path) / "reports").rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    assert "***redacted***" in (Path(project.path) / "reports" / "r1" / "run.json").read_text()
