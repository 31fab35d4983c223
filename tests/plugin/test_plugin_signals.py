"""SIGTERM (a CI runner cancelling) and SIGHUP (the terminal of the person running it closing)
take pytest's Ctrl-C path: the teardown that removes faults runs, and the run ends
interrupted."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.plugin.test_plugin_collection import INVENTORY

CONFTEST = """\
from harness.plugin.session import HarnessSession

pytest_plugins = ["harness.plugin"]
HarnessSession.start_run = lambda self: None
"""

TEST = """\
import os
import signal
import time

import pytest


@pytest.fixture
def fault():
    yield
    with open("undone.txt", "w") as f:
        f.write("{name}")


def test_cell(fault):
    os.kill(os.getpid(), signal.{name})
    time.sleep(30)
"""


@pytest.mark.reliability_row(28)
@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_case_28_a_terminating_signal_runs_the_teardown(pytester: pytest.Pytester, name: str) -> None:
    # no node is touched: the run's start (preflight, lock) is a no-op, as in test_plugin_baseline
    pytester.makeconftest(CONFTEST)
    pytester.makefile(".yaml", inv=INVENTORY)
    pytester.makepyfile(test_signal=TEST.format(name=name))
    result = pytester.runpytest_subprocess("--inventory", "inv.yaml", "-p", "no:cacheprovider", timeout=60)
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()
    assert (pytester.path / "undone.txt").read_text() == name


PATIENT_TEST = """\
import os
import signal
import time

import pytest


@pytest.fixture
def fault():
    yield
    # the person presses Ctrl-C again ({again} more) while the fault is being removed
    for _ in range({again}):
        os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.5)
    with open("undone.txt", "w") as f:
        f.write("undone")


def test_done():
    pass


def test_cell(fault):
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(30)


def test_never_started():
    pass
"""


def _junit_cases(root: Path) -> dict[str, ET.Element]:
    (path,) = [p for p in root.glob("reports/*/junit.xml")]
    return {case.get("name", ""): case for case in ET.parse(path).getroot().iter("testcase")}


def _interrupted_run(pytester: pytest.Pytester, again: int) -> pytest.RunResult:
    """A run whose second test is interrupted, with ``again`` more Ctrl-C in its cleanup."""
    pytester.makeconftest(CONFTEST)
    pytester.makefile(".yaml", inv=INVENTORY)
    pytester.makepyfile(test_signal=PATIENT_TEST.format(again=again))
    return pytester.runpytest_subprocess("--inventory", "inv.yaml", "-p", "no:cacheprovider", timeout=60)


@pytest.mark.reliability_row(27)
def test_case_27_a_second_ctrl_c_does_not_abandon_the_cleanup(pytester: pytest.Pytester) -> None:
    result = _interrupted_run(pytester, again=1)
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()
    assert (pytester.path / "undone.txt").read_text() == "undone"
    assert "SIGINT: cleaning up, please wait" in result.stderr.str()
    # JUnit: the finished test passed, the interrupted one is there as interrupted, the one
    # never started is absent
    cases = _junit_cases(pytester.path)
    assert set(cases) == {"test_done", "test_cell"}
    error = cases["test_cell"].find("error")
    assert error is not None and error.get("type") == "interrupted"
    assert error.get("message") == "interrupted: test_signal.py::test_cell by SIGINT"
    assert cases["test_done"].find("error") is None


@pytest.mark.reliability_row(27)
def test_case_27_a_third_ctrl_c_exits_at_once_naming_the_cleanup_command(pytester: pytest.Pytester) -> None:
    result = _interrupted_run(pytester, again=2)
    assert result.ret == 130, result.stdout.str()
    assert not (pytester.path / "undone.txt").exists()
    err = result.stderr.str()
    assert "exiting without finishing the cleanup" in err
    assert "Remove with: harness cleanup --inventory" in err and "--run-id" in err
