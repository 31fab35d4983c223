"""The SQLite results store: ``reports/results.sqlite`` by default.

Safe for several writers at once (xdist workers, two runs sharing a reports root, an import
next to a run): the database is in WAL mode (readers never block the writer, nor it them),
every write transaction starts with ``BEGIN IMMEDIATE`` (it takes the write lock up front, so
two writers queue instead of one failing half-way through with "database is locked"), and a
busy writer is waited for up to :data:`BUSY_TIMEOUT_S`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from harness.errors import ConfigError, InfraError
from harness.resultsdb.store import Cursor, ResultsStore

__all__ = ["BUSY_TIMEOUT_S", "SqliteStore"]

#: How long a writer waits for another one to commit (a whole run's rows take well under a second).
BUSY_TIMEOUT_S: Final = 60.0


class SqliteStore(ResultsStore):
    """A results database in one SQLite file (made, with its schema, when first opened)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: no implicit transactions; the store begins its own.
            self._conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"{path}: cannot open the results database: {exc}") from None
        try:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self.migrate()
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise ConfigError(f"{path}: not a usable results database: {exc}") from None

    @contextmanager
    def _transaction(self) -> Iterator[Cursor]:
        cur = self._conn.cursor()
        try:
            cur.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise InfraError(f"{self.path}: cannot write the results database: {exc}") from None
        try:
            yield cur
        except sqlite3.Error as exc:
            cur.execute("ROLLBACK")
            raise InfraError(f"{self.path}: writing the results database failed, nothing written: {exc}") from None
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        cur.execute("COMMIT")

    @contextmanager
    def _reader(self) -> Iterator[Cursor]:
        cur = self._conn.cursor()
        cur.execute("BEGIN")  # one snapshot for the whole read
        try:
            yield cur
        finally:
            cur.execute("COMMIT")

    def _lock_for_migration(self, cur: Cursor) -> None:
        pass  # BEGIN IMMEDIATE holds the database's write lock already

    def close(self) -> None:
        self._conn.close()
