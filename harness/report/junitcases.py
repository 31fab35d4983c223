"""The run's JUnit as CI systems keep its history: one identity per cell, errors apart from regressions.

Two things pytest's own file gets wrong for a harness run, put right before anyone reads it:

* under ``-n`` with ``--dist loadgroup``, xdist appends the cell's group to every test id
  (``test_replicated_write[multi-az-...]@nodes-b1``), so GitLab's and Jenkins' test history see
  one cell under two names, with and without ``-n``: the suffix is removed from the name;
* pytest writes every exception of a test's call as a ``<failure>``, the same as a regression a
  cell's verdict fails on.  A test that ended in an exception other than a verdict or an
  assertion (iperf3 that did not answer, an impairment that did not take, a lost node) carries
  the :data:`ERROR_PROPERTY` property (:mod:`harness.plugin.junit` adds it), and its
  ``<failure>`` becomes an ``<error>`` of that type, as JUnit means the two.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Final

__all__ = ["ERROR_PROPERTY", "ci_junit", "stable_name"]

#: The testcase property naming the exception that ended a test as an infrastructure error.
ERROR_PROPERTY: Final = "harness_error"


def stable_name(name: str) -> str:
    """``name`` without the ``@group`` xdist appends under ``--dist loadgroup``.

    xdist's own rule: an ``@`` after the last ``]`` (parameters may hold one; a Python name
    cannot) starts the group.
    """
    at = name.rfind("@")
    return name[:at] if at > name.rfind("]") else name


def _error_type(case: ET.Element) -> str | None:
    for prop in case.iter("property"):
        if prop.get("name") == ERROR_PROPERTY:
            return prop.get("value", "")
    return None


def _suites(root: ET.Element) -> list[ET.Element]:
    return [root] if root.tag == "testsuite" else root.findall("testsuite")


def _bump(suite: ET.Element, key: str, by: int) -> None:
    suite.set(key, str(int(suite.get(key, "0")) + by))


def ci_junit(xml: bytes) -> bytes:
    """The JUnit document ``xml`` with stable test names and infrastructure errors as ``<error>``."""
    root = ET.fromstring(xml)
    for suite in _suites(root):
        for case in suite.iter("testcase"):
            case.set("name", stable_name(case.get("name", "")))
            error_type = _error_type(case)
            failure = case.find("failure")
            if error_type is None or failure is None:
                continue
            failure.tag = "error"
            failure.set("type", error_type)
            _bump(suite, "failures", -1)
            _bump(suite, "errors", 1)
    return bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True))
