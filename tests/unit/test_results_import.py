"""``harness results import``: existing run directories into the database; and ``--results-db`` values."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import ConfigError
from harness.resultsdb.importer import import_runs
from harness.resultsdb.location import ResultsDb, results_db
from harness.resultsdb.sqlite import SqliteStore
from tests.unit.baseline_runs import DATA, LATER, SINGLE


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    """A reports root holding the recorded runs (two with run.json, three without)."""
    root = tmp_path / "reports"
    shutil.copytree(DATA, root)
    return root


def test_runs_with_a_record_are_imported_once(reports: Path, tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "r.sqlite") as store:
        first = {o.run_id: o.status for o in import_runs(store, reports)}
        assert first == {
            SINGLE: "imported",
            LATER: "imported",
            "latency-sweep-repeats3": "skipped",
            "repeats3-a": "skipped",
            "repeats3-b": "skipped",
        }
        again = {o.run_id: o.status for o in import_runs(store, reports)}
        assert again[SINGLE] == again[LATER] == "present"
        assert [o.status for o in import_runs(store, reports / SINGLE, replace=True)] == ["replaced"]
        runs = store.runs()
    assert [r.run_id for r in runs] == [SINGLE, LATER] and {r.source for r in runs} == {"import"}


def test_a_run_without_samples_or_with_a_broken_record_is_skipped(reports: Path, tmp_path: Path) -> None:
    (reports / LATER / "samples.ndjson").unlink()
    (reports / SINGLE / "run.json").write_text("{not json")
    with SqliteStore(tmp_path / "r.sqlite") as store:
        outcomes = {o.run_id: o for o in import_runs(store, reports)}
        assert store.runs() == []
    assert outcomes[LATER].detail.startswith("no samples.ndjson")
    assert "not valid JSON" in outcomes[SINGLE].detail


def test_the_command_writes_the_reports_roots_database(reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["results", "import", str(reports)]) == 0
    out = capsys.readouterr().out
    assert f"imported  {SINGLE}: 114 samples, 17 cells" in out
    assert out.rstrip().endswith(f"{reports / 'results.sqlite'}: 2 imported, 3 skipped")
    assert main(["results", "status", "--reports", str(reports)]) == 0
    assert "inventory lab: 2 runs, newest 20261121-120300-70b8" in capsys.readouterr().out
    # One run directory: the database of the root it sits in.
    assert main(["results", "import", str(reports / SINGLE)]) == 0
    assert "1 present" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, ResultsDb(path=Path("reports/results.sqlite"))),
        ("", ResultsDb(path=Path("reports/results.sqlite"))),
        ("none", None),
        ("NONE", None),
        ("postgresql://ci@db/harness", ResultsDb(url="postgresql://ci@db/harness")),
        ("postgres://ci@db/harness", ResultsDb(url="postgres://ci@db/harness")),
        ("sqlite:///rel/r.sqlite", ResultsDb(path=Path("rel/r.sqlite"))),
        ("sqlite:////abs/r.sqlite", ResultsDb(path=Path("/abs/r.sqlite"))),
        ("/data/results.sqlite", ResultsDb(path=Path("/data/results.sqlite"))),
    ],
)
def test_results_db_values(value: str | None, expected: ResultsDb | None) -> None:
    assert results_db(value, Path("reports")) == expected


def test_an_unknown_database_scheme_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"mysql://\.\.\.: not a database this harness writes") as caught:
        results_db("mysql://user:pw@db/x", Path("reports"))
    assert "pw" not in str(caught.value)
