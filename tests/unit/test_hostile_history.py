"""``harness history`` writes its plot where it should, and only there: an inventory name
taken from a run's run.json (through the results database) never takes the PNG out of the
reports root, ``--plot`` never replaces a file without ``--force``, and the default plot is
never written through a link.  The runs are the four recorded lab runs
(tests/data/runs/history-lab4), imported by the real ``harness results import``; the fuzz
target gives them any inventory name at all."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.fuzz_tally import surface
from tests.unit.hostile_inputs import FUZZ, no_sentinel, run_cli, secret_forms, unchanged

RUNS = Path(__file__).resolve().parents[1] / "data" / "runs" / "history-lab4"


def _reports(tmp_path: Path, inventory: str = "lab") -> Path:
    """tmp/reports holding the recorded runs as run directories of inventory ``inventory``,
    imported into tmp/reports/results.sqlite; tmp/outside beside it, to watch."""
    reports = tmp_path / "reports"
    shutil.copytree(RUNS, reports)
    for run_json in reports.glob("*/run.json"):
        info = json.loads(run_json.read_text())
        run_json.write_text(json.dumps({**info, "inventory_name": inventory}))
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "keep.png").write_bytes(b"mine")
    run_cli(["results", "import", str(reports)]).clean((0,))
    return reports


def _history(reports: Path, *extra: str) -> list[str]:
    return ["history", "--reports", str(reports), "--results-db", str(reports / "results.sqlite"), *extra]


def test_the_plot_lands_in_the_reports_root(tmp_path: Path) -> None:
    """The control: the default plot is the reports root's history-<inventory>-<metric>.png."""
    reports = _reports(tmp_path)
    outcome = run_cli(_history(reports)).clean((0,))
    assert f"plot: {reports / 'history-lab-bw.png'}" in outcome.stdout
    assert (reports / "history-lab-bw.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("name", ["../../outside/evil", "../outside/x", "..", "latest", "a/b", ".hidden"])
def test_a_crafted_inventory_name_never_takes_the_plot_out(tmp_path: Path, name: str) -> None:
    reports = _reports(tmp_path, name)
    with unchanged(tmp_path / "outside"), unchanged(reports):
        line = run_cli(_history(reports)).refusal()
    assert f"inventory name {name!r}: " in line and line.endswith("it names the plot file: give one with --plot FILE")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside", "reports"]


def test_plot_replaces_an_existing_file_only_with_force(tmp_path: Path) -> None:
    reports = _reports(tmp_path)
    mine = tmp_path / "outside" / "keep.png"
    with unchanged(tmp_path / "outside"):
        line = run_cli(_history(reports, "--plot", str(mine))).refusal()
    assert line == f"error: --plot {mine}: the file exists; pass --force to replace it, or choose another file"
    run_cli(_history(reports, "--plot", str(mine), "--force")).clean((0,))
    assert mine.read_bytes().startswith(b"\x89PNG")


def test_plot_never_replaces_a_run_of_the_reports_root(tmp_path: Path) -> None:
    reports = _reports(tmp_path)
    samples = next(reports.glob("*/samples.ndjson"))
    with unchanged(reports):
        assert "the file exists" in run_cli(_history(reports, "--plot", str(samples))).refusal()


def test_the_default_plot_is_never_written_through_a_link(tmp_path: Path) -> None:
    reports = _reports(tmp_path)
    (reports / "history-lab-bw.png").symlink_to(tmp_path / "outside" / "keep.png")
    with unchanged(tmp_path / "outside"), unchanged(reports):
        assert "is not a plot file of the harness's own" in run_cli(_history(reports)).refusal()


# -- the fuzz target ----------------------------------------------------------------------------


@FUZZ
@given(
    name=st.text(min_size=1, max_size=80)
    | st.sampled_from(["..", "../..", "/etc/x", "a" * 65, "x/../../y"])
    | secret_forms()
)
@surface("history: inventory names from run.json")
def test_fuzz_history_inventory_names(tmp_path_factory: pytest.TempPathFactory, name: str) -> None:
    """Any inventory name: a plot in the reports root or a refusal; nothing written outside it,
    no password quoted or stored."""
    tmp = tmp_path_factory.mktemp("history")
    reports = _reports(tmp, name)
    with unchanged(tmp / "outside"):
        outcome = run_cli(_history(reports)).clean()
    no_sentinel([name], [outcome.stdout, outcome.stderr])
    assert sorted(p.name for p in tmp.iterdir()) == ["outside", "reports"]
    made = {p.relative_to(reports) for p in reports.iterdir()} - {p.relative_to(RUNS) for p in RUNS.iterdir()}
    assert made <= {Path("results.sqlite"), Path("results.sqlite-wal"), Path("results.sqlite-shm"),
                    Path(f"history-{name}-bw.png")}  # fmt: skip
    assert outcome.code == 2 or (reports / f"history-{name}-bw.png").is_file()
