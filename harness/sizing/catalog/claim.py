"""One figure a line of a recorded copy states, and the shape of the readers that find them.

A reader (:data:`Reader`) is given a copy's reference, one kept line's number and text, and the
table the line sits under (the copy's last ``# table:`` line), and yields the :class:`Claim` s the
line makes; :mod:`~harness.sizing.catalog.recorded` holds the readers and runs them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["Claim", "Reader"]


@dataclass(frozen=True)
class Claim:
    """One figure a recorded line states: ``value`` None means the source says there is none
    (a "10 Gigabit" row has no burst).  ``entry`` may be a SQL LIKE pattern (``m5.%``) that
    names every entry it matches."""

    entry: str
    field: str
    value: float | None
    reference: str
    line: str


#: ``reader(reference, number, text, table)``: the claims of one kept line
Reader = Callable[[str, str, str, str], Iterator[Claim]]
