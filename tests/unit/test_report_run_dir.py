"""reports/<run-id>/: run ids, the latest link, run.json, render_run and ``harness report``."""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.report import cli
from harness.report.run_dir import (
    LATEST,
    RUN_ID_PATTERN,
    RunDir,
    list_runs,
    load_comparison,
    new_run_id,
    render_run,
    update_latest,
)
from harness.report.run_info import RunInfo
from harness.samples import METRICS, Sample, SampleStore

RUN_ID = "20261121-101500-ab12"


def write_samples(run: RunDir, repeats: int = 2) -> None:
    samples = []
    for pair, placement, workload, bw in (
        ("single-az", "same-az", "randwrite-4k-nj8-qd1", 41.2),
        ("multi-az", "cross-az", "randwrite-4k-nj8-qd1", 25.6),
    ):
        for r in range(repeats):
            metadata: dict[str, Any] = {
                "scenario": "replicated_write",
                "pair": pair,
                "mode": "replicated",
                "workload": workload,
                "impairment": "none",
                "placement": placement,
                "run_id": run.run_id,
                "repeat": r,
                "verdict": "pass",
                "rtt_ms": 0.3,
            }
            samples += [Sample(m, v + r, METRICS[m], metadata) for m, v in (("bw", bw), ("iops", bw * 256))]
    SampleStore(run.samples_ndjson).append(samples)


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
    assert [p.name for p in (run.comparison_md, run.comparison_csv, run.comparison_html)] == [
        "comparison.md",
        "comparison.csv",
        "comparison.html",
    ]
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


# --------------------------------------------------------------------------------------------
# render_run


def test_render_run_writes_the_three_tables_from_samples(tmp_path: Path) -> None:
    root = tmp_path / "reports"
    run = RunDir.create(root, RUN_ID)
    write_samples(run)
    run.write_run_info(RunInfo(run_id=RUN_ID, inventory_name="lab", profile="quick"))
    update_latest(root, run)
    written = render_run(root / LATEST)
    assert [p.name for p in written] == ["comparison.md", "comparison.csv", "comparison.html"]
    assert all(p.parent == run.path.resolve() for p in written)
    md = run.comparison_md.read_text()
    assert f"# Comparison — run {RUN_ID}" in md and "- **profile**: quick" in md
    assert "41.7 ±1%" in md and "0.63×" in md  # medians of (41.2, 42.2) and (25.6, 26.6)
    rows = list(csv.DictReader(io.StringIO(run.comparison_csv.read_text())))
    assert {r["pair"]: float(r["bw_median"]) for r in rows} == {"single-az": 41.7, "multi-az": 26.1}
    assert "<table>" in run.comparison_html.read_text()
    assert not [p for p in run.path.iterdir() if p.name.endswith(".tmp")]
    # Re-rendering is idempotent.
    before = md
    render_run(run)
    assert run.comparison_md.read_text() == before


def test_render_run_without_run_json_uses_the_directory_name(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, RUN_ID)
    write_samples(run, repeats=1)
    render_run(run.path)
    comparison, info = load_comparison(run)
    assert info == RunInfo(run_id=RUN_ID)
    assert len(comparison.cells) == 2


def test_render_run_errors(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, RUN_ID)
    with pytest.raises(ConfigError, match=r"no samples\.ndjson"):
        render_run(run)
    run.samples_ndjson.write_text('{"metric": "bw"}\n')
    with pytest.raises(ConfigError, match=r"samples.ndjson:1: not a sample record"):
        render_run(run)
    with pytest.raises(ConfigError, match="no such run directory"):
        render_run(tmp_path / "nope")


# --------------------------------------------------------------------------------------------
# harness report RUN_DIR


def parse_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="harness report")
    cli.add_arguments(parser)
    return parser.parse_args(argv)


def test_cli_prints_markdown_and_written_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = RunDir.create(tmp_path, RUN_ID)
    write_samples(run)
    assert cli.run(parse_args(str(run.path))) == 0
    out = capsys.readouterr().out
    assert "## replicated_write" in out and "| randwrite-4k-nj8-qd1 |" in out
    assert f"written:\n  {run.comparison_md}\n  {run.comparison_csv}\n  {run.comparison_html}\n" in out
    assert run.comparison_html.exists()


def test_cli_text_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = RunDir.create(tmp_path, RUN_ID)
    write_samples(run)
    assert cli.run(parse_args(str(run.path), "--format", "text", "--width", "100")) == 0
    out = capsys.readouterr().out
    assert out.startswith("replicated_write: Bandwidth (MiB/s), median of 2 repeats\n")
    assert all(len(line) <= 100 for line in out.splitlines())


def test_cli_errors_are_clear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.run(parse_args(str(tmp_path / "nope"))) == 2
    assert "harness report: error:" in capsys.readouterr().err

    run = RunDir.create(tmp_path, RUN_ID)
    assert cli.run(parse_args(str(run.path))) == 2
    assert "no samples.ndjson" in capsys.readouterr().err

    write_samples(run)
    update_latest(tmp_path, run)
    assert cli.run(parse_args(str(tmp_path))) == 2
    assert f"try {tmp_path / LATEST}" in capsys.readouterr().err

    assert cli.run(parse_args(str(tmp_path / "20991231-000000-ffff"))) == 2
    assert "the newest run is" in capsys.readouterr().err
