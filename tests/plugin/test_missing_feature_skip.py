"""Through pytest: what a node lacks (recorded by the controller's preflight) skips only
the cells that need it, naming the node and the module, before any change; the rest run."""

from __future__ import annotations

import pytest

from tests.plugin.test_plugin_collection import INVENTORY

# the run's start writes what the controller's preflight found missing (n2: no sch_tbf), and
# touches no node
CONFTEST = """\
from harness.cell.features import MissingFeature, write_missing
from harness.plugin.session import HarnessSession

pytest_plugins = ["harness.plugin"]


def _start(self):
    why = "sch_tbf kernel module not available: cells with a rate cap are skipped"
    missing = [MissingFeature("n2", "sch_tbf", why)]
    write_missing(self.run.ensure().path, missing)


HarnessSession.start_run = _start
"""

TEST = """\
from harness.cell import CellSpec
from harness.impair.profile import NetemProfile
from harness.fio.workloads import write_job

JOB = write_job("write", 1024 * 1024)


def test_capped(measure):
    measure(CellSpec("cap", "p-one", JOB, impairment=NetemProfile.from_text("cap-1m", rate="1mbit")))
    raise AssertionError("the capped cell ran")


def test_delay_only(harness_session):
    harness_session.runner.check_features(
        CellSpec("lat", "p-one", JOB, impairment=NetemProfile.from_text("wan", delay="5ms"))
    )


def test_cap_on_the_node_with_tbf(harness_session):
    spec = CellSpec("cap", "p-one", JOB, impairment=NetemProfile.from_text("c", rate="1mbit", direction="primary"))
    harness_session.runner.check_features(spec)
"""


@pytest.mark.reliability_row(13)
def test_case_13_only_the_cells_a_missing_module_stops_are_skipped(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makefile(".yaml", inv=INVENTORY)
    pytester.makepyfile(test_cap=TEST)
    result = pytester.runpytest_subprocess("--inventory", "inv.yaml", "-p", "no:cacheprovider", "-rs", timeout=60)
    result.assert_outcomes(passed=2, skipped=1)
    result.stdout.fnmatch_lines(["*SKIPPED*needs sch_tbf for its rate cap (cap-1m): n2 lacks sch_tbf (*"])
