"""pytest option ``--results-db``: where the end of the run writes the run into the results database.

Registered by :mod:`harness.plugin` (``pytest_plugins``).  The value is checked at configure
time (a URL of a database this harness does not write is a usage error before anything runs);
the write itself is one step of :class:`~harness.plugin.runend.RunEnd`, in the controller only.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.resultsdb.location import ResultsDb, results_db

__all__ = ["results_db_of"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "HA storage harness")
    group.addoption(
        "--results-db",
        metavar="URL|PATH|none",
        default=None,
        help="results database every finished run is written to (default: <reports>/results.sqlite; "
        "postgresql://user@host/db for a shared server; none: write none)",
    )


def results_db_of(config: pytest.Config, reports_root: Path) -> ResultsDb | None:
    """The database this run writes to; ``None`` with ``--results-db none``."""
    try:
        return results_db(config.getoption("--results-db"), reports_root)
    except ConfigError as exc:
        raise pytest.UsageError(str(exc)) from None


def pytest_configure(config: pytest.Config) -> None:
    results_db_of(config, Path(config.getoption("--reports")))
