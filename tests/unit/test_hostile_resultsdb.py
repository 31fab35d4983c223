"""The results database as untrusted input: another program's SQLite file, a damaged one, rows
that say a bandwidth is negative or infinite, metadata that is no JSON.  The database is built
by the real import of the four recorded lab runs (tests/data/runs/history-lab4), then broken in
code; every reader (``harness history``, ``harness results status``, ``harness compare
history:N``) and the writer (``harness results import``) answer in one line, exit 2, under the
time and memory guards (tests/unit/hostile_inputs.py).  The fuzz target breaks the database at
random (a cell of any row, a table, bytes of the file; a password in a cell) and runs every
reader on it, which changes nothing of the file and quotes no password."""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.report.results import RunResults
from harness.resultsdb.records import record_of
from harness.resultsdb.sqlite import SqliteStore
from harness.runfiles.runinfo import RunInfo
from harness.runfiles.samples import Sample
from tests.unit.fuzz_tally import surface
from tests.unit.hostile_inputs import FUZZ, no_sentinel, run_cli, secret_forms, unchanged

RUNS = Path(__file__).resolve().parents[1] / "data" / "runs" / "history-lab4"
NEWEST = RUNS / "20261125-120534-2874"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("db") / "results.sqlite"
    run_cli(["results", "import", str(RUNS), "--results-db", str(path)]).clean((0,))
    return path


def _copy(built: Path, tmp_path: Path) -> Path:
    path = tmp_path / "results.sqlite"
    shutil.copy(built, path)
    return path


def _readers(db: Path) -> list[list[str]]:
    return [
        ["history", "--results-db", str(db), "--no-plot"],
        ["results", "status", "--results-db", str(db)],
        ["compare", "history:3", str(NEWEST), "--results-db", str(db), "--no-write"],
    ]


def _connect(db: Path) -> contextlib.closing[sqlite3.Connection]:
    """A connection closed at the end (a ``with`` on the connection alone only commits: its
    open WAL would be checkpointed by the next reader, a change the reader did not make)."""
    return contextlib.closing(sqlite3.connect(db))


def _sql(db: Path, *statements: str) -> None:
    with _connect(db) as conn, conn:
        for statement in statements:
            conn.execute(statement)


def test_the_built_database_reads(built: Path, tmp_path: Path) -> None:
    """The control: every reader answers 0 (or 1, a verdict) on the database the cases break."""
    db = _copy(built, tmp_path)
    for argv in _readers(db):
        run_cli(argv).clean((0, 1))


def test_another_programs_database_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    db = tmp_path / "app.sqlite"
    _sql(db, "CREATE TABLE users (name TEXT)", "INSERT INTO users VALUES ('ann')")
    before = db.read_bytes()
    for argv in [*_readers(db), ["results", "import", str(RUNS), "--results-db", str(db)]]:
        line = run_cli(argv).refusal()
        assert f"{db}: not a usable results database: it holds other tables (users) and no schema_version" in line
    assert db.read_bytes() == before  # never migrated into


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("pages", "not a usable results database (damaged?): database disk image is malformed"),
        ("text", "not a usable results database: file is not a database (no SQLite header)"),
        ("header", "not a usable results database: file is not a database"),
        ("table", "not a usable results database: no table samples"),
        ("column", "not a usable results database: no column(s) value in samples"),
        ("version", "not a usable results database: schema version 'two'"),
    ],
)
def test_a_damaged_database_is_refused_by_readers_and_writer(
    built: Path, tmp_path: Path, damage: str, message: str
) -> None:
    db = _copy(built, tmp_path)
    if damage == "pages":
        with db.open("r+b") as f:
            f.seek(3 * 4096)
            f.write(bytes(range(256)) * 48)
    elif damage == "text":
        db.write_text("these are notes\n" * 100)
    elif damage == "header":
        db.write_bytes(b"SQLite format 3\x00" + b"\xff" * 5000)
    elif damage == "table":
        _sql(db, "DROP TABLE samples")
    elif damage == "column":
        _sql(db, "ALTER TABLE samples DROP COLUMN value")
    else:
        _sql(db, "UPDATE schema_version SET version = 'two'")
    for argv in [*_readers(db), ["results", "import", str(RUNS), "--results-db", str(db), "--replace"]]:
        assert message in run_cli(argv).refusal()


@pytest.mark.parametrize(
    ("update", "message"),
    [
        ("samples SET value = -5 WHERE metric = 'bw'", "bw -5 MiB/s is negative"),
        ("samples SET value = 9e999 WHERE metric = 'bw'", "bw inf MiB/s is not a finite number"),
        ("samples SET value = 'fast' WHERE metric = 'bw'", "bw value 'fast' is not a number"),
        # sample 0's own metadata is the run's first distinct rest; the run's common part is in runs
        ("sample_metadata SET metadata = '{nope' WHERE meta_id = 0", "sample 0: Expecting property name"),
        ("sample_metadata SET metadata = '[1]' WHERE meta_id = 0", "sample 0: metadata: expected an object"),
        ("runs SET sample_metadata = '[1]'", "sample 0: metadata: expected an object"),
        ("samples SET ts = 1e300 WHERE seq = 0", "sample 0: timestamp 1e+300 is no time between 1970 and 9999"),
    ],
)
def test_values_are_checked_on_read_as_on_write(built: Path, tmp_path: Path, update: str, message: str) -> None:
    db = _copy(built, tmp_path)
    _sql(db, f"UPDATE {update}")
    for argv in [_readers(db)[0], _readers(db)[2]]:
        assert message in run_cli(argv).refusal()


def test_a_negative_value_is_never_written(tmp_path: Path) -> None:
    sample = Sample("bw", -1.0, "MiB/s", {"scenario": "s", "pair": "p", "mode": "m", "workload": "w"})
    with SqliteStore(tmp_path / "r.sqlite") as store:
        with pytest.raises(ConfigError, match="run r not written: bw -1 MiB/s is negative"):
            store.write_run(record_of(RunInfo(run_id="r"), RunResults((sample,))))
        assert store.runs() == []


def test_a_reader_makes_no_database(tmp_path: Path) -> None:
    for argv in _readers(tmp_path / "reports" / "results.sqlite"):
        with unchanged(tmp_path):
            run_cli(argv).clean((0, 2))  # "no finished run" (status: none to list)
    assert not (tmp_path / "reports").exists()


# -- the fuzz target ----------------------------------------------------------------------------

_COLUMNS = {
    "samples": ["value", "ts", "metadata", "metric", "unit", "cell_key", "seq"],
    "runs": ["run_json", "inventory_name", "gate", "source", "complete", "started"],
    "schema_version": ["version"],
    "cells": ["verdict", "provenance", "repeats"],
}
_VALUES = st.one_of(
    st.none(),
    st.integers(),
    st.floats(),
    st.text(max_size=30),
    st.binary(max_size=30),
    st.sampled_from(["{", "[]", '{"a": "\\ud800"}', "1" * 5000, '{"run_id": "x", "started": 1e300}', "-1"]),
    secret_forms(),
    secret_forms().map(lambda form: json.dumps({"run_id": "x", "inventory_name": form, "profile": form})),
)


@st.composite
def damage(draw: st.DrawFn) -> tuple[str, object]:
    kind = draw(st.sampled_from(["cell", "cell", "cell", "drop", "bytes"]))
    if kind == "cell":
        table = draw(st.sampled_from(sorted(_COLUMNS)))
        return f"{table}.{draw(st.sampled_from(_COLUMNS[table]))}", draw(_VALUES)
    if kind == "drop":
        return "drop", draw(st.sampled_from(sorted(_COLUMNS)))
    return "bytes", (draw(st.integers(0, 600_000)), draw(st.binary(min_size=1, max_size=64)))


def _damaged(db: Path, what: str, value: object) -> None:
    if what == "drop":
        _sql(db, f"DROP TABLE {value}")
    elif what == "bytes":
        assert isinstance(value, tuple)
        offset, data = value
        assert isinstance(offset, int) and isinstance(data, bytes)
        with db.open("r+b") as f:
            f.seek(min(offset, db.stat().st_size))
            f.write(data)
    else:
        table, column = what.split(".")
        first = f"(SELECT MIN(rowid) FROM {table})"
        # a NOT NULL or key the file itself keeps, a number SQLite has no type for: no such damage
        with _connect(db) as conn, conn, contextlib.suppress(sqlite3.IntegrityError, OverflowError):
            conn.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = {first}", (value,))


@FUZZ
@given(damages=st.lists(damage(), min_size=1, max_size=3))
@surface("results database: damaged or foreign files")
def test_fuzz_results_database(
    built: Path, tmp_path_factory: pytest.TempPathFactory, damages: list[tuple[str, object]]
) -> None:
    """Whatever is broken: every reader answers 0, 1 or a refusal; no hang, no blow-up, the
    database as it was, no password quoted."""
    db = _copy(built, tmp_path_factory.mktemp("db"))
    for what, value in damages:
        try:
            _damaged(db, what, value)
        except (sqlite3.DatabaseError, UnicodeDecodeError):
            break  # an earlier damage made the file unreadable to sqlite3 itself: that is the case
    for argv in _readers(db):
        with unchanged(db.parent):
            outcome = run_cli(argv).clean((0, 1, 2))
        no_sentinel([repr(value) for _, value in damages], [outcome.stdout, outcome.stderr])
