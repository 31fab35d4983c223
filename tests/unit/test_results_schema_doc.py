"""docs/results-database.md is the schema a database really has: every table and column the
migrations make, and nothing else, at the version this harness writes."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from harness.resultsdb.schema import SCHEMA_VERSION
from harness.resultsdb.sqlite import SqliteStore

DOC = Path(__file__).parents[2] / "docs" / "results-database.md"


def _documented() -> dict[str, set[str]]:
    tables: dict[str, set[str]] = {}
    current: str | None = None
    for line in DOC.read_text().splitlines():
        heading = re.match(r"### `(\w+)`", line)
        if heading:
            current = heading.group(1)
            tables[current] = set()
        elif line.startswith("## "):
            current = None
        elif current is not None and (cell := re.match(r"\| `(\w+)` \|", line)):
            tables[current].add(cell.group(1))
    tables["schema_version"] = {"version"}  # described in a sentence, not a table
    return tables


def test_the_document_lists_every_table_and_column_of_a_new_database(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    with SqliteStore(path):
        pass
    with sqlite3.connect(path) as conn:
        names = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        real = {name: {row[1] for row in conn.execute(f"PRAGMA table_info({name})")} for name in names}
        indexes = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert _documented() == real
    text = DOC.read_text()
    assert f"schema of version {SCHEMA_VERSION}," in text
    assert all(f"`{name}`" in text for name in indexes if not name.startswith("sqlite_autoindex"))
