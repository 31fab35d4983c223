"""A test that finds split brain stops the run.

Split brain never heals by itself and the harness never resolves it (that throws away one
side's writes); every later test on the pair would only wait for a health that cannot come
and refuse.  So the first :class:`~harness.errors.SplitBrain` ends the session (this process's,
under xdist) with the finding as the reason; the test that found it fails with the details.
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

from harness.errors import SplitBrain

__all__: list[str] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, None, None]:
    yield
    if call.excinfo is not None and call.excinfo.errisinstance(SplitBrain):
        item.session.shouldstop = f"{call.excinfo.value}; no further tests run on this cluster"
