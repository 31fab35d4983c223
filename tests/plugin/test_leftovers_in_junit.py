"""Through pytest: leftovers preflight removed (``--clean-leftovers``) are a warning the
JUnit report carries (a testsuite property, kept by the strict copy) and the terminal shows."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from harness.plugin.leftovers import LEFTOVERS_PROPERTY
from tests.plugin.test_plugin_collection import INVENTORY

# the run's start stands for a preflight that removed a leftover on n1; no node is touched
CONFTEST = """\
from harness.plugin.session import HarnessSession
from harness.safety.preflight import Finding, PreflightReport

pytest_plugins = ["harness.plugin"]


def _start(self):
    assert self.clean_leftovers, "--clean-leftovers did not reach the session"
    detail = "removed n1: qdisc: eth1; eth1 back to the kernel's default root pfifo_fast 0: root"
    self.preflight_report = PreflightReport([Finding("n1", "leftovers", "warn", detail)])


HarnessSession.start_run = _start
"""


@pytest.mark.reliability_row(19)
def test_case_19_removed_leftovers_are_a_junit_warning(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makefile(".yaml", inv=INVENTORY)
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    junit = pytester.path / "junit.xml"
    args = ["--inventory", "inv.yaml", "-p", "no:cacheprovider", "--clean-leftovers", "--junitxml", str(junit)]
    result = pytester.runpytest_subprocess(*args, timeout=60)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*leftovers of an earlier run*", "WARNING: preflight found and removed: n1: removed*"])
    # the file --junitxml named, and the run directory's own copy and strict copy
    (run_dir,) = (p for p in (pytester.path / "reports").iterdir() if p.is_dir() and not p.is_symlink())
    for path in (junit, run_dir / "junit.xml", run_dir / "junit-strict.xml"):
        suite = next(ET.parse(path).getroot().iter("testsuite"))
        props = {p.get("name"): p.get("value", "") for p in suite.findall("properties/property")}
        assert props[LEFTOVERS_PROPERTY].startswith("n1: removed n1: qdisc: eth1"), path
