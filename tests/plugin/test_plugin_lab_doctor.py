"""A run on the embedded lab that had failures ends with the lab doctor's verdict (in the
terminal report's last section and in reports/<run-id>/lab-doctor.txt); a run without
failures, or off the lab, does not call it."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# the lab this run would boot is never booted (the run's start and the lab's teardown do
# nothing): the doctor then judges a lab that is not up, as after a lab that died
CONFTEST = """\
from harness.plugin.session import HarnessSession

pytest_plugins = ["harness.plugin"]

HarnessSession.start_run = lambda self: None
HarnessSession.teardown_lab = lambda self: None
"""

PASSES = """\
def test_passes():
    pass
"""
FAILS = """\
def test_fails():
    raise AssertionError("a cell failed")
"""


def _lab_inventory() -> str:
    text = (ROOT / "inventories" / "lab.yaml").read_text()
    # a namespace and state directory no lab of this machine uses
    text = text.replace("netns: hlab", "netns: hlabdoc").replace("/run/harness-lab", "/run/harness-lab-doctor-test")
    return text.replace("catalogs/lab.yaml", str(ROOT / "inventories" / "catalogs" / "lab.yaml"))


def _run(pytester: pytest.Pytester, inventory: str, *, fail: bool) -> pytest.RunResult:
    pytester.makeconftest(CONFTEST)
    pytester.makefile(".yaml", inv=inventory)
    pytester.makepyfile(test_cells=PASSES + FAILS if fail else PASSES + PASSES.replace("passes", "passes_too"))
    return pytester.runpytest_subprocess("--inventory", "inv.yaml", "-p", "no:cacheprovider", timeout=120)


def test_a_lab_run_with_failures_ends_with_the_doctors_verdict(pytester: pytest.Pytester) -> None:
    result = _run(pytester, _lab_inventory(), fail=True)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*- lab doctor (the run had failures) -*", "lab is NOT fit to measure:", "  - the lab is not up (phase down)"]
    )
    (kept,) = pytester.path.glob("reports/*/lab-doctor.txt")
    assert "the lab is not up (phase down)" in kept.read_text()


def test_a_lab_run_without_failures_does_not_call_the_doctor(pytester: pytest.Pytester) -> None:
    result = _run(pytester, _lab_inventory(), fail=False)
    result.assert_outcomes(passed=2)
    assert "lab doctor" not in result.stdout.str()
    assert list(pytester.path.glob("reports/*/lab-doctor.txt")) == []
