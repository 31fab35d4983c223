"""``--repeat auto`` and its ``--confidence``, ``--tolerance``, ``--repeat-cap`` and ``--interval``.

``--repeat N`` makes N test items per cell when the tests are collected; ``--repeat auto`` makes
one, whose ``measure`` runs the cell until the interval of its median is tight
(:mod:`harness.cell.autorepeat`).  The three numbers are checked together when the run is
configured (:class:`~harness.rules.repeats.RepeatPlan`): a cap below the fewest repeats that
give an interval at the confidence asked for is a usage error, not a loop that never stops
early.  ``--interval`` picks the interval of the median (:mod:`harness.rules.medianinterval`):
``lognormal`` by default, ``order`` for the distribution-free one.
"""

from __future__ import annotations

from argparse import ArgumentTypeError
from typing import Final, Literal

import pytest

from harness.argtypes import number
from harness.rules.medianinterval import DEFAULT_METHOD, INTERVAL_METHODS, METHOD_HELP
from harness.rules.repeats import DEFAULT_CAP, DEFAULT_CONFIDENCE, DEFAULT_TOLERANCE, RepeatPlan

__all__ = ["AUTO", "repeat_count", "repeat_plan"]

AUTO: Final = "auto"
_COUNT = number(int, 1, 100, what="repeats")


def repeat_count(text: str) -> int | Literal["auto"]:
    """``--repeat``: a whole number of repeats in [1, 100], or ``auto``."""
    if text.strip().lower() == AUTO:
        return AUTO
    try:
        return _COUNT(text)
    except ArgumentTypeError as exc:
        raise ArgumentTypeError(f"{exc} (or auto)") from None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness")
    group.addoption(
        "--confidence",
        type=number(float, 0.5, 0.999, what="(a fraction: 0.95 is 95 %)"),
        default=DEFAULT_CONFIDENCE,
        help="--repeat auto: confidence of the interval of each cell's median (default: %(default)s)",
    )
    group.addoption(
        "--tolerance",
        type=number(float, 0.0, 0.5, exclusive_minimum=True, what="(a fraction: 0.05 is ±5 %)"),
        default=DEFAULT_TOLERANCE,
        help="--repeat auto: stop once that interval is within this share of the median (default: %(default)s)",
    )
    group.addoption(
        "--repeat-cap",
        type=number(int, 1, 100, what="repeats"),
        default=DEFAULT_CAP,
        help="--repeat auto: the most repeats of one cell (default: %(default)s)",
    )
    group.addoption(
        "--interval",
        choices=INTERVAL_METHODS,
        default=DEFAULT_METHOD,
        help=f"--repeat auto: {METHOD_HELP} (default: %(default)s)",
    )


def repeat_plan(config: pytest.Config) -> RepeatPlan | None:
    """The run's plan under ``--repeat auto``; None for a fixed count.  A cap too low for the
    confidence is a usage error naming both."""
    if config.getoption("--repeat") != AUTO:
        return None
    try:
        return RepeatPlan(
            float(config.getoption("--confidence")),
            float(config.getoption("--tolerance")),
            int(config.getoption("--repeat-cap")),
            config.getoption("--interval"),
        )
    except ValueError as exc:
        raise pytest.UsageError(f"--repeat auto: {exc}") from None
