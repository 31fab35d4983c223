"""Calibration disconnects DRBD for its disk-alone cells, so outside the lab it needs
the disruptive opt-in like any disruptive scenario; without it, cells run unpredicted and say why."""

from __future__ import annotations

import pytest

from tests.plugin.test_plugin_collection import INVENTORY
from tests.plugin.test_plugin_signals import CONFTEST

TEST = """\
def test_predictions(harness_session):
    print("SKIPPED:", harness_session.predictor.skipped)
"""


@pytest.mark.reliability_row(15)
@pytest.mark.parametrize("opt_in", [False, True])
def test_case_15_calibration_needs_the_disruptive_opt_in(pytester: pytest.Pytester, opt_in: bool) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makefile(".yaml", inv=INVENTORY)
    pytester.makepyfile(test_predict=TEST)
    args = ["--inventory", "inv.yaml", "-p", "no:cacheprovider", "-s", *(["--allow-disruptive"] if opt_in else [])]
    result = pytester.runpytest_subprocess(*args, timeout=60)
    result.assert_outcomes(passed=1)
    said = "the calibration disconnects DRBD" in result.stdout.str()
    assert said != opt_in, result.stdout.str()
