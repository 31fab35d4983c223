"""The SQLite results store (harness.resultsdb.sqlite): the store contract, and SQLite's own settings."""

from __future__ import annotations

import math
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.report.results import RunResults
from harness.resultsdb.location import ResultsDb
from harness.resultsdb.records import record_of
from harness.resultsdb.sqlite import SqliteStore
from harness.runfiles.runinfo import RunInfo
from harness.runfiles.samples import METRICS, Sample
from tests.unit.resultsdb_contract import StoreContract


@pytest.fixture
def db(tmp_path: Path) -> ResultsDb:
    return ResultsDb(path=tmp_path / "results.sqlite")


class TestSqliteStore(StoreContract):
    pass


def test_the_database_is_in_wal_mode(tmp_path: Path) -> None:
    SqliteStore(tmp_path / "r.sqlite").close()
    with sqlite3.connect(tmp_path / "r.sqlite") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_file_that_is_no_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    path.write_text("these are notes, not a database\n" * 100)
    with pytest.raises(ConfigError, match="not a usable results database"):
        SqliteStore(path)


identity = st.sampled_from(["replicated_write", "latency_sweep"])
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
samples = st.builds(
    lambda metric, value, scenario, pair, extra, ts: Sample(
        metric,
        value,
        METRICS[metric],
        {"scenario": scenario, "pair": pair, "mode": "replicated", "workload": "w", "impairment": "none", **extra},
        ts,
    ),
    st.sampled_from(sorted(METRICS)),
    st.one_of(st.just(math.nan), st.floats(min_value=0, max_value=1e12)),
    identity,
    st.sampled_from(["single-az", "multi-az"]),
    st.dictionaries(st.sampled_from(["fio_version", "kernel", "note", "repeat"]), scalars, max_size=3),
    st.floats(min_value=0, max_value=4e9),
)


@settings(max_examples=40, deadline=None)
@given(st.lists(samples, min_size=1, max_size=30))
def test_any_samples_read_back_unchanged(values: list[Sample]) -> None:
    with tempfile.TemporaryDirectory() as tmp, SqliteStore(Path(tmp) / "r.sqlite") as store:
        store.write_run(record_of(RunInfo(run_id="r", inventory_name="lab"), RunResults(tuple(values))))
        back = store.samples("r")
    assert len(back) == len(values)
    for a, b in zip(values, back, strict=True):
        assert (a.metric, a.unit, a.timestamp) == (b.metric, b.unit, b.timestamp)
        assert (math.isnan(a.value) and math.isnan(b.value)) or a.value == b.value
        assert dict(b.metadata) == dict(a.metadata)
