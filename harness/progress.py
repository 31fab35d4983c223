"""How a long step tells its user what it is doing: one line at a time (:data:`Progress`).

The command line prints each line; a test or a caller that wants silence passes :func:`quiet`.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Progress", "quiet"]

#: told one line of progress (no trailing newline) while a step runs
Progress = Callable[[str], None]


def quiet(_line: str) -> None:
    """A :data:`Progress` that says nothing."""
