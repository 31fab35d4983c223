"""Saved baselines on disk, what RUN_OR_BASELINE refers to, and ``harness compare`` / ``harness baseline``."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.baseline.gate import COMPARE_MD, EXIT_REGRESSED
from harness.baseline.refs import resolve_reference, resolve_run
from harness.baseline.store import BaselineExists, BaselineInfo, BaselineStore, validate_name
from harness.cli import main
from harness.errors import ConfigError
from harness.runfiles.rundir import RunDir, update_latest
from harness.runfiles.samples import read_samples
from tests.unit.baseline_runs import LATER, SINGLE, cell_is, load, scaled, write_run
from tests.unit.test_baseline_tolerance import INVENTORY

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def save_run(store: BaselineStore, name: str, path: Path, **options: Any) -> BaselineInfo:
    """Save the run at ``path`` as ``harness baseline save`` does: its samples and run.json, as read."""
    run = RunDir.open(path)
    return store.save(name, run, read_samples(run.samples_ndjson), run.read_run_info(), **options)


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    root = tmp_path / "reports"
    write_run(root, SINGLE, load(SINGLE), run_json_from=SINGLE)
    write_run(root, LATER, load(LATER), run_json_from=LATER)
    update_latest(root, RunDir.open(root / LATER))
    return root


# --------------------------------------------------------------------------------------------
# Names


@pytest.mark.parametrize("name", ["main", "v1.2", "pre_kernel-6.12", "A" * 64])
def test_plain_names_are_accepted(name: str) -> None:
    assert validate_name(name) == name


@pytest.mark.parametrize("name", ["", "..", ".", "../x", "a/b", "-x", ".hidden", "a b", "latest", "A" * 65, "é"])
def test_names_that_could_escape_or_confuse_are_refused(name: str) -> None:
    with pytest.raises(ConfigError, match=r"reports/baselines|reserved"):
        validate_name(name)


@given(st.text(max_size=80))
def test_an_accepted_name_is_one_directory_below_the_inventory(name: str) -> None:
    try:
        validate_name(name)
    except ConfigError:
        return
    store = BaselineStore(Path("/r"))
    assert store.path("lab", name).parent == Path("/r/baselines/lab")


# --------------------------------------------------------------------------------------------
# Store


def test_save_load_list_round_trip(reports: Path) -> None:
    store = BaselineStore(reports)
    info = save_run(store, "main", reports / SINGLE, exitstatus=0, now=NOW)
    assert info.inventory == "lab"  # from the run's run.json
    assert info.path == reports / "baselines" / "lab" / "main"
    assert (info.cells, info.samples, info.run_id) == (17, len(load(SINGLE)), SINGLE)
    assert info.saved == "2026-11-21T12:00:00+00:00"
    assert info.samples_ndjson.read_bytes() == (reports / SINGLE / "samples.ndjson").read_bytes()
    again = store.load("lab", "main")
    assert again.to_dict() == info.to_dict()
    assert again.run is not None and again.run.profile == "quick"
    assert [b.name for b in store.saved()] == ["main"] and store.saved("other") == []
    assert store.find("main").path == info.path


def test_saving_twice_refuses_unless_overwriting(reports: Path) -> None:
    store = BaselineStore(reports)
    save_run(store, "main", reports / SINGLE, now=NOW)
    with pytest.raises(
        BaselineExists, match=f"already exists \\(saved 2026-11-21T12:00:00\\+00:00 from run {SINGLE}\\)"
    ):
        save_run(store, "main", reports / LATER)
    assert store.load("lab", "main").run_id == SINGLE  # untouched
    save_run(store, "main", reports / LATER, overwrite=True)
    assert store.load("lab", "main").run_id == LATER
    # The swap leaves no temporary directories behind.
    assert os.listdir(reports / "baselines" / "lab") == ["main"]


def test_unknown_baselines_name_what_exists(reports: Path) -> None:
    store = BaselineStore(reports)
    with pytest.raises(ConfigError, match=r"no baseline 'main' for inventory 'lab' \(saved for it: none\)"):
        store.load("lab", "main")
    save_run(store, "main", reports / SINGLE)
    save_run(store, "main", reports / LATER, inventory="prod")
    with pytest.raises(ConfigError, match=r"several inventories \(lab, prod\)"):
        store.find("main")
    with pytest.raises(ConfigError, match=r"saved: lab/main, prod/main"):
        store.find("nightly")
    with pytest.raises(ConfigError, match="inventory name"):
        store.path("..", "main")


def test_corrupt_metadata_is_a_clear_error(reports: Path) -> None:
    info = save_run(BaselineStore(reports), "main", reports / SINGLE)
    (info.path / "baseline.json").write_text(json.dumps({"name": "main"}))
    with pytest.raises(ConfigError, match=r"baseline.json: not baseline metadata"):
        BaselineInfo.read(info.path)


# --------------------------------------------------------------------------------------------
# References


def test_a_reference_can_be_a_path_latest_a_run_id_or_a_baseline(reports: Path) -> None:
    save_run(BaselineStore(reports), "main", reports / SINGLE)
    assert resolve_reference(reports, str(reports / SINGLE)).info.run_id == SINGLE
    assert resolve_reference(reports, "latest").info.run_id == LATER
    assert resolve_reference(reports, SINGLE).kind == "run"
    side = resolve_reference(reports, "main", "lab")
    assert side.kind == "baseline" and side.describe().startswith("baseline `main` (inventory `lab`")
    assert resolve_reference(reports, str(reports / "baselines/lab/main")).kind == "baseline"
    # Saved for another inventory only: still found (the comparison warns that they differ).
    assert resolve_reference(reports, "main", "prod").kind == "baseline"


def test_bad_references_say_what_is_accepted(reports: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"not a run directory, a run id under .*, latest, or a baseline name"):
        resolve_reference(reports, "no such run")
    with pytest.raises(ConfigError, match=r"'../no/such/run': not a run directory, a run id under .* or latest"):
        resolve_reference(reports, "../no/such/run")
    with pytest.raises(ConfigError, match="no baseline named 'nightly'"):
        resolve_reference(reports, "nightly")
    with pytest.raises(ConfigError, match=f"newest: {SINGLE}, {LATER}"):
        resolve_run(reports, "nope")
    with pytest.raises(ConfigError, match="no runs yet"):
        resolve_run(tmp_path / "empty", "latest")


# --------------------------------------------------------------------------------------------
# CLI


def test_cli_compare_against_a_baseline_exits_1_on_regression(
    reports: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["baseline", "save", "main", SINGLE, "--reports", str(reports)]) == 0
    worse = scaled(load(SINGLE), 0.5, where=cell_is("single-az", "write-1m-nj1-qd16"))
    write_run(reports, "20261121-130000-beef", worse, run_json_from=SINGLE)
    capsys.readouterr()
    code = main(["compare", "main", "20261121-130000-beef", "--reports", str(reports)])
    out = capsys.readouterr().out
    assert code == EXIT_REGRESSED
    assert out.startswith("## Baseline comparison: REGRESSED")
    assert "| replicated_write single-az write-1m-nj1-qd16 [none] | MiB/s" in out
    assert (reports / "20261121-130000-beef" / COMPARE_MD).read_text() == out


def test_cli_compare_of_identical_runs_exits_0(reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_run(reports, "copy", load(SINGLE))
    assert main(["compare", SINGLE, "copy", "--reports", str(reports), "--no-write"]) == 0
    assert "## Baseline comparison: PASS" in capsys.readouterr().out
    assert not (reports / "copy" / COMPARE_MD).exists()


def test_cli_compare_bad_input_exits_2(reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "nightly", "--reports", str(reports)]) == 2
    assert "no baseline 'nightly' for inventory 'lab' (saved for it: none)" in capsys.readouterr().err
    assert main(["compare", "latest", "latest", "--reports", str(reports)]) == 2
    assert "the same run" in capsys.readouterr().err


def test_cli_compare_takes_tolerances_from_an_inventory(
    reports: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inventory = tmp_path / "inv.yaml"
    inventory.write_text(INVENTORY + "baseline_tolerances: {bw: 90%, iops: 90%, clat_p99: off}\n")
    code = main(["compare", SINGLE, LATER, "--reports", str(reports), "--inventory", str(inventory), "--no-write"])
    out = capsys.readouterr().out
    assert code == 0  # 51 vs 71 MiB/s is within a 90 % drop
    assert "Tolerances: MiB/s −90 %, IOPS −90 %." in out


def test_cli_baseline_list_and_show(reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["baseline", "list", "--reports", str(reports)]) == 0
    assert "no baselines" in capsys.readouterr().out
    assert main(["baseline", "save", "main", "--reports", str(reports)]) == 0  # latest
    assert main(["baseline", "save", "main", "--reports", str(reports)]) == 2
    assert "pass --overwrite" in capsys.readouterr().err
    assert main(["baseline", "list", "--reports", str(reports)]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert listing[0].split() == ["name", "inventory", "saved", "cells", "run", "id"]
    assert listing[2].split()[0:2] == ["main", "lab"] and listing[2].split()[-2:] == ["17", LATER]
    assert main(["baseline", "show", "main", "--reports", str(reports)]) == 0
    shown = capsys.readouterr().out
    assert f"from run {LATER}" in shown and "profile quick" in shown
    assert "replicated_write" in shown and "write-1m-nj8-qd2" in shown
