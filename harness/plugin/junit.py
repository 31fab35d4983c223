"""The run's JUnit files, put right once pytest wrote its own (:mod:`harness.report.junitcases`).

While a test runs (in whichever process runs it), a call that ended in an exception other than
a verdict or an assertion gets the property that makes its ``<failure>`` an ``<error>``.  At the
end (``trylast``: pytest's junitxml plugin writes its file in its own ``pytest_sessionfinish``,
which then runs before this one; controller only, as xdist workers write no JUnit) the file is
rewritten with stable names and those errors, the run directory keeps its ``junit.xml`` even
when ``--junitxml`` named another file, and the strict copy (:mod:`harness.report.junit`) goes
beside the run's: ``junit-strict.xml`` in the run directory, or ``<name>-strict.xml`` beside a
``--junitxml`` file of a run without one, so a later run never overwrites it.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from harness.plugin.interrupt import INTERRUPT_KEY, mark_interrupted
from harness.plugin.session import SESSION_KEY
from harness.report.junit import strict_junit
from harness.report.junitcases import ERROR_PROPERTY, ci_junit

__all__: list[str] = []

#: what a test's call raises when it judged something: these stay failures
_JUDGED = (AssertionError, pytest.fail.Exception)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    excinfo = call.excinfo
    if call.when == "call" and report.failed and excinfo is not None and not excinfo.errisinstance(_JUDGED):
        # the teardown's report carries the item's properties into the JUnit file; the call's
        # own report says it too, for the first screen (harness.plugin.uncelled)
        item.user_properties.append((ERROR_PROPERTY, excinfo.typename))
        report.user_properties.append((ERROR_PROPERTY, excinfo.typename))
    return report


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    xmlpath = config.getoption("xmlpath", None)
    if hasattr(config, "workerinput") or not xmlpath or not Path(xmlpath).is_file():
        return
    source = Path(xmlpath)
    data = source.read_bytes()
    guard = config.stash.get(INTERRUPT_KEY, None)
    if guard is not None and guard.interrupted:
        # the test an interrupt ended has no testcase of pytest's: add it, as interrupted
        data = mark_interrupted(data, guard.interrupted_test, guard.describe())
    data = ci_junit(data)
    _replace(source, data)
    hs = config.stash.get(SESSION_KEY, None)
    run = hs.run if hs is not None and hs.run.path.is_dir() else None
    if run is not None and source.resolve() != run.junit_xml.resolve():
        _replace(run.junit_xml, data)
    strict = run.junit_strict_xml if run is not None else source.with_name(f"{source.stem}-strict.xml")
    _replace(strict, strict_junit(data))


def _replace(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
