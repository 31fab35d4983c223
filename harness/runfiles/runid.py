"""Run ids: the one rule for every place that names a run.

A run id becomes a directory twice: ``reports/<run-id>/`` on this machine and
``/run/harness/<run-id>/`` on every node (where it is also a shell word).  So one rule,
checked where the id enters (``--run-id`` of pytest, ``harness cleanup --run-id``) and again by
everything that builds a path from it:

* 1-64 characters: letters, digits, ``.``, ``_``, ``-``; the first one a letter or digit (no
  hidden files, nothing a command reads as an option);
* no ``..`` anywhere (no ``/`` is possible), so it is always exactly one path component;
* not a name the harness keeps for itself beside the runs: ``latest`` (the link to the newest
  run), ``baselines`` (saved baselines), ``lock`` (the cluster lock on a node).

Generated ids (``20261121-101500-ab12``) follow it; user-chosen ones such as ``nightly-42`` too.
"""

from __future__ import annotations

import argparse
import re
import secrets
from datetime import UTC, datetime
from typing import Final

from harness.errors import ConfigError

__all__ = [
    "GENERATED_RUN_ID",
    "MAX_RUN_ID_LEN",
    "RESERVED_RUN_IDS",
    "is_run_id",
    "new_run_id",
    "run_id_argument",
    "validate_run_id",
]

MAX_RUN_ID_LEN: Final = 64
_RULE: Final = re.compile(rf"\A[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_RUN_ID_LEN - 1}}}\Z")
#: ``YYYYmmdd-HHMMSS-xxxx`` (UTC): sorts by start time; the random tail keeps two runs started in
#: the same second (two CI jobs on one runner) apart.  What :func:`new_run_id` makes.
GENERATED_RUN_ID: Final = re.compile(r"\A\d{8}-\d{6}-[0-9a-f]{4}\Z")
#: Names that live beside the runs (reports root, node root); compared case-insensitively
#: because a case-insensitive file system (macOS) would make ``Latest`` the same directory.
RESERVED_RUN_IDS: Final = frozenset({"latest", "baselines", "lock"})


def new_run_id(now: datetime | None = None) -> str:
    """A fresh run id like ``20261121-101500-ab12`` (UTC, so ids from different hosts sort together)."""
    stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{secrets.token_hex(2)}"


def _problem(run_id: str) -> str | None:
    if not _RULE.match(run_id) or ".." in run_id:
        return (
            f"use 1-{MAX_RUN_ID_LEN} letters, digits, '.', '_' or '-', starting with a letter or digit, "
            "no '..' (e.g. nightly-42)"
        )
    if run_id.casefold() in RESERVED_RUN_IDS:
        return f"{', '.join(sorted(RESERVED_RUN_IDS))} are names the harness keeps for itself; pick another"
    return None


def is_run_id(text: str) -> bool:
    """Whether ``text`` follows the run id rule."""
    return _problem(text) is None


def validate_run_id(run_id: str) -> str:
    """``run_id`` if it follows the rule; ConfigError (exit code 2) saying what is allowed otherwise."""
    problem = _problem(run_id)
    if problem is not None:
        raise ConfigError(f"run id {run_id!r} is not allowed: {problem}")
    return run_id


def run_id_argument(text: str) -> str:
    """argparse ``type=``: a bad run id is a usage error at parsing, before anything runs."""
    try:
        return validate_run_id(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
