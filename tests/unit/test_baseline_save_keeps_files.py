"""``harness baseline save NAME``: a directory of that name is never deleted, with or without --overwrite.

Baselines are committed to git and people keep notes beside them: only the two files a
baseline owns (baseline.json, samples.ndjson) are ever replaced.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.runfiles.rundir import RunDir, update_latest
from tests.unit.baseline_runs import LATER, SINGLE, load, write_run

NOTES = "# why main is what it is\nkernel 6.1.0-27, DRBD 8.4.11\n"


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    root = tmp_path / "reports"
    write_run(root, SINGLE, load(SINGLE), run_json_from=SINGLE)
    write_run(root, LATER, load(LATER), run_json_from=LATER)
    update_latest(root, RunDir.open(root / LATER))
    return root


def save(reports: Path, *args: str) -> int:
    return main(["baseline", "save", "main", *args, "--reports", str(reports)])


def target(reports: Path) -> Path:
    return reports / "baselines" / "lab" / "main"


def user_files(directory: Path) -> None:
    directory.mkdir(parents=True)
    (directory / "NOTES.md").write_text(NOTES)
    (directory / "plots").mkdir()
    (directory / "plots" / "bw.png").write_bytes(b"\x89PNG by hand")


def assert_user_files(directory: Path) -> None:
    assert (directory / "NOTES.md").read_text() == NOTES
    assert (directory / "plots" / "bw.png").read_bytes() == b"\x89PNG by hand"


def test_a_directory_that_is_no_baseline_is_left_alone(reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    user_files(target(reports))
    assert save(reports, SINGLE) == 2
    assert sorted(p.name for p in target(reports).iterdir()) == ["NOTES.md", "plots"]
    assert_user_files(target(reports))
    assert capsys.readouterr().err == (
        f"error: {target(reports)} exists and holds no baseline (NOTES.md, plots); nothing was changed: "
        "choose another name, or pass --overwrite to save the baseline there (those files are kept)\n"
    )


def test_overwrite_saves_beside_files_that_are_not_the_baselines(
    reports: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user_files(target(reports))
    assert save(reports, SINGLE, "--overwrite") == 0
    assert sorted(p.name for p in target(reports).iterdir()) == ["NOTES.md", "baseline.json", "plots", "samples.ndjson"]
    assert_user_files(target(reports))
    assert "kept (not part of the baseline): NOTES.md, plots" in capsys.readouterr().out


def test_overwriting_a_baseline_replaces_only_its_own_files(reports: Path) -> None:
    assert save(reports, SINGLE) == 0
    (target(reports) / "NOTES.md").write_text(NOTES)
    (target(reports) / "plots").mkdir()
    (target(reports) / "plots" / "bw.png").write_bytes(b"\x89PNG by hand")
    assert save(reports, LATER) == 2  # without --overwrite: refused, the baseline stays
    assert json.loads((target(reports) / "baseline.json").read_text())["run_id"] == SINGLE
    assert save(reports, LATER, "--overwrite") == 0
    assert json.loads((target(reports) / "baseline.json").read_text())["run_id"] == LATER
    assert_user_files(target(reports))
    assert not [p.name for p in target(reports).parent.iterdir() if p.name.startswith(".")]  # no temp left


def test_a_file_in_the_way_is_never_replaced(reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target(reports).parent.mkdir(parents=True)
    target(reports).write_text(NOTES)
    assert save(reports, SINGLE, "--overwrite") == 2
    assert target(reports).read_text() == NOTES
    assert capsys.readouterr().err == (
        f"error: {target(reports)} exists and is not a directory; nothing was changed: "
        "choose another name or move it away\n"
    )
