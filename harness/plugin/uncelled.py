"""Tests that failed or errored without measuring a cell (a device the guard refused, a node
lost in setup): the first screen names them beside the cells that failed, so it never says
"every cell passed" above a red run.

Read from the terminal reporter's own reports on the controller, one line each: the test's
id (xdist's ``@<group>`` suffix dropped, as the JUnit names drop it), ``ERROR`` or ``FAIL``,
and the exception's message.  A test whose id a cell recorded is the cell's to report.
"""

from __future__ import annotations

from collections.abc import Collection

import pytest

__all__ = ["uncelled_failures"]


def _test_id(nodeid: str) -> str:
    head, sep, tail = nodeid.rpartition("@")
    return head if sep and "]" not in tail and "::" not in tail else nodeid


def _message(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = getattr(crash, "message", None) or str(report.longrepr or "")
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return (lines[0] if lines else "(no message)")[:400]


def _judged(message: str) -> bool:
    """A verdict or an assertion (a failure), not a tool's or node's exception (an error)."""
    return message.startswith(("Failed:", "AssertionError", "assert "))


def uncelled_failures(config: pytest.Config, cell_test_ids: Collection[str]) -> list[tuple[str, str, str]]:
    """``(ERROR|FAIL, test id, message)`` of each failed test no cell recorded, in run order."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    stats = getattr(reporter, "stats", {}) if reporter is not None else {}
    out: dict[str, tuple[str, str, str]] = {}
    for key, verdict in (("failed", "FAIL"), ("error", "ERROR")):  # "error": setup or teardown
        for report in stats.get(key, []):
            if not isinstance(report, pytest.TestReport):
                continue
            test_id = _test_id(report.nodeid)
            if test_id in cell_test_ids or test_id in out:
                continue
            message = _message(report)
            out[test_id] = (verdict if report.when == "call" and _judged(message) else "ERROR", test_id, message)
    return list(out.values())
