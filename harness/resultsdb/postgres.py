"""The PostgreSQL results store (``--results-db postgresql://user@host/db``): one database a team shares.

The same schema and statements as SQLite (:mod:`harness.resultsdb.store`), through psycopg 3.
Each write is one transaction (psycopg's ``conn.transaction()``); concurrent migrators (two
runs starting on an empty database) are serialised by a transaction-scoped advisory lock.
psycopg is imported only when a PostgreSQL URL is given.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from harness.errors import ConfigError, HarnessError, InfraError
from harness.redact import redact_about_url, redact_url
from harness.resultsdb.store import Cursor, ResultsStore

if TYPE_CHECKING:
    import psycopg

__all__ = ["MIGRATION_LOCK", "PostgresStore"]

#: pg_advisory_xact_lock key of schema migrations ("harness" in ASCII, as a 64-bit number).
MIGRATION_LOCK: Final = 0x68_61_72_6E_65_73_73


class PostgresStore(ResultsStore):
    """A results database on a PostgreSQL server (the schema is made when first connected)."""

    def __init__(self, url: str) -> None:
        self.where = redact_url(url)  # its password, if any, never reaches a message
        try:
            import psycopg
        except ImportError:  # pragma: no cover - pinned in requirements.txt
            raise ConfigError(
                "--results-db postgresql://...: psycopg is not installed (pip install psycopg[binary])"
            ) from None
        try:
            self._conn: psycopg.Connection[Any] = psycopg.connect(url, autocommit=True)
        except psycopg.Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            detail = redact_about_url(first, url)
            raise InfraError(f"{self.where}: cannot connect to the results database: {detail}") from None
        except UnicodeError as exc:  # a host name the resolver cannot encode (a 64-character label)
            raise ConfigError(f"{self.where}: not a host name: {redact_about_url(str(exc), url)}") from None
        try:
            self.migrate()
        except psycopg.Error as exc:
            self._conn.close()
            detail = redact_about_url(str(exc), url)
            raise InfraError(f"{self.where}: cannot set up the results database: {detail}") from None
        except HarnessError:  # a newer schema, a row a migration cannot move
            self._conn.close()
            raise

    def _sql(self, statement: str) -> str:
        return statement.replace("?", "%s")

    @contextmanager
    def _transaction(self) -> Iterator[Cursor]:
        import psycopg

        try:
            with self._conn.transaction(), self._conn.cursor() as cur:
                yield cur
        except psycopg.Error as exc:
            raise InfraError(f"{self.where}: writing the results database failed, nothing written: {exc}") from None

    @contextmanager
    def _reader(self) -> Iterator[Cursor]:
        with self._conn.transaction(), self._conn.cursor() as cur:
            cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            yield cur

    def _lock_for_migration(self, cur: Cursor) -> None:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))

    def close(self) -> None:
        self._conn.close()
