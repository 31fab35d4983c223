"""Run ids: the one rule for every place that names a run.

A run id becomes a directory twice: ``reports/<run-id>/`` on this machine and
``/run/harness/<run-id>/`` on every node (where it is also a shell word).  So it follows the
harness's one name rule (:mod:`harness.userfiles.names`), checked where the id enters
(``--run-id`` of pytest, ``harness cleanup --run-id``) and again by everything that builds a
path from it.

Generated ids (``20261121-101500-ab12``) follow it; user-chosen ones such as ``nightly-42`` too.
"""

from __future__ import annotations

import argparse
import re
import secrets
from datetime import UTC, datetime
from typing import Final

from harness.errors import ConfigError
from harness.limits import MAX_NAME_LEN
from harness.userfiles.names import NAME_RULE, RESERVED_NAMES, name_problem

__all__ = [
    "GENERATED_RUN_ID",
    "MAX_RUN_ID_LEN",
    "RESERVED_RUN_IDS",
    "is_run_id",
    "new_run_id",
    "run_id_argument",
    "validate_run_id",
]

MAX_RUN_ID_LEN: Final = MAX_NAME_LEN
#: ``YYYYmmdd-HHMMSS-xxxx`` (UTC): sorts by start time; the random tail keeps two runs started in
#: the same second (two CI jobs on one runner) apart.  What :func:`new_run_id` makes.
GENERATED_RUN_ID: Final = re.compile(r"\A\d{8}-\d{6}-[0-9a-f]{4}\Z")
#: Names that live beside the runs (reports root, node root), compared case-insensitively.
RESERVED_RUN_IDS: Final = RESERVED_NAMES


def new_run_id(now: datetime | None = None) -> str:
    """A fresh run id like ``20261121-101500-ab12`` (UTC, so ids from different hosts sort together)."""
    stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{secrets.token_hex(2)}"


def _problem(run_id: str) -> str | None:
    problem = name_problem(run_id)
    return f"{problem} (e.g. nightly-42)" if problem == NAME_RULE else problem


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
