"""promtool-style lint of parsed metric families (``promtool check metrics`` rules, in Python).

promtool itself is a Go binary outside the project's packages; these are its naming rules as
the Prometheus documentation ("Metric and label naming", "Writing exporters") states them, so
the tests can hold every exported family to them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from prometheus_client.metrics_core import Metric

__all__ = ["lint_families"]

_NAME: Final = re.compile(r"\A[a-z_][a-z0-9_]*\Z")  # snake_case; no colons (recording rules only)
_LABEL: Final = re.compile(r"\A[a-z_][a-z0-9_]*\Z")
#: Suffixes a gauge may end in: a base unit, or a unitless kind that says what it is.
_UNIT_SUFFIXES: Final = (
    "_seconds",
    "_bytes",
    "_bytes_per_second",
    "_per_second",
    "_ratio",
    "_blocks",
    "_info",
    "_attained",
    "_cells",
    "_status",
    "_verdict",
)
#: Units Prometheus says to convert to base units (promtool: "use base unit").
_NON_BASE: Final = re.compile(
    r"_(milliseconds|microseconds|nanoseconds|minutes|hours|days|ms|us|kib|mib|gib|kb|mb|gb|kilobytes|megabytes|percent|pct)(_|\Z)"
)


def names_a_non_base_unit(name: str) -> bool:
    return _NON_BASE.search(name) is not None


def lint_families(families: Iterable[Metric]) -> list[str]:
    """Every rule a family breaks, as ``name: problem`` lines; empty when all are clean."""
    problems = []
    for f in families:
        name = f.name
        if not _NAME.match(name):
            problems.append(f"{name}: metric name is not snake_case")
        if not f.documentation.strip():
            problems.append(f"{name}: no HELP text")
        if f.type == "counter" and not all(s.name.endswith(("_total", "_created")) for s in f.samples):
            problems.append(f"{name}: counter sample without _total")
        if f.type != "counter" and name.endswith("_total"):
            problems.append(f"{name}: _total on a {f.type} (promtool: non-counter metrics should not have _total)")
        if f.type == "gauge" and not name.endswith(_UNIT_SUFFIXES):
            problems.append(f"{name}: no unit suffix")
        if names_a_non_base_unit(name):
            problems.append(f"{name}: not in base units")
        for sample in f.samples:
            for label in sample.labels:
                if not _LABEL.match(label) or label.startswith("__"):
                    problems.append(f"{name}: label {label!r} is not a snake_case name")
    return problems
