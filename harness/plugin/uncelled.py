"""Tests that failed or errored without measuring a cell (a device the guard refused, a node
lost in setup): the first screen names them beside the cells that failed, so it never says
"every cell passed" above a red run.

Read from the terminal reporter's own reports on the controller, one line each: the test's
id (xdist's ``@<group>`` suffix dropped, as the JUnit names drop it), ``ERROR`` or ``FAIL`` as
the JUnit file has it (:mod:`harness.plugin.junit` marks the call that raised no verdict), and
the exception's message.  A test whose id a cell recorded is the cell's to report.
"""

from __future__ import annotations

from collections.abc import Collection

import pytest

from harness.report.junitcases import ERROR_PROPERTY, stable_name

__all__ = ["uncelled_failures"]


def _message(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = getattr(crash, "message", None) or str(report.longrepr or "")
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return (lines[0] if lines else "(no message)")[:400]


def uncelled_failures(config: pytest.Config, cell_test_ids: Collection[str]) -> list[tuple[str, str, str]]:
    """``(ERROR|FAIL, test id, message)`` of each failed test no cell recorded, in run order."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    stats = getattr(reporter, "stats", {}) if reporter is not None else {}
    out: dict[str, tuple[str, str, str]] = {}
    for key, verdict in (("failed", "FAIL"), ("error", "ERROR")):  # "error": setup or teardown
        for report in stats.get(key, []):
            if not isinstance(report, pytest.TestReport):
                continue
            test_id = stable_name(report.nodeid)
            if test_id in cell_test_ids or test_id in out:
                continue
            errored = report.when != "call" or any(name == ERROR_PROPERTY for name, _ in report.user_properties)
            out[test_id] = ("ERROR" if errored else verdict, test_id, _message(report))
    return list(out.values())
