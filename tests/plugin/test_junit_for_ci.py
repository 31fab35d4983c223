"""The JUnit a harness run leaves, as CI systems read it: through real pytest runs (pytester),
with and without xdist, held against Jenkins' xUnit schema and read by junitparser.  No node
is touched: the run's start is a no-op."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest
from junitparser import xunit2
from lxml import etree

from tests.plugin.test_plugin_collection import INVENTORY

SCHEMA = Path(__file__).parents[1] / "data" / "junit" / "junit-10.xsd"

CONFTEST = """\
from harness.plugin.session import HarnessSession

pytest_plugins = ["harness.plugin"]

HarnessSession.start_run = lambda self: None
"""

# one test per pair (each gets the pair's xdist group), three protocols of which the inventory's
# pairs run only C: A and B can never run here
SCENARIO = """\
import pytest
from harness.errors import InfraError

@pytest.mark.parametrize("protocol", ["C", "B", "A"])
def test_regressed(pair, protocol, record_property):
    record_property("bw_mib_s", 12.5)
    pytest.fail(f"{pair}: 145 IOPS < min 150 IOPS", pytrace=False)

def test_tool_broke(pair):
    raise InfraError("iperf3 -c 10.0.0.2: unable to connect to server: Connection refused")

def test_checked(pair):
    assert pair == "none", "the failover check did not hold"
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makeini("[pytest]\njunit_family = xunit1\n")  # the project's (tox.ini): testcase properties
    pytester.makefile(".yaml", inv=INVENTORY)
    pytester.makepyfile(test_scenario=SCENARIO)
    return pytester


def _run(project: pytest.Pytester, run_id: str, *args: str) -> pytest.RunResult:
    return project.runpytest_subprocess(
        "--inventory", "inv.yaml", "-p", "no:cacheprovider", "--run-id", run_id, *args, timeout=120
    )


def _cases(path: Path) -> dict[str, xunit2.TestCase]:
    """The testcases by name, read as xunit2 (whose testcases have properties)."""
    xml = xunit2.JUnitXml.fromfile(str(path))
    return {case.name: cast(xunit2.TestCase, case) for suite in xml for case in cast(xunit2.TestSuite, suite)}


def _kinds(case: xunit2.TestCase) -> list[str]:
    return [type(r).__name__ for r in case.result]


def test_errors_are_errors_regressions_failures_and_ids_do_not_change_under_xdist(project: pytest.Pytester) -> None:
    _run(project, "serial")
    _run(project, "xdist", "-n", "2")
    runs = Path(project.path) / "reports"
    serial, parallel = _cases(runs / "serial" / "junit.xml"), _cases(runs / "xdist" / "junit.xml")
    # one identity per cell whether or not xdist ran it: no "@<group>" suffix
    assert sorted(serial) == sorted(parallel)
    assert "test_regressed[p-one-C]" in serial and not any("@" in name for name in parallel)
    for cases in (serial, parallel):
        assert _kinds(cases["test_regressed[p-two-C]"]) == ["Failure"]
        assert _kinds(cases["test_checked[p-two]"]) == ["Failure"]
        (error,) = cases["test_tool_broke[p-two]"].result
        assert type(error).__name__ == "Error" and error.type == "InfraError"
        assert "unable to connect to server" in (error.message or "")
        props = {p.name: p.value for p in cases["test_regressed[p-one-C]"].properties()}  # type: ignore[no-untyped-call]
        assert props == {"bw_mib_s": "12.5"}
    suite = next(iter(xunit2.JUnitXml.fromfile(str(runs / "xdist" / "junit.xml"))))
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (12, 8, 4, 0)


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_never_runnable_protocols_are_not_collected_and_their_reason_is_said_once(
    project: pytest.Pytester, xdist: list[str]
) -> None:
    result = _run(project, "r1", "-k", "regressed", *xdist)
    # B and A of each of the four pairs: no skip in the report, one line per reason on the screen
    # 8 deselected by -k, 8 never runnable (xdist's controller counts no deselected items)
    result.assert_outcomes(failed=4, **({} if xdist else {"deselected": 16}))
    result.stdout.fnmatch_lines(
        [
            "harness: 8 parametrisations not collected, never runnable here:",
            "  2 × the inventory gives p-four protocol C; a real cluster's configuration is not changed",
        ]
    )
    cases = _cases(Path(project.path) / "reports" / "r1" / "junit.xml")
    assert sorted(cases) == [f"test_regressed[{pair}-C]" for pair in ("p-four", "p-one", "p-three", "p-two")]


def test_the_run_directory_keeps_its_junit_when_another_file_is_named(project: pytest.Pytester) -> None:
    named = Path(project.path) / "ci" / "junit.xml"
    named.parent.mkdir()
    _run(project, "r1", "--junitxml", str(named))
    run_dir = Path(project.path) / "reports" / "r1"
    assert (run_dir / "junit.xml").read_bytes() == named.read_bytes()
    # the strict copy is the run's, not a fixed name beside the named file that a later run overwrites
    assert not (named.parent / "junit-strict.xml").exists()
    schema = etree.XMLSchema(etree.parse(str(SCHEMA)))
    assert schema.validate(etree.parse(str(run_dir / "junit-strict.xml"))), schema.error_log
    assert sorted(_cases(run_dir / "junit-strict.xml")) == sorted(_cases(named))


def test_a_junit_file_of_a_run_without_a_run_directory_gets_its_own_strict_copy(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('pytest_plugins = ["harness.plugin"]\n')
    (pytester.path / "inventories").mkdir()
    (pytester.path / "inventories" / "lab.yaml").write_text(INVENTORY)  # the default inventory: no run directory
    pytester.makepyfile(test_plain="def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--junitxml", "out/nightly.xml", timeout=60)
    result.assert_outcomes(passed=1)
    assert sorted(p.name for p in (pytester.path / "out").iterdir()) == ["nightly-strict.xml", "nightly.xml"]


MEASURED = """\
import json
from pathlib import Path
from harness.plugin.session import SESSION_KEY

def test_measured(request):
    # one cell of a recorded lab run stands for the cells a real scenario measures
    line = Path({sample!r}).read_text().splitlines()[0]
    with open(request.config.stash[SESSION_KEY].run.samples_ndjson, "a") as out:
        out.write(line + "\\n")
"""


def test_the_first_screen_names_the_tests_that_failed_without_a_cell(project: pytest.Pytester) -> None:
    """Only one test measured a cell: the summary says what the others' failures were all the
    same, a tool's exception as an error and a verdict or an assertion as a failure, as the JUnit
    file does, and not "every cell passed"."""
    sample = Path(__file__).parents[1] / "data" / "runs" / "20261121-110501-f674" / "samples.ndjson"
    project.makepyfile(test_measured=MEASURED.format(sample=str(sample)))
    result = _run(project, "r1", "-n", "2")
    summary = (Path(project.path) / "reports" / "r1" / "summary.md").read_text()
    assert "## Storage gate: failed (exit 1)" in summary
    listed = summary.split("### What did not pass")[1].split("###")[0]
    assert "- **ERROR** `test_scenario.py::test_tool_broke[p-two]`: harness.errors.InfraError: iperf3 -c" in listed
    assert "- **FAIL** `test_scenario.py::test_regressed[p-one-C]`: Failed: p-one: 145 IOPS < min 150 IOPS" in listed
    assert "`test_scenario.py::test_checked[p-one]`: AssertionError: the failover check did not hold" in listed
    assert "@" not in listed and "test_measured" not in listed
    assert (listed.count("**FAIL**"), listed.count("**ERROR**")) == (8, 4)
    result.stdout.fnmatch_lines(["*harness: 8 failed, 4 errors*"])
