"""The first test that finds split brain stops the run (this process's tests)."""

from __future__ import annotations

import pytest

from tests.plugin.test_plugin_collection import INVENTORY
from tests.plugin.test_plugin_signals import CONFTEST

TESTS = """\
from harness.errors import SplitBrain


def test_a_partition():
    raise SplitBrain("split brain on single-az: a1 and a2 both wrote since they parted")


def test_the_next_cell():
    pass
"""


@pytest.mark.reliability_row(32)
def test_case_32_split_brain_stops_the_run(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makefile(".yaml", inv=INVENTORY)
    pytester.makepyfile(test_cells=TESTS)
    result = pytester.runpytest_subprocess("--inventory", "inv.yaml", "-p", "no:cacheprovider", "-rA", timeout=60)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "test_the_next_cell" not in out.split("short test summary")[-1]
    assert "no further tests run on this cluster" in out
