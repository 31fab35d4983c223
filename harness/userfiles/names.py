"""The one name rule: a name taken from data or a command line that becomes a path component.

Inventory names (``reports/baselines/<inventory>/``, ``reports/history-<inventory>-<metric>.png``),
baseline names, run ids (``reports/<run-id>/`` here and ``/run/harness/<run-id>/`` on every
node, where it is also a shell word) and metric names in file names all follow it:

* 1-64 characters: letters, digits, ``.``, ``_``, ``-``; the first one a letter or digit (no
  hidden files, nothing a command reads as an option);
* no ``..`` anywhere (no ``/`` is possible), so it is always exactly one path component;
* not a name the harness keeps for itself beside the runs: ``latest`` (the link to the newest
  run), ``baselines`` (saved baselines), ``calibrations`` (stored calibrations), ``lock`` (the
  cluster lock on a node); compared case-insensitively, because a case-insensitive file system
  (macOS) makes ``Latest`` the same directory.
"""

from __future__ import annotations

import re
from typing import Final

from harness.errors import ConfigError
from harness.limits import MAX_NAME_LEN

__all__ = ["LATEST", "NAME_RULE", "RESERVED_NAMES", "check_name", "name_problem"]

#: The symlink to the newest run inside the reports root.
LATEST: Final = "latest"
#: Names that live beside the runs (reports root, node root).
RESERVED_NAMES: Final = frozenset({LATEST, "baselines", "calibrations", "lock"})
_RULE: Final = re.compile(rf"\A[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_NAME_LEN - 1}}}\Z")
#: The rule in words, for messages.
NAME_RULE: Final = f"use 1-{MAX_NAME_LEN} letters, digits, '.', '_' or '-', starting with a letter or digit, no '..'"


def name_problem(name: object) -> str | None:
    """What is wrong with ``name`` as a path component (``None``: nothing)."""
    if not isinstance(name, str) or not _RULE.match(name) or ".." in name:
        return NAME_RULE
    if name.casefold() in RESERVED_NAMES:
        return f"{', '.join(sorted(RESERVED_NAMES))} are names the harness keeps for itself; pick another"
    return None


def check_name(name: str, what: str) -> str:
    """``name`` if it follows the rule; ConfigError naming ``what`` and the rule otherwise."""
    problem = name_problem(name)
    if problem is not None:
        raise ConfigError(f"{what} {name!r}: {problem}")
    return name
