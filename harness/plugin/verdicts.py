"""Every scenario assertion is its cell's verdict: the report, JUnit and the exit code agree.

A cell records its verdict when it ends (its bounds, its window, its certificate), but a
scenario may assert more once ``measure`` returned (``assert result.rtt.median_ms >= …``).  When
such an assertion fails, pytest fails the test while the cell's samples still say pass, and the
report would count a pass that the exit code counts as a failure.  So when a test that measured
cells fails, each of its cells that had passed gets the test's failure as its verdict: one more
sample per cell (``assertion_failed``, with the cell's metadata and the new verdict), which the
report reads like any other, and the test's JUnit ``verdict`` properties are set to match.

A failed assertion is a failed bound: on a disturbed window it is inconclusive under the
``--inconclusive=skip`` policy (:func:`harness.rules.inconclusive.decide`), so the test is
reported skipped with the disturbance in its reason.  The lab's integration tests use the same
decision (:func:`assertion_verdict`) on the cells their runners measured.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence

import pytest

from harness.cell.result import CellResult
from harness.plugin.session import SESSION_KEY
from harness.rules.bounds import BoundResult
from harness.rules.inconclusive import Policy, decide
from harness.rules.validity import Certificate
from harness.runfiles.samples import METRICS, Sample

__all__ = ["CELLS_KEY", "as_skipped", "assertion_samples", "assertion_verdict", "failure_text"]

#: the cells a test measured, in order (set by the ``measure`` fixture)
CELLS_KEY = pytest.StashKey[list[CellResult]]()


def failure_text(excinfo: pytest.ExceptionInfo[BaseException] | None) -> str:
    """The failed assertion in one line: pytest's rewritten message up to its first newline."""
    if excinfo is None:
        return "the test failed"
    text = str(excinfo.value).strip().splitlines()
    first = text[0] if text else excinfo.typename
    return first if isinstance(excinfo.value, AssertionError) else f"{excinfo.typename}: {first}"


def assertion_verdict(message: str, certificates: Sequence[Certificate | None], policy: Policy) -> BoundResult:
    """What a failed assertion makes of the cells behind it: a fail, or inconclusive when one of
    their certificates names a disturbance and the policy is ``skip``."""
    failed = BoundResult("fail", f"the test's assertion failed: {message}")
    disturbed = next((c for c in certificates if c is not None and c.disturbed), None)
    return decide(failed, disturbed, policy) if disturbed is not None else failed


def assertion_samples(cells: Sequence[CellResult], verdict: BoundResult) -> list[Sample]:
    """One ``assertion_failed`` sample per cell that had passed, carrying ``verdict``."""
    out = []
    for cell in cells:
        if cell.verdict.passed:
            meta = {**cell.metadata, "verdict": verdict.verdict, "verdict_reason": verdict.reason}
            out.append(Sample("assertion_failed", 1.0, METRICS["assertion_failed"], meta))
    return out


def as_skipped(report: pytest.TestReport, item: pytest.Item, reason: str) -> None:
    """Turn a failed call into a skip with ``reason``, the way ``pytest.skip`` reports one."""
    report.outcome = "skipped"
    report.longrepr = (str(item.path), (item.location[1] or 0) + 1, f"Skipped: {reason}")


def _set_properties(item: pytest.Item, report: pytest.TestReport, verdict: BoundResult) -> None:
    """The test's ``verdict`` properties as the cell's now: JUnit writes the item's properties
    from its teardown report, which copies them from the item."""
    replaced = {"verdict": verdict.verdict, "verdict_reason": verdict.reason}
    item.user_properties[:] = [(k, replaced.get(k, v)) for k, v in item.user_properties]
    report.user_properties = list(item.user_properties)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    cells = item.stash.get(CELLS_KEY, [])
    if report.when != "call" or not report.failed or not any(c.verdict.passed for c in cells):
        return report
    session = item.config.stash[SESSION_KEY]
    message = failure_text(call.excinfo)
    verdict = assertion_verdict(message, [c.certificate for c in cells], session.runner.inconclusive_policy)
    session.runner.store.append(assertion_samples(cells, verdict))
    _set_properties(item, report, verdict)
    if verdict.verdict == "inconclusive":
        as_skipped(report, item, f"INCONCLUSIVE {cells[-1].spec.id}: {verdict.reason}")
    return report
