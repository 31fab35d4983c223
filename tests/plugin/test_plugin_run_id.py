"""``--run-id`` in inner pytest sessions: judged by the one run id rule, and never reusing a run.

No node is touched: preflight and the cluster lock are replaced by a no-op (as in
test_plugin_baseline); what is checked happens at configure time, before them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.plugin.session import HarnessSession
from tests.plugin.test_plugin_collection import INVENTORY

SCENARIO = """\
def test_one():
    pass

def test_two():
    pass
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setattr(HarnessSession, "start_run", lambda self: None)
    pytester.makeconftest('pytest_plugins = ["harness.plugin"]\n')
    pytester.makefile(".yaml", inv=INVENTORY)
    pytester.makepyfile(test_scenario=SCENARIO)
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("--inventory", "inv.yaml", "-p", "no:cacheprovider", *args)


def reports(pytester: pytest.Pytester) -> Path:
    return Path(pytester.path) / "reports"


def test_a_path_as_run_id_is_a_usage_error_and_writes_nothing(project: pytest.Pytester) -> None:
    outside = Path(project.path).parent / "escaped"
    result = run(project, "--reports", "reports/deeper", "--run-id", "../../escaped")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --run-id: run id '../../escaped' is not allowed: use 1-64 letters*"])
    assert not outside.exists() and not (Path(project.path) / "escaped").exists()
    assert not reports(project).exists()


def test_a_user_chosen_run_id_runs(project: pytest.Pytester) -> None:
    result = run(project, "--run-id", "nightly-42")
    assert result.ret == pytest.ExitCode.OK
    assert (reports(project) / "nightly-42" / "junit.xml").is_file()


def test_an_existing_run_is_refused_and_kept(project: pytest.Pytester) -> None:
    earlier = reports(project) / "nightly-42"
    earlier.mkdir(parents=True)
    (earlier / "NOTES.md").write_text("what I saw last night\n")
    result = run(project, "--run-id", "nightly-42")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: --run-id nightly-42: */reports/nightly-42 already exists (an earlier run); "
            "choose another --run-id or delete that directory"
        ]
    )
    assert [p.name for p in earlier.iterdir()] == ["NOTES.md"]
    assert (earlier / "NOTES.md").read_text() == "what I saw last night\n"


def test_an_empty_existing_run_directory_is_refused_too(project: pytest.Pytester) -> None:
    (reports(project) / "nightly-42").mkdir(parents=True)
    assert run(project, "--run-id", "nightly-42").ret == pytest.ExitCode.USAGE_ERROR


def test_collect_only_writes_nothing_so_is_not_refused(project: pytest.Pytester) -> None:
    (reports(project) / "nightly-42").mkdir(parents=True)
    result = run(project, "--run-id", "nightly-42", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK
    assert not list((reports(project) / "nightly-42").iterdir())


def test_xdist_workers_share_the_controllers_run(project: pytest.Pytester) -> None:
    # The controller creates reports/<run-id>/ before the workers start: they must not take
    # it for an earlier run.
    result = run(project, "--run-id", "nightly-42", "-n", "2")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*2 passed*"])
    assert (reports(project) / "nightly-42" / "junit.xml").is_file()
