"""reports/<run-id>/: run ids, run directories, the latest link, and run.json (the run's record)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.runfiles.rundir import LATEST, RunDir, RunExists, list_runs, update_latest
from harness.runfiles.runid import GENERATED_RUN_ID as RUN_ID_PATTERN
from harness.runfiles.runid import new_run_id
from harness.runfiles.runinfo import RunInfo

from .baseline_runs import DATA, SINGLE

RUN_ID = "20261121-101500-ab12"


# --------------------------------------------------------------------------------------------
# Run ids and directories


def test_new_run_id_format() -> None:
    assert RUN_ID_PATTERN.match(new_run_id())
    fixed = datetime(2026, 11, 21, 11, 15, 0, tzinfo=timezone(timedelta(hours=1)))
    run_id = new_run_id(fixed)
    assert run_id.startswith("20261121-101500-")  # UTC
    assert RUN_ID_PATTERN.match(run_id)


@given(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2999, 12, 31), timezones=st.just(UTC)))
def test_run_ids_sort_by_time(when: datetime) -> None:
    earlier, later = new_run_id(when), new_run_id(when + timedelta(seconds=1))
    assert earlier[:15] < later[:15]


def test_create_paths_and_collisions(tmp_path: Path) -> None:
    root = tmp_path / "reports"
    run = RunDir.create(root, RUN_ID)
    assert run.path == root / RUN_ID and run.path.is_dir() and run.run_id == RUN_ID
    assert run.junit_xml == run.path / "junit.xml"
    assert run.samples_ndjson == run.path / "samples.ndjson"
    assert run.run_json == run.path / "run.json"
    assert [p.relative_to(run.path) for p in (run.comparison_md, run.comparison_csv, run.report_html)] == [
        Path("comparison.md"),
        Path("comparison.csv"),
        Path("report.html"),
    ]
    assert run.plots_dir == run.path / "plots" and run.series_ndjson == run.path / "series.ndjson"
    assert run.read_series() == []  # a run without series.ndjson (older runs) has none
    with pytest.raises(ConfigError, match="already exists"):
        RunDir.create(root, RUN_ID)
    generated = {RunDir.create(root).run_id for _ in range(5)}
    assert len(generated) == 5 and all(RUN_ID_PATTERN.match(r) for r in generated)


@pytest.mark.parametrize("bad", ["../x", "a/b", "", ".hidden", "latest", "a b"])
def test_create_refuses_unsafe_ids(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ConfigError):
        RunDir.create(tmp_path, bad)


def test_open_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such run directory"):
        RunDir.open(tmp_path / "nope")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="not a directory"):
        RunDir.open(tmp_path / "file")


# --------------------------------------------------------------------------------------------
# latest


def test_update_latest_is_relative_and_replaced(tmp_path: Path) -> None:
    root = tmp_path / "reports"
    first = RunDir.create(root, "20261121-101500-aaaa")
    second = RunDir.create(root, "20261121-101600-bbbb")
    link = update_latest(root, first)
    assert link == root / LATEST and link.is_symlink()
    assert os.readlink(link) == first.run_id  # relative: the tree can be moved
    update_latest(root, second)
    assert os.readlink(link) == second.run_id
    assert link.resolve() == second.path.resolve()
    assert sorted(p.name for p in root.iterdir()) == [first.run_id, second.run_id, LATEST]  # no temp links left
    moved = tmp_path / "moved"
    root.rename(moved)
    assert (moved / LATEST).resolve() == (moved / second.run_id).resolve()


def test_update_latest_refuses_a_real_directory(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, RUN_ID)
    (tmp_path / LATEST).mkdir()
    with pytest.raises(ConfigError, match="not a symlink"):
        update_latest(tmp_path, run)


def test_list_runs(tmp_path: Path) -> None:
    assert list_runs(tmp_path / "missing") == []
    b = RunDir.create(tmp_path, "20261121-101600-bbbb")
    a = RunDir.create(tmp_path, "20261121-101500-aaaa")
    custom = RunDir.create(tmp_path, "nightly-42")
    custom.write_run_info(RunInfo(run_id="nightly-42"))
    (tmp_path / "baselines").mkdir()
    (tmp_path / "README.md").write_text("x")
    update_latest(tmp_path, b)
    assert [r.run_id for r in list_runs(tmp_path)] == [a.run_id, b.run_id, "nightly-42"]


# --------------------------------------------------------------------------------------------
# run.json


def test_run_info_round_trip_keeps_unknown_keys(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, RUN_ID)
    assert run.read_run_info() is None
    info = RunInfo(
        run_id=RUN_ID,
        inventory_path="inventories/lab.yaml",
        inventory_name="lab",
        profile="quick",
        started="2026-11-21T10:15:00Z",
        argv=("pytest", "scenarios/"),
        versions={"harness": "0.1.0"},
    )
    run.write_run_info(info)
    assert run.read_run_info() == info
    data = json.loads(run.run_json.read_text())
    data["ci_job"] = "12345"
    run.run_json.write_text(json.dumps(data))
    again = run.read_run_info()
    assert again is not None and again.extra == {"ci_job": "12345"}
    assert again.to_dict()["ci_job"] == "12345"


@pytest.mark.parametrize("text", ["{", "[]", '{"profile": "quick"}', '{"run_id": "x", "argv": "pytest"}'])
def test_bad_run_json(tmp_path: Path, text: str) -> None:
    run = RunDir.create(tmp_path, RUN_ID)
    run.run_json.write_text(text)
    with pytest.raises(ConfigError, match=r"run\.json"):
        run.read_run_info()


def test_run_json_has_one_key_set(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, RUN_ID)
    run.write_run_info(RunInfo(run_id=RUN_ID, exitstatus=1))
    assert sorted(json.loads(run.run_json.read_text())) == [
        "argv",
        "clock_offsets",
        "exitstatus",
        "finished",
        "interrupted",
        "inventory_name",
        "inventory_path",
        "profile",
        "run_id",
        "started",
        "versions",
    ]


def test_a_run_json_of_an_older_harness_reads_as_what_it_means() -> None:
    # tests/data/runs/20261121-110501-f674/run.json as the plugin wrote it before run.json had one
    # writer: the inventory file as `inventory`, `started` as a Unix time, no finished or versions.
    legacy = (DATA / SINGLE / "run.json").read_text()
    info = RunInfo.from_json(legacy)
    assert info.inventory_path == "/work/main/inventories/lab.yaml"
    assert info.inventory_name == "lab" and info.profile == "quick" and info.exitstatus == 0
    assert info.started == "2026-11-21T11:05:01+00:00"  # the run id's own time
    assert info.finished is None and dict(info.versions) == {}
    assert info.extra == {}
    # Written again, it has the one key set: nothing of the old names survives, nothing is lost.
    again = json.loads(info.to_json())
    assert "inventory" not in again and again["inventory_path"] == info.inventory_path
    assert RunInfo.from_json(info.to_json()) == info


def test_the_current_key_wins_over_its_old_name() -> None:
    info = RunInfo.from_dict({"run_id": "r", "inventory": "old.yaml", "inventory_path": "new.yaml"})
    assert info.inventory_path == "new.yaml" and "inventory" not in info.to_dict()


@pytest.mark.parametrize(
    "data",
    [{"run_id": "r", "started": True}, {"run_id": "r", "finished": 1e300}, {"run_id": "r", "exitstatus": "0"}],
)
def test_bad_times_and_statuses_are_clear_errors(data: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match=r"run\.json: (started|finished|exitstatus)"):
        RunInfo.from_dict(data)


_TEXT = st.text(st.characters(codec="utf-8"), max_size=12)
_OPTIONAL = st.none() | _TEXT


@given(
    st.builds(
        RunInfo,
        run_id=_TEXT.filter(bool),
        inventory_path=_OPTIONAL,
        inventory_name=_OPTIONAL,
        profile=_OPTIONAL,
        started=_OPTIONAL,
        finished=_OPTIONAL,
        argv=st.lists(_TEXT, max_size=4).map(tuple),
        versions=st.dictionaries(_TEXT, _TEXT, max_size=3),
        exitstatus=st.none() | st.integers(0, 255),
        extra=st.dictionaries(_TEXT.filter(lambda k: k not in RunInfo.__dataclass_fields__), _TEXT, max_size=2),
    )
)
def test_what_is_written_reads_back_the_same(info: RunInfo) -> None:
    assert RunInfo.from_json(info.to_json()) == info


def test_a_run_directory_is_never_reused(tmp_path: Path) -> None:
    taken = RunDir.create(tmp_path, "nightly-42")
    (taken.path / "NOTES.md").write_text("mine\n")
    with pytest.raises(RunExists, match="nightly-42: a run with this id already exists"):
        RunDir.create(tmp_path, "nightly-42")
    with pytest.raises(RunExists):
        RunDir.unused(tmp_path, "nightly-42")
    assert (taken.path / "NOTES.md").read_text() == "mine\n"
    # A run that writes no reports gets an id no run has used, and a directory only when it needs one.
    later = RunDir.unused(tmp_path)
    assert not later.path.exists() and RUN_ID_PATTERN.match(later.run_id)
    assert later.ensure().path.is_dir() and later.ensure() == later
    # A worker is handed the id; the id rule still holds.
    assert RunDir.of(tmp_path, "nightly-42") == taken
    with pytest.raises(ConfigError, match="not allowed"):
        RunDir.of(tmp_path, "../escape")
