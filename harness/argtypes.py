"""One argparse ``type=`` for every numeric command-line option: finite and within range.

``type=float`` takes ``inf``, ``nan`` and ``-5``; ``type=int`` takes ``0`` and ``-3``.  Each
of those turns into nonsense later (a dead-man switch of ``sleep inf`` never fires, zero
pings give no RTT), so the option is refused when it is parsed, with one line that says
what is allowed.  pytest options (``parser.addoption(type=...)``) use the same helper; pytest
reports the refusal as a usage error.
"""

from __future__ import annotations

import math
from argparse import ArgumentTypeError
from collections.abc import Callable
from typing import TypeVar

from harness.errors import clip

__all__ = ["number"]

N = TypeVar("N", int, float)


def number(
    kind: type[N], minimum: N, maximum: N, *, exclusive_minimum: bool = False, what: str = "units"
) -> Callable[[str], N]:
    """An argparse type: ``kind`` (int or float) parsed from the option's text, finite and in
    ``[minimum, maximum]`` (``(minimum, maximum]`` with ``exclusive_minimum``).  ``what`` names
    the unit in the error: ``must be a finite number of seconds in (0, 3600], got 'inf'``."""
    low = "(" if exclusive_minimum else "["
    allowed = (
        f"a whole number of {what} in {low}{minimum:g}, {maximum:g}]"
        if kind is int
        else f"a finite number of {what} in {low}{minimum:g}, {maximum:g}]"
    )

    def parse(text: str) -> N:
        try:
            value = kind(text)
        except ValueError:
            value = None
        if (
            value is None
            or not math.isfinite(value)
            or value > maximum
            or value < minimum
            or (exclusive_minimum and value == minimum)
        ):
            # argparse prints "argument --x: <this>"
            raise ArgumentTypeError(clip(f"must be {allowed}, got {text!r}"))
        return value

    parse.__name__ = f"{kind.__name__} of {what}"
    return parse
