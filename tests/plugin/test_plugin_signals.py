"""SIGTERM (a CI runner cancelling) and SIGHUP (the terminal of the person running it closing)
take pytest's Ctrl-C path: the teardown that removes faults runs, and the run ends interrupted
(reliability.md row 28)."""

from __future__ import annotations

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
