"""The part of a DB-API cursor the results store uses (sqlite3 and psycopg both have it)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

__all__ = ["Cursor", "Placeholders"]


class Cursor(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Any: ...
    def executemany(self, sql: str, params: Sequence[Sequence[Any]], /) -> Any: ...
    def fetchall(self) -> list[Any]: ...
    def fetchone(self) -> Any: ...


#: A statement written with ``?`` placeholders, in the backend's own style.
Placeholders = Callable[[str], str]
