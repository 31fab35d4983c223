"""What every results store must do, whatever the backend: the same tests for SQLite and PostgreSQL.

A backend's test module subclasses :class:`StoreContract` and provides the ``db`` fixture: a
fresh, empty :class:`~harness.resultsdb.location.ResultsDb` per test (a new SQLite file, a new
PostgreSQL database).  Runs are the recorded lab runs in tests/data/runs, with variants made by
scaling in code (tests/unit/baseline_runs.py).
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import signal
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any, overload

import pytest

from harness.errors import ConfigError, InfraError
from harness.report.results import RunResults
from harness.resultsdb.cursor import Cursor, Placeholders
from harness.resultsdb.location import ResultsDb
from harness.resultsdb.records import CellRow, RunRecord, record_of
from harness.resultsdb.schema import MIGRATIONS, SCHEMA_VERSION, NewerSchema
from harness.resultsdb.store import RunExistsInStore
from harness.runfiles.runinfo import RunInfo
from harness.runfiles.samples import Sample
from harness.userfiles.jsonsafe import dumps, loads
from tests.unit.baseline_runs import LATER, SINGLE, load, scaled

__all__ = ["StoreContract", "run_record"]


def run_record(run_id: str, samples: Sequence[Sample], *, started: str, exitstatus: int = 0) -> RunRecord:
    info = RunInfo(run_id=run_id, inventory_name="lab", profile="quick", started=started, exitstatus=exitstatus)
    return record_of(info, RunResults(tuple(samples)))


def _same(a: Sample, b: Sample) -> bool:
    both_nan = math.isnan(a.value) and math.isnan(b.value)
    return (a.metric, a.unit, dict(a.metadata), a.timestamp) == (b.metric, b.unit, dict(b.metadata), b.timestamp) and (
        both_nan or a.value == b.value
    )


class _KilledPartWay(Sequence[Sample]):
    """Samples that SIGKILL their own process when the store is half-way through reading them."""

    def __init__(self, samples: Sequence[Sample]) -> None:
        self._samples = list(samples)

    def __len__(self) -> int:
        return len(self._samples)

    @overload
    def __getitem__(self, i: int) -> Sample: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Sample]: ...
    def __getitem__(self, i: int | slice) -> Sample | Sequence[Sample]:
        return self._samples[i]

    def __iter__(self) -> Iterator[Sample]:
        for n, sample in enumerate(self._samples):
            if n == len(self._samples) // 2:
                os.kill(os.getpid(), signal.SIGKILL)
            yield sample


def _write_and_die(db: ResultsDb) -> None:
    record = run_record("killed", load(SINGLE), started="2026-11-21T11:05:01+00:00")
    with db.open() as store:
        store.write_run(RunRecord(record.info, _KilledPartWay(record.samples), record.cells))


def _write_one(db: ResultsDb, index: int) -> None:
    samples = scaled(load(SINGLE), 1 + index / 100)
    with db.open() as store:
        store.write_run(run_record(f"w{index:02d}", samples, started=f"2026-11-22T10:{index:02d}:00+00:00"))


def _in_processes(target: Any, db: ResultsDb, count: int) -> list[int | None]:
    ctx = multiprocessing.get_context("spawn")  # no inherited connections or locks
    procs = [ctx.Process(target=target, args=(db, i)) for i in range(count)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    return [p.exitcode for p in procs]


def _as_old_schema(cur: Cursor, q: Placeholders, run_id: str, samples: Sequence[Sample], version: int) -> None:
    """Turn the database back into what ``version`` of the schema wrote: every sample row with
    its whole metadata, no table of distinct metadata (and, at version 1, no indexes)."""
    cur.execute("DROP TABLE sample_metadata")
    cur.execute("ALTER TABLE runs DROP COLUMN sample_metadata")
    cur.execute("DROP TABLE samples")
    cur.execute(MIGRATIONS[0].statements[2])  # version 1's samples table, as it made it
    if version >= 2:
        cur.execute(MIGRATIONS[1].statements[0])  # the samples' index went with the table
    else:
        cur.execute("DROP INDEX runs_by_inventory")
    cur.executemany(
        q("INSERT INTO samples (run_id, seq, cell_key, metric, value, unit, ts, metadata) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
        [
            (run_id, i, s.cell, s.metric, None if math.isnan(s.value) else s.value, s.unit, s.timestamp,
             dumps(s.metadata, sort_keys=True))
            for i, s in enumerate(samples)
        ],
    )  # fmt: skip
    cur.execute(q("UPDATE schema_version SET version = ?"), (version,))


def _raw(db: ResultsDb, sql: str) -> tuple[Any, ...]:
    """One row of ``sql`` read past the store (which would migrate on opening)."""
    if db.url is None:
        assert db.path is not None
        with contextlib.closing(sqlite3.connect(db.path)) as conn:
            return tuple(conn.execute(sql).fetchone())
    import psycopg

    with psycopg.connect(db.url) as conn:
        row = conn.execute(sql).fetchone()
        assert row is not None
        return tuple(row)


class StoreContract:
    """The store tests; a subclass gives the ``db`` fixture."""

    def test_an_empty_database_gets_the_current_schema_once(self, db: ResultsDb) -> None:
        with db.open() as store:
            assert store.schema_version() == SCHEMA_VERSION
            assert store.migrate() == []
            assert store.runs() == []

    def test_a_run_reads_back_as_it_was_written(self, db: ResultsDb) -> None:
        samples = load(SINGLE)
        record = run_record(SINGLE, samples, started="2026-11-21T11:05:01+00:00")
        with db.open() as store:
            store.write_run(record)
        with db.open() as store:  # a new connection: it was committed
            (run,) = store.runs()
            back = store.samples(SINGLE)
            counts = store.table_counts()
        assert run.run_id == SINGLE and run.inventory_name == "lab" and run.info == record.info
        assert run.source == "run" and run.good
        assert len(back) == len(samples) and all(_same(a, b) for a, b in zip(samples, back, strict=True))
        assert counts == {"runs": 1, "cells": len(record.cells), "samples": len(samples), "predictions": 0}

    def test_runs_come_oldest_first_and_last_keeps_the_newest(self, db: ResultsDb) -> None:
        with db.open() as store:
            store.write_run(run_record("b", load(LATER), started="2026-11-21T12:03:00+00:00"))
            store.write_run(run_record("a", load(SINGLE), started="2026-11-21T11:05:01+00:00"))
            store.write_run(run_record("c", load(SINGLE), started="2026-11-22T09:00:00+00:00", exitstatus=2))
            assert [r.run_id for r in store.runs()] == ["a", "b", "c"]
            assert [r.run_id for r in store.runs(last=2)] == ["b", "c"]
            assert [r.run_id for r in store.runs(inventory="other")] == []
            assert [r.good for r in store.runs()] == [True, True, False]  # exit 2: interrupted

    def test_a_run_id_is_written_once_unless_replaced(self, db: ResultsDb) -> None:
        first = run_record("r", load(SINGLE), started="2026-11-21T11:05:01+00:00")
        second = run_record("r", scaled(load(SINGLE), 2.0), started="2026-11-21T11:05:01+00:00")
        with db.open() as store:
            store.write_run(first)
            with pytest.raises(RunExistsInStore, match="run r is in the database already"):
                store.write_run(second)
            store.write_run(second, replace=True)
            bw = [s.value for s in store.samples("r") if s.metric == "bw"]
            assert bw == [s.value for s in second.samples if s.metric == "bw"]
            assert store.table_counts()["runs"] == 1

    def test_a_write_that_fails_half_way_leaves_nothing(self, db: ResultsDb) -> None:
        record = run_record("broken", load(SINGLE), started="2026-11-21T11:05:01+00:00")
        # The samples go in, then a second row for the same cell breaks the cells' primary key.
        twice = RunRecord(record.info, record.samples, (*record.cells, record.cells[0]))
        with db.open() as store:
            with pytest.raises(InfraError, match="nothing written"):
                store.write_run(twice)
            assert store.runs() == [] and not store.has_run("broken")
            assert store.table_counts() == {"runs": 0, "cells": 0, "samples": 0, "predictions": 0}
            store.write_run(record)  # and the store is usable afterwards
            assert store.has_run("broken")

    def test_a_writer_killed_mid_transaction_leaves_no_run(self, db: ResultsDb) -> None:
        proc = multiprocessing.get_context("spawn").Process(target=_write_and_die, args=(db,))
        proc.start()
        proc.join(120)
        assert proc.exitcode == -signal.SIGKILL
        with db.open() as store:
            assert store.runs() == [] and store.samples("killed") == []
            with store._reader() as cur:  # not even a row flagged incomplete
                cur.execute("SELECT COUNT(*) FROM runs")
                assert cur.fetchone()[0] == 0

    def test_concurrent_writers_all_land(self, db: ResultsDb) -> None:
        # Six processes open the same new database at once (each migrating it) and write.
        assert _in_processes(_write_one, db, 6) == [0] * 6
        with db.open() as store:
            assert [r.run_id for r in store.runs()] == [f"w{i:02d}" for i in range(6)]
            assert store.table_counts()["samples"] == 6 * len(load(SINGLE))
            assert store.schema_version() == SCHEMA_VERSION

    @pytest.mark.parametrize("version", [1, 2])
    def test_an_older_schema_is_migrated_with_its_runs(self, db: ResultsDb, version: int) -> None:
        samples = load(SINGLE)
        with db.open() as store:
            store.write_run(run_record("old", samples, started="2026-11-21T11:05:01+00:00"))
            counts = store.table_counts()
            with store._transaction() as cur:
                _as_old_schema(cur, store._sql, "old", samples, version)
        with db.open() as store:  # opening migrates
            assert store.schema_version() == SCHEMA_VERSION
            assert store.migrate() == []
            assert [r.run_id for r in store.runs()] == ["old"]
            back = store.samples("old")
            assert store.table_counts() == counts
            with store._reader() as cur:
                cur.execute("SELECT COUNT(*) FROM sample_metadata")
                distinct = cur.fetchone()[0]
                cur.execute("SELECT sample_metadata FROM runs")
                common = loads(cur.fetchone()[0])
        assert len(back) == len(samples) and all(_same(a, b) for a, b in zip(samples, back, strict=True))
        # a cell's metrics share one row; what every sample has (its run, the protocol) is in runs
        assert distinct == len({dumps(s.metadata, sort_keys=True) for s in samples}) < len(samples)
        assert common["run_id"] == SINGLE and common["protocol"] == "C"

    def test_a_migration_that_meets_a_damaged_row_changes_nothing(self, db: ResultsDb) -> None:
        samples = load(SINGLE)
        with db.open() as store:
            store.write_run(run_record("old", samples, started="2026-11-21T11:05:01+00:00"))
            with store._transaction() as cur:
                _as_old_schema(cur, store._sql, "old", samples, 2)
                cur.execute("UPDATE samples SET metadata = '{nope' WHERE seq = 3")
        with pytest.raises(ConfigError, match="run old, sample 3: metadata is not JSON"):
            db.open()
        # the database as the migration found it: version 2, every sample with its metadata
        assert _raw(db, "SELECT MAX(version) FROM schema_version") == (2,)
        assert _raw(db, "SELECT COUNT(*), COUNT(metadata) FROM samples") == (len(samples), len(samples))

    def test_a_newer_schema_is_refused(self, db: ResultsDb) -> None:
        with db.open() as store, store._transaction() as cur:
            cur.execute(f"UPDATE schema_version SET version = {SCHEMA_VERSION + 1}")
        with pytest.raises(NewerSchema, match="newer than this harness"):
            db.open()

    def test_cells_keep_verdicts_and_provenance(self, db: ResultsDb) -> None:
        record = run_record(SINGLE, load(SINGLE), started="2026-11-21T11:05:01+00:00")
        with db.open() as store:
            store.write_run(record)
            with store._reader() as cur:
                cur.execute("SELECT cell_key, verdict, provenance FROM cells ORDER BY cell_key")
                rows = cur.fetchall()
        by_key = {c.key: c for c in record.cells}
        assert {r[0] for r in rows} == set(by_key)
        for key, verdict, provenance in rows:
            cell: CellRow = by_key[key]
            assert verdict == cell.verdict
            assert '"fio_version"' in provenance or "fio_version" not in cell.provenance
