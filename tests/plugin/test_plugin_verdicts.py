"""A scenario's own assertion is its cell's verdict: inner pytest sessions whose "scenario" stands
in a cell measured from recorded data (the real repeats of tests/data/runs, the certificate from
the recorded pressure windows of tests/data/pressure) and asserts on it after ``measure`` would
have returned.  No node is touched: preflight is a no-op."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.plugin.session import HarnessSession
from harness.runfiles.samples import read_samples
from tests.plugin.test_plugin_collection import INVENTORY

SCENARIO = """\
import dataclasses
from pathlib import Path

from harness.cell.certificate import Readings, cell_certificate
from harness.plugin.verdicts import CELLS_KEY
from harness.rules.validitythresholds import DEFAULT_THRESHOLDS
from tests.unit.test_cell_autorepeat import SPEC, Cell

PRESSURE = Path({pressure!r})


def measured(request, record_property, case, pair):
    result = Cell([1.2])(dataclasses.replace(SPEC, pair=pair))  # a cell that passed its bounds at 1.2 MiB/s
    start, end = (Readings({{"a2": (PRESSURE / f"{{case}}-{{e}}.txt").read_text()}}) for e in ("before", "after"))
    result.certificate = cell_certificate(start, end, DEFAULT_THRESHOLDS).certificate
    request.node.stash.setdefault(CELLS_KEY, []).append(result)
    for key, value in result.properties():  # as `measure` records them
        record_property(key, value)
    return result


def test_quiet(request, record_property, harness_session):
    result = measured(request, record_property, "psi/r2-quiet1", "multi-az")
    assert result.bw_mib_s > 5, "slower than 5 MiB/s"


def test_busy(request, record_property, harness_session):
    result = measured(request, record_property, "psi/r1-hog-cpu1-load50-nice", "single-az")
    assert result.bw_mib_s > 5, "slower than 5 MiB/s"
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setattr(HarnessSession, "start_run", lambda self: None)
    pytester.makeconftest('pytest_plugins = ["harness.plugin"]\n')
    pytester.makefile(".yaml", inv=INVENTORY)
    pressure = Path(__file__).resolve().parents[1] / "data" / "pressure"
    pytester.makepyfile(test_scenario=SCENARIO.format(pressure=str(pressure)))
    return pytester


def _verdicts(pytester: pytest.Pytester, run_id: str) -> dict[str, tuple[str, str]]:
    samples = read_samples(Path(pytester.path) / "reports" / run_id / "samples.ndjson")
    return {
        str(s.metadata["test_id"] or s.metadata["run_id"]): (s.metadata["verdict"], s.metadata["verdict_reason"])
        for s in samples
        if s.metric == "assertion_failed"
    }


def test_a_failed_assertion_fails_the_cell_and_on_a_busy_host_is_inconclusive(project: pytest.Pytester) -> None:
    result = project.runpytest("--inventory", "inv.yaml", "--run-id", "r1", "-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(failed=1, skipped=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*SKIPPED*INCONCLUSIVE single-az-randwrite-4k*disturbed: cpu pressure 41 % on a2 > 10 %; the bound that "
            "failed: the test's assertion failed: slower than 5 MiB/s*"
        ]
    )
    samples = read_samples(Path(project.path) / "reports" / "r1" / "samples.ndjson")
    overrides = [s.metadata for s in samples if s.metric == "assertion_failed"]
    assert sorted(m["verdict"] for m in overrides) == ["fail", "inconclusive"]
    assert all("slower than 5 MiB/s" in m["verdict_reason"] for m in overrides)
    # the report counts what pytest counted
    comparison = (Path(project.path) / "reports" / "r1" / "comparison.md").read_text()
    assert "0 pass, 1 fail, 1 inconclusive" in comparison
    # and JUnit's verdict properties say the same
    junit = (Path(project.path) / "reports" / "r1" / "junit.xml").read_text()
    assert 'name="verdict" value="fail"' in junit and 'name="verdict" value="inconclusive"' in junit
    assert 'name="verdict" value="pass"' not in junit


def test_the_fail_policy_keeps_a_busy_hosts_failed_assertion_a_failure(project: pytest.Pytester) -> None:
    args = ("--inventory", "inv.yaml", "--run-id", "r2", "-p", "no:cacheprovider", "--inconclusive=fail")
    project.runpytest(*args).assert_outcomes(failed=2)
    reasons = [
        json.loads(line)["metadata"]["verdict"]
        for line in (Path(project.path) / "reports" / "r2" / "samples.ndjson").read_text().splitlines()
        if json.loads(line)["metric"] == "assertion_failed"
    ]
    assert reasons == ["fail", "fail"]
