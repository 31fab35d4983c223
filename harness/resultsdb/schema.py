"""The results database's schema, as numbered migrations, and how a store is brought up to date.

One schema for SQLite and PostgreSQL: only types both understand (``TEXT``, ``INTEGER``,
``DOUBLE PRECISION``; JSON kept as ``TEXT``), natural primary keys (no autoincrement, whose
spelling differs), ``?`` placeholders (the PostgreSQL store rewrites them).  A database records
its version in ``schema_version``; :func:`migrate` applies, in one transaction, every migration
newer than that.  A database written by a newer harness (a version this one does not know) is
refused rather than written with a schema it does not understand.

Tables (every one keyed by ``run_id``; a run's rows are written in one transaction):

``runs``
    one row per run: run.json's fields, the whole record (``run_json``), the baseline gate's
    verdict when the run was gated, where the row came from (``source``: ``run`` or ``import``)
    and ``complete``, set last in the writing transaction; readers see complete runs only.
``cells``
    per cell of a run: its identity, verdict (pass / inconclusive / fail) and reason, number of
    repeats and provenance (fio, kernel, DRBD versions, protocol, instance types, placement).
``samples``
    every :class:`~harness.runfiles.samples.Sample` of the run, in file order (``seq``); ``value`` is
    ``NULL`` where fio reported no number (NaN in memory); its metadata is the run's
    ``runs.sample_metadata`` (what every sample of the run shares) joined with the
    ``sample_metadata`` row ``meta_id`` names (:mod:`harness.resultsdb.sampledata`).
``sample_metadata``
    each distinct rest of a run's samples' metadata, once.
``predictions``
    the model's prediction for a cell (medians of ``predicted_bw``, ``predicted_iops``,
    ``model_ratio``) and the limit it found binding.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from harness.errors import ConfigError
from harness.resultsdb.cursor import Cursor, Placeholders
from harness.resultsdb.sampledata import move_into_tables

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "VERSION_TABLE", "Migration", "NewerSchema", "check_version", "pending"]


@dataclass(frozen=True)
class Migration:
    """The statements that take a database from ``version - 1`` to ``version``."""

    version: int
    what: str
    statements: tuple[str, ...]
    #: what moves the rows into the new shape, after the statements (in the same transaction)
    upgrade: Callable[[Cursor, Placeholders], None] | None = None

    def apply(self, cur: Cursor, q: Placeholders) -> None:
        for statement in self.statements:
            cur.execute(statement)
        if self.upgrade is not None:
            self.upgrade(cur, q)


MIGRATIONS: Final[tuple[Migration, ...]] = (
    Migration(
        1,
        "runs, cells, samples and predictions",
        (
            """CREATE TABLE runs (
                run_id TEXT PRIMARY KEY,
                inventory_name TEXT,
                inventory_path TEXT,
                profile TEXT,
                started TEXT,
                finished TEXT,
                exitstatus INTEGER,
                gate TEXT,
                argv TEXT NOT NULL,
                versions TEXT NOT NULL,
                run_json TEXT NOT NULL,
                source TEXT NOT NULL,
                complete INTEGER NOT NULL DEFAULT 0
            )""",
            """CREATE TABLE cells (
                run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
                cell_key TEXT NOT NULL,
                scenario TEXT NOT NULL,
                pair TEXT NOT NULL,
                mode TEXT NOT NULL,
                workload TEXT NOT NULL,
                impairment TEXT NOT NULL,
                verdict TEXT,
                verdict_reason TEXT,
                repeats INTEGER NOT NULL,
                provenance TEXT NOT NULL,
                PRIMARY KEY (run_id, cell_key)
            )""",
            """CREATE TABLE samples (
                run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
                seq INTEGER NOT NULL,
                cell_key TEXT NOT NULL,
                metric TEXT NOT NULL,
                value DOUBLE PRECISION,
                unit TEXT NOT NULL,
                ts DOUBLE PRECISION NOT NULL,
                metadata TEXT NOT NULL,
                PRIMARY KEY (run_id, seq)
            )""",
            """CREATE TABLE predictions (
                run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
                cell_key TEXT NOT NULL,
                predicted_bw DOUBLE PRECISION,
                predicted_iops DOUBLE PRECISION,
                model_ratio DOUBLE PRECISION,
                bottleneck TEXT,
                PRIMARY KEY (run_id, cell_key)
            )""",
        ),
    ),
    Migration(
        2,
        "indexes for history queries (a cell's metric across runs; an inventory's runs by time)",
        (
            "CREATE INDEX samples_by_cell ON samples (cell_key, metric)",
            "CREATE INDEX runs_by_inventory ON runs (inventory_name, started)",
        ),
    ),
    Migration(
        3,
        "a run's sample metadata stored once: what its samples share in runs, each distinct rest once",
        (
            """CREATE TABLE sample_metadata (
                run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
                meta_id INTEGER NOT NULL,
                metadata TEXT NOT NULL,
                PRIMARY KEY (run_id, meta_id)
            )""",
            "ALTER TABLE runs ADD COLUMN sample_metadata TEXT NOT NULL DEFAULT '{}'",
            "ALTER TABLE samples ADD COLUMN meta_id INTEGER",
        ),
        move_into_tables,
    ),
)

#: The version this harness writes and reads.
SCHEMA_VERSION: Final = MIGRATIONS[-1].version

#: Made before any migration, so the version can be read (and locked) on an empty database.
VERSION_TABLE: Final = "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"


class NewerSchema(ConfigError):
    """The database was written by a newer harness."""


def check_version(found: int, where: str) -> None:
    """Refuse a database whose schema is newer than :data:`SCHEMA_VERSION`."""
    if found > SCHEMA_VERSION:
        raise NewerSchema(
            f"{where}: results database schema version {found} is newer than this harness's "
            f"{SCHEMA_VERSION}; upgrade the harness (or point --results-db elsewhere)"
        )


def pending(found: int, migrations: Sequence[Migration] = MIGRATIONS) -> list[Migration]:
    """The migrations a database at version ``found`` still needs, in order."""
    return [m for m in migrations if m.version > found]
