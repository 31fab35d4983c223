"""Where a run's results database is: the ``--results-db`` value, and opening the store it names.

``--results-db`` takes:

* nothing (the default): ``<reports root>/results.sqlite``;
* ``none``: no database (the run's NDJSON files only);
* ``postgresql://...`` or ``postgres://...``: a PostgreSQL server (libpq URL);
* ``sqlite:///relative/path``, ``sqlite:////absolute/path`` (SQLAlchemy's spelling) or a
  file path: that SQLite file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from harness.errors import ConfigError
from harness.redact import redact_url
from harness.resultsdb.store import ResultsStore

__all__ = ["DEFAULT_FILE", "DISABLED", "ResultsDb", "results_db"]

#: The default database's file name in the reports root.
DEFAULT_FILE: Final = "results.sqlite"
#: The ``--results-db`` value that turns the database off.
DISABLED: Final = "none"
_POSTGRES: Final = ("postgresql://", "postgres://")
_SQLITE: Final = "sqlite:///"
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")


@dataclass(frozen=True)
class ResultsDb:
    """A results database's location: a PostgreSQL URL or an SQLite file."""

    url: str | None = None
    path: Path | None = None

    def open(self, *, create: bool = True) -> ResultsStore:
        """Connect (making the file and the schema when needed; a reader passes ``create=False``
        and a missing SQLite file is then a ConfigError); the caller closes it."""
        if self.url is not None:
            from harness.resultsdb.postgres import PostgresStore

            return PostgresStore(self.url)
        assert self.path is not None
        from harness.resultsdb.sqlite import SqliteStore

        return SqliteStore(self.path, create=create)

    def describe(self) -> str:
        return redact_url(self.url) if self.url is not None else str(self.path)


def results_db(value: str | None, reports_root: Path) -> ResultsDb | None:
    """The database ``--results-db value`` names; ``None`` for ``none``; ConfigError for nonsense."""
    if value is None or value == "":
        default = reports_root / DEFAULT_FILE
        if default.is_symlink():  # the default is the reports root's own file, never written through a link
            raise ConfigError(f"{default}: is a symlink; name the database it points at with --results-db")
        return ResultsDb(path=default)
    if value.lower() == DISABLED:
        return None
    if value.startswith(_POSTGRES):
        return ResultsDb(url=value)
    if "://" in value and not value.startswith(_SQLITE):
        scheme = value.split("://")[0]
        raise ConfigError(
            f"--results-db {scheme if _SCHEME.fullmatch(scheme) else redact_url(scheme)}://...: not a database "
            "this harness writes (postgresql://..., sqlite:///path, a file path, or none)"
        )
    shown = redact_url(value)
    if shown != value:  # a path is never quoted with a password in it: `postgresql:/ci:pw@db` is no file
        raise ConfigError(f"--results-db {shown}: holds a password but is no postgresql:// or postgres:// URL")
    if value.startswith(_SQLITE):
        return ResultsDb(path=Path(value[len(_SQLITE) :]))
    return ResultsDb(path=Path(value))
