"""The SQLite results store: ``reports/results.sqlite`` by default.

Safe for several writers at once (xdist workers, two runs sharing a reports root, an import
next to a run): the database is in WAL mode (readers never block the writer, nor it them),
every write transaction starts with ``BEGIN IMMEDIATE`` (it takes the write lock up front, so
two writers queue instead of one failing half-way through with "database is locked"), and a
busy writer is waited for up to :data:`BUSY_TIMEOUT_S`.

The file is untrusted input.  Before anything is written to it, it must be a regular file
that is an SQLite database (its header says so) and either empty or this harness's: a file
with tables but no ``schema_version`` is another program's and is refused, never migrated
into.  After the migrations, every table and column the schema has must be there.  A file
that turns out damaged while it is read or written (SQLite's ``SQLITE_CORRUPT``,
``SQLITE_NOTADB``, a table gone) is a :class:`~harness.errors.ConfigError` naming the file:
exit 2, like any bad input; a busy, full or read-only disk stays an
:class:`~harness.errors.InfraError`.  A reader never creates the file (``create=False``): a
database not made yet reads as an empty one.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import stat
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from harness.errors import ConfigError, HarnessError, InfraError
from harness.resultsdb.schema import MIGRATIONS, VERSION_TABLE
from harness.resultsdb.store import Cursor, ResultsStore

__all__ = ["BUSY_TIMEOUT_S", "SqliteStore"]

#: How long a writer waits for another one to commit (a whole run's rows take well under a second).
BUSY_TIMEOUT_S: Final = 60.0
_HEADER: Final = b"SQLite format 3\x00"
_UNUSABLE: Final = "not a usable results database"
# SQLite's result codes that say the disk or another process is in the way (or the harness's
# own rows conflict), not that the file is bad
_ENVIRONMENT: Final = (
    "SQLITE_BUSY",
    "SQLITE_LOCKED",
    "SQLITE_FULL",
    "SQLITE_IOERR",
    "SQLITE_READONLY",
    "SQLITE_CANTOPEN",
    "SQLITE_PERM",
    "SQLITE_NOMEM",
    "SQLITE_INTERRUPT",
    "SQLITE_CONSTRAINT",
)


@functools.cache
def _schema_columns() -> dict[str, frozenset[str]]:
    """Each table of the current schema and its columns, from the migrations applied in memory."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(VERSION_TABLE)
        cur = conn.cursor()
        for migration in MIGRATIONS:
            migration.apply(cur, str)
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: frozenset(r[1] for r in conn.execute(f"PRAGMA table_info({t})")) for t in tables}
    finally:
        conn.close()


def _failure(path: Path, exc: sqlite3.Error, writing: bool) -> HarnessError:
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name.startswith(_ENVIRONMENT):
        done = "writing the results database failed, nothing written" if writing else "reading it failed"
        return InfraError(f"{path}: {done}: {exc}")
    return ConfigError(f"{path}: {_UNUSABLE} (damaged?): {exc}")


def _reason(exc: Exception) -> str:
    # sqlite3 decodes TEXT as UTF-8 when it hands a row over: damaged bytes are a UnicodeDecodeError
    return "text that is not UTF-8 in it" if isinstance(exc, UnicodeDecodeError) else str(exc)


def _check_file(path: Path) -> bool:
    """Whether ``path`` is there; refuse what is no SQLite file before SQLite opens it (a FIFO
    would block, notes are no database)."""
    try:
        info = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the results database: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{path}: {_UNUSABLE}: not a regular file")
    if info.st_size == 0:
        return True
    try:
        with path.open("rb") as f:
            header = f.read(len(_HEADER))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the results database: {exc.strerror}") from None
    if header != _HEADER:
        raise ConfigError(f"{path}: {_UNUSABLE}: file is not a database (no SQLite header)")
    return True


class SqliteStore(ResultsStore):
    """A results database in one SQLite file (made, with its schema, when first opened for writing)."""

    def __init__(self, path: Path, *, create: bool = True) -> None:
        self.path = path
        self.where = str(path)
        exists = _check_file(path)
        # a reader of a database not made yet reads an empty one, in memory: it makes no file
        where = "rwc" if create else "rw"
        uri = f"file:{urllib.parse.quote(os.fspath(path.absolute()))}?mode={where}" if create or exists else ":memory:"
        try:
            if create:
                path.parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: no implicit transactions; the store begins its own.
            self._conn = sqlite3.connect(uri, uri=uri != ":memory:", timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"{path}: cannot open the results database: {exc}") from None
        try:
            self._refuse_foreign()
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            applied = self.migrate()
            self._check_schema()
            if applied and exists:
                self._reclaim()
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            self._conn.close()
            raise ConfigError(f"{path}: {_UNUSABLE}: {_reason(exc)}") from None
        except HarnessError:
            self._conn.close()
            raise

    def _reclaim(self) -> None:
        """Give the file back the space a migration freed (a column of every sample row dropped)."""
        # another connection holding the file refuses it: the rows are migrated all the same, and
        # the space waits for a later VACUUM
        with contextlib.suppress(sqlite3.OperationalError):
            self._conn.execute("VACUUM")

    def _tables(self) -> dict[str, frozenset[str]]:
        tables = [r[0] for r in self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: frozenset(str(r[1]) for r in self._conn.execute(f'PRAGMA table_info("{t}")')) for t in tables}

    def _refuse_foreign(self) -> None:
        tables = self._tables()
        if tables and "schema_version" not in tables:
            shown = ", ".join(sorted(tables)[:8])
            raise ConfigError(
                f"{self.path}: {_UNUSABLE}: it holds other tables ({shown}) and no schema_version: another "
                "program's database, left as it is; point --results-db elsewhere"
            )

    def _check_schema(self) -> None:
        tables = self._tables()
        for table, columns in _schema_columns().items():
            missing = sorted(columns - tables.get(table, frozenset()))
            if missing:
                what = "no table" if table not in tables else f"no column(s) {', '.join(missing)} in"
                raise ConfigError(f"{self.path}: {_UNUSABLE}: {what} {table} (damaged, or another program's?)")

    @contextmanager
    def _transaction(self) -> Iterator[Cursor]:
        cur = self._conn.cursor()
        try:
            cur.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise _failure(self.path, exc, writing=True) from None
        with self._ending(cur, writing=True):
            yield cur

    @contextmanager
    def _reader(self) -> Iterator[Cursor]:
        cur = self._conn.cursor()
        with self._ending(cur, writing=False):
            cur.execute("BEGIN")  # one snapshot for the whole read
            yield cur

    @contextmanager
    def _ending(self, cur: sqlite3.Cursor, *, writing: bool) -> Iterator[None]:
        """Commit what the block did, or roll it back; SQLite's errors as the harness's."""
        try:
            yield
            cur.execute("COMMIT")
        except BaseException as exc:
            if self._conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):  # a damaged file may refuse even that
                    cur.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise _failure(self.path, exc, writing=writing) from None
            if isinstance(exc, UnicodeDecodeError):
                raise ConfigError(f"{self.path}: {_UNUSABLE} (damaged?): {_reason(exc)}") from None
            raise

    def _lock_for_migration(self, cur: Cursor) -> None:
        pass  # BEGIN IMMEDIATE holds the database's write lock already

    def close(self) -> None:
        self._conn.close()
