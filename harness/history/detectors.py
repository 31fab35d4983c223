"""The change detectors ``harness history --detector`` offers, by name.

* ``median-mad`` (the default): :mod:`~.changes`, the harness's own robust one-step test;
  ``--threshold`` and ``--min-change`` tune it.
* ``e-divisive``: :mod:`~.edivisive`, E-divisive means as Apache Otava computes it (t-test
  significance, p < 0.001); ``--min-change`` is its smallest relative change too.

Either is a function from a series of run medians to its :class:`~.changes.Shift` values.
"""

from __future__ import annotations

import functools
from typing import Final

from harness.history.changes import MIN_CHANGE, THRESHOLD, Detector, detect_shifts
from harness.history.edivisive import edivisive_shifts

__all__ = ["DEFAULT_DETECTOR", "DETECTORS", "detector"]

DETECTORS: Final = ("median-mad", "e-divisive")
DEFAULT_DETECTOR: Final = "median-mad"


def detector(name: str = DEFAULT_DETECTOR, *, threshold: float = THRESHOLD, min_change: float = MIN_CHANGE) -> Detector:
    """The detector called ``name``; ValueError naming the choices for any other name."""
    if name == "median-mad":
        return functools.partial(detect_shifts, threshold=threshold, min_change=min_change)
    if name == "e-divisive":
        return functools.partial(edivisive_shifts, min_change=min_change)
    raise ValueError(f"unknown change detector {name!r}; choose one of {', '.join(DETECTORS)}")
