"""pytest glue for a crashed run's leftovers: ``--clean-leftovers``.

Without the option, preflight BLOCKs on what an earlier run left on a node (a harness qdisc, a
fault record, a fio) and the run does not start.  With it, preflight removes them and checks
each interface is back to the root recorded before the fault (:mod:`harness.safety.sweep`);
the run goes on, and the JUnit report says what was found and removed: a testsuite property
``harness_leftovers_removed`` (kept by the strict JUnit copy, which moves only testcase
properties) and a line in the terminal summary.
"""

from __future__ import annotations

import pytest
from _pytest.junitxml import xml_key

from harness.plugin.session import SESSION_KEY
from harness.safety.sweep import CLEAN_OPTION

__all__ = ["LEFTOVERS_PROPERTY"]

LEFTOVERS_PROPERTY = "harness_leftovers_removed"
_FOUND = pytest.StashKey[str]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("harness").addoption(
        CLEAN_OPTION,
        dest="clean_leftovers",
        action="store_true",
        default=False,
        help="let preflight remove what a crashed run left (harness qdiscs, fault records, fio) and restore "
        "the recorded pre-state, with a warning in the JUnit report; without it such leftovers block the run",
    )


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    session = config.stash.get(SESSION_KEY, None)
    if session is not None:
        session.clean_leftovers = bool(config.getoption("clean_leftovers", False))


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """After the controller's preflight (plugin ``pytest_sessionstart``): what it removed."""
    harness = session.config.stash.get(SESSION_KEY, None)
    report = getattr(harness, "preflight_report", None)
    if report is None:
        return
    removed = [f"{f.node}: {f.detail}" for f in report.findings if f.check == "leftovers" and f.status == "warn"]
    if not removed:
        return
    text = " | ".join(removed)
    session.config.stash[_FOUND] = text
    xml = session.config.stash.get(xml_key, None)
    if xml is not None:
        xml.add_global_property(LEFTOVERS_PROPERTY, text)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    text = config.stash.get(_FOUND, None)
    if text is not None:
        terminalreporter.write_sep("=", "leftovers of an earlier run", yellow=True)
        terminalreporter.write_line(f"WARNING: preflight found and removed: {text}")
