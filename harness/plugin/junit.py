"""The strict JUnit copy (:mod:`harness.report.junit`), written once pytest wrote its own file.

``trylast``: pytest's junitxml plugin writes its file in its own ``pytest_sessionfinish``, which
then runs before this one.  Controller only (xdist workers write no JUnit).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.plugin.interrupt import INTERRUPT_KEY, mark_interrupted
from harness.report.junit import strict_junit

__all__ = ["STRICT_JUNIT_NAME"]

STRICT_JUNIT_NAME = "junit-strict.xml"


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    xmlpath = config.getoption("xmlpath", None)
    if hasattr(config, "workerinput") or not xmlpath or not Path(xmlpath).is_file():
        return
    source = Path(xmlpath)
    guard = config.stash.get(INTERRUPT_KEY, None)
    if guard is not None and guard.interrupted:
        # the test an interrupt ended has no testcase of pytest's: add it, as interrupted
        _replace(source, mark_interrupted(source.read_bytes(), guard.interrupted_test, guard.describe()))
    target = source.with_name(STRICT_JUNIT_NAME)
    _replace(target, strict_junit(source.read_bytes()))


def _replace(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
