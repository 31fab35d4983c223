"""The results store: one interface, the SQL both backends share, and the run-at-once write.

:class:`ResultsStore` is what the rest of the harness sees.  SQLite
(:mod:`harness.resultsdb.sqlite`) and PostgreSQL (:mod:`harness.resultsdb.postgres`) differ only
in how they connect, how a write transaction starts (SQLite takes the write lock at ``BEGIN
IMMEDIATE``, so concurrent writers queue instead of failing half-way), how concurrent migrators
are serialised and their placeholder style; the statements are the same.

A run is written in one transaction and its ``complete`` flag set last in it: a process killed
mid-write leaves nothing visible (the transaction rolls back), and readers only ever see runs
whose flag is set.

The database is input like any file: what is read back is checked as a run's own files are
(a sample's value finite and not negative, its metadata an object, its time a time; a run's
record valid run.json), and a row that is not is a :class:`~harness.errors.ConfigError`
naming the database, the run and the row.  What is written is checked the same way first.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from harness.errors import ConfigError
from harness.redact import redact_url
from harness.resultsdb.cursor import Cursor
from harness.resultsdb.records import RunRecord, StoredRun
from harness.resultsdb.sampledata import joined, split
from harness.resultsdb.schema import VERSION_TABLE, check_version, pending
from harness.runfiles.runinfo import RunInfo
from harness.runfiles.samples import Sample, measured_value, timestamp_value
from harness.userfiles.jsonsafe import dumps, loads

__all__ = ["Cursor", "ResultsStore", "RunExistsInStore"]  # Cursor: where the backends import it from


class RunExistsInStore(ConfigError):
    """The run is in the database already (and replacing it was not asked for)."""


_RUN_COLUMNS = (
    "run_id, inventory_name, inventory_path, profile, started, finished, exitstatus, gate, "
    "argv, versions, run_json, source, sample_metadata, complete"
)


_SOURCES = ("run", "import")


def _number(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _checked(sample: Sample) -> Sample:
    """``sample`` if the database may hold it (what a reader accepts); ValueError otherwise."""
    measured_value(sample.metric, sample.unit, _number(sample.value))
    timestamp_value(sample.timestamp)
    return sample


def _text_or_none(value: object, what: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{what} {value!r} is not text")
    return None if value is None else redact_url(value)  # another writer's row may hold a URL's password


def _stored_run(where: str, row: Sequence[Any]) -> StoredRun:
    run_json, inventory_name, gate, source = row
    if not isinstance(run_json, str) or source not in _SOURCES:
        raise ConfigError(f"{where}: a run's row is damaged (record {type(run_json).__name__}, source {source!r})")
    info = RunInfo.from_json(run_json, where=f"{where}: run")
    try:
        return StoredRun(info, _text_or_none(inventory_name, "inventory"), _text_or_none(gate, "gate"), source)
    except ValueError as exc:
        raise ConfigError(f"{where}: run {info.run_id}: {exc}") from None


def _object(text: Any) -> Any:
    value = loads(text) if isinstance(text, str) else text
    if not isinstance(value, dict):
        raise ValueError("metadata: expected an object")
    return value


def _stored_sample(where: str, run_id: str, row: Sequence[Any]) -> Sample:
    seq, metric, value, unit, ts, meta, common = row
    try:
        metadata = joined(_object(common), _object(meta))
        record = {"metric": metric, "value": value, "unit": unit, "timestamp": ts, "metadata": metadata}
        if not isinstance(metric, str) or not isinstance(unit, str):
            raise ValueError("metric and unit must be text")
        return Sample.from_dict(record)
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        raise ConfigError(f"{where}: run {run_id}, sample {seq}: {exc}") from None


class ResultsStore(ABC):
    """A results database: runs written whole, read back for history and gates."""

    #: Where the store is, for messages (a PostgreSQL URL without its password).
    where: str

    # -- what a backend provides ---------------------------------------------------------------
    @abstractmethod
    def _transaction(self) -> AbstractContextManager[Cursor]:
        """A write transaction (committed on exit, rolled back on an exception)."""

    @abstractmethod
    def _reader(self) -> AbstractContextManager[Cursor]:
        """A cursor for reading (one consistent snapshot)."""

    @abstractmethod
    def _lock_for_migration(self, cur: Cursor) -> None:
        """Serialise concurrent migrators inside the migration transaction."""

    @abstractmethod
    def close(self) -> None: ...

    def _sql(self, statement: str) -> str:
        """A statement in the backend's placeholder style (the shared text uses ``?``)."""
        return statement

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- schema --------------------------------------------------------------------------------
    def migrate(self) -> list[int]:
        """Bring the schema up to date; the versions applied (none when it was current)."""
        with self._transaction() as cur:
            self._lock_for_migration(cur)
            cur.execute(VERSION_TABLE)
            cur.execute("SELECT MAX(version) FROM schema_version")
            found = self._version(cur.fetchone())
            check_version(found, self.where)
            applied = []
            for migration in pending(found):
                try:
                    migration.apply(cur, self._sql)
                except ValueError as exc:  # a row it cannot move: the transaction rolls back
                    raise ConfigError(
                        f"{self.where}: schema version {migration.version} not applied, nothing changed: {exc}"
                    ) from None
                applied.append(migration.version)
            if applied:
                cur.execute("DELETE FROM schema_version")
                cur.execute(self._sql("INSERT INTO schema_version (version) VALUES (?)"), (applied[-1],))
        return applied

    def _version(self, row: Any) -> int:
        value = row[0] if row else None
        if value is None:
            return 0
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"{self.where}: not a usable results database: schema version {value!r}")
        return value

    def schema_version(self) -> int:
        with self._reader() as cur:
            cur.execute("SELECT MAX(version) FROM schema_version")
            return self._version(cur.fetchone())

    # -- writing -------------------------------------------------------------------------------
    def write_run(self, record: RunRecord, *, replace: bool = False) -> None:
        """Write ``record`` whole, in one transaction; :class:`RunExistsInStore` if the run is
        there and ``replace`` is false (the import skips it; a re-used run id is refused)."""
        info = record.info
        q = self._sql
        try:
            samples = [_checked(s) for s in record.samples]
        except ValueError as exc:
            raise ConfigError(f"{self.where}: run {info.run_id} not written: {exc}") from None
        metadata = split([s.metadata for s in samples])
        with self._transaction() as cur:
            cur.execute(q("SELECT complete FROM runs WHERE run_id = ?"), (info.run_id,))
            if cur.fetchone() is not None:
                if not replace:
                    raise RunExistsInStore(f"{self.where}: run {info.run_id} is in the database already")
                cur.execute(q("DELETE FROM runs WHERE run_id = ?"), (info.run_id,))
            cur.execute(
                q(f"INSERT INTO runs ({_RUN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)"),
                (
                    info.run_id,
                    record.inventory_name,
                    info.inventory_path,
                    info.profile,
                    info.started,
                    info.finished,
                    info.exitstatus,
                    record.gate,
                    dumps(list(info.argv)),
                    dumps(dict(info.versions)),
                    info.to_json(),
                    record.source,
                    dumps(metadata.common, sort_keys=True),
                ),
            )
            cur.executemany(
                q("INSERT INTO sample_metadata (run_id, meta_id, metadata) VALUES (?, ?, ?)"),
                [(info.run_id, i, dumps(rest, sort_keys=True)) for i, rest in enumerate(metadata.rests)],
            )
            cur.executemany(
                q("INSERT INTO samples (run_id, seq, cell_key, metric, value, unit, ts, meta_id) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
                [
                    (info.run_id, i, s.cell, s.metric, _number(s.value), s.unit, s.timestamp, meta_id)
                    for i, (s, meta_id) in enumerate(zip(samples, metadata.ids, strict=True))
                ],
            )  # fmt: skip
            cur.executemany(
                q("INSERT INTO cells (run_id, cell_key, scenario, pair, mode, workload, impairment, verdict, "
                  "verdict_reason, repeats, provenance) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
                [
                    (info.run_id, c.key, c.identity["scenario"], c.identity["pair"], c.identity["mode"],
                     c.identity["workload"], c.identity["impairment"], c.verdict, c.verdict_reason, c.repeats,
                     dumps(dict(c.provenance), sort_keys=True))
                    for c in record.cells
                ],
            )  # fmt: skip
            cur.executemany(
                q("INSERT INTO predictions (run_id, cell_key, predicted_bw, predicted_iops, model_ratio, bottleneck) "
                  "VALUES (?, ?, ?, ?, ?, ?)"),
                [
                    (info.run_id, p.key, _number(p.predicted_bw), _number(p.predicted_iops),
                     _number(p.model_ratio), p.bottleneck)
                    for p in record.predictions
                ],
            )  # fmt: skip
            # Last: until this commits with the rest, no reader counts the run.
            cur.execute(q("UPDATE runs SET complete = 1 WHERE run_id = ?"), (info.run_id,))

    # -- reading -------------------------------------------------------------------------------
    def runs(self, *, inventory: str | None = None, last: int | None = None) -> list[StoredRun]:
        """Complete runs, oldest first (by start time, then id); ``last`` keeps the newest ones."""
        where, params = "complete = 1", []
        if inventory is not None:
            where += " AND inventory_name = ?"
            params.append(inventory)
        sql = f"SELECT run_json, inventory_name, gate, source FROM runs WHERE {where} "
        # COALESCE: both backends put a run without a start time (an old import) first.
        sql += "ORDER BY COALESCE(started, '') DESC, run_id DESC"
        if last is not None:
            sql += f" LIMIT {int(last)}"
        with self._reader() as cur:
            cur.execute(self._sql(sql), params)
            rows = cur.fetchall()
        return [_stored_run(self.where, row) for row in rows][::-1]

    def has_run(self, run_id: str) -> bool:
        """Whether run ``run_id`` is in the database (complete)."""
        with self._reader() as cur:
            cur.execute(self._sql("SELECT 1 FROM runs WHERE run_id = ? AND complete = 1"), (run_id,))
            return cur.fetchone() is not None

    def samples(self, run_id: str) -> list[Sample]:
        """Run ``run_id``'s samples in the order it recorded them (empty when not there)."""
        with self._reader() as cur:
            cur.execute(
                self._sql(
                    "SELECT s.seq, s.metric, s.value, s.unit, s.ts, m.metadata, r.sample_metadata FROM samples s "
                    "JOIN runs r ON r.run_id = s.run_id "
                    "JOIN sample_metadata m ON m.run_id = s.run_id AND m.meta_id = s.meta_id "
                    "WHERE s.run_id = ? AND r.complete = 1 ORDER BY s.seq"
                ),
                (run_id,),
            )
            rows = cur.fetchall()
        return [_stored_sample(self.where, run_id, row) for row in rows]

    def table_counts(self) -> dict[str, int]:
        """Rows per table of complete runs (for ``harness results`` and the tests)."""
        counts = {}
        with self._reader() as cur:
            for table in ("runs", "cells", "samples", "predictions"):
                cur.execute(
                    f"SELECT COUNT(*) FROM {table} t WHERE EXISTS "
                    "(SELECT 1 FROM runs r WHERE r.run_id = t.run_id AND r.complete = 1)"
                )
                counts[table] = int(cur.fetchone()[0])
        return counts
