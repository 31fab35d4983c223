"""Test-suite configuration: pytester for the plugin's own tests; hypothesis profiles; the
``reliability_row`` marker's ``-k rowNN`` keyword."""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import HealthCheck, settings

pytest_plugins = ["pytester"]

settings.register_profile("ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


#: ``@pytest.mark.reliability_row(N)`` names the fault or bad-input case of
#: tests/RELIABILITY_CASES.md a test covers.  ``-m`` cannot select a marker by its argument,
#: so each marked test also answers to the keyword ``rowNN`` (two digits): ``pytest tests -k row15``.
_NAMED_ROW = re.compile(r"test_case_(\d\d)_")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        marker = item.get_closest_marker("reliability_row")
        if marker is None:
            continue
        (row,) = marker.args
        named = _NAMED_ROW.match(item.name)
        if named is not None and int(named.group(1)) != row:
            raise pytest.UsageError(f"{item.nodeid}: marked reliability_row({row}) but named after row {named[1]}")
        item.extra_keyword_matches.add(f"row{row:02d}")
