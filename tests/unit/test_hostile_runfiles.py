"""A run's files as input (samples.ndjson, run.json) and its directory as the place ``harness
report`` and ``harness compare`` write: a lone surrogate or a timestamp past the year 9999 is a
refusal, and nothing is written into a saved baseline, through a ``plots/`` that is a link, or
through a ``latest`` that points away; a user's own PNGs in plots/ stay.  The run is the recorded
lab run tests/data/runs/20261121-110501-f674; the fuzz target breaks any field of its records."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.fuzz_tally import surface
from tests.unit.hostile_inputs import FUZZ, GUARD_S, no_secret, no_sentinel, run_cli, secret_forms, unchanged
from tests.unit.hostile_records import JSON_VALUES, broken_record, with_raw

DATA = Path(__file__).resolve().parents[1] / "data"
RUN = DATA / "runs" / "20261121-110501-f674"
BASELINE = Path(__file__).resolve().parents[2] / "reports" / "baselines" / "lab" / "lab-ref"


def _run(tmp_path: Path) -> Path:
    reports = tmp_path / "reports"
    run = reports / RUN.name
    shutil.copytree(RUN, run)
    (tmp_path / "outside").mkdir(exist_ok=True)
    (tmp_path / "outside" / "keep.png").write_bytes(b"mine")
    return run


def test_the_recorded_run_renders(tmp_path: Path) -> None:
    """The control: the run the cases break renders (exit 0)."""
    run_cli(["report", str(_run(tmp_path))]).clean((0,))


@pytest.mark.parametrize(
    ("field", "raw", "message"),
    [
        ("metadata", '{"pair": "\\ud800"}', "a string holds an unpaired surrogate"),
        ("timestamp", "1e400", "1e400 is not a finite number"),
        ("timestamp", "1" + "0" * 400, "a number of more than 30 digits"),
        ("timestamp", "1e300", "timestamp 1e+300 is no time between 1970 and 9999"),
        ("timestamp", "-5", "timestamp -5 is no time between 1970 and 9999"),
        ("value", "-3", "is negative"),
        ("metric", '{"pair": "x"}', "metric and unit must be text, not dict and str"),
        ("unit", "7", "metric and unit must be text, not str and int"),
    ],
)
def test_a_sample_that_no_file_can_hold_is_refused(tmp_path: Path, field: str, raw: str, message: str) -> None:
    run = _run(tmp_path)
    lines = (run / "samples.ndjson").read_text().splitlines()
    with_raw(lines, 0, field, raw)
    (run / "samples.ndjson").write_text("\n".join(lines) + "\n")
    with unchanged(run):
        line = run_cli(["report", str(run)]).refusal()
    assert "samples.ndjson:1: not a sample record: " in line and message in line


#: One cell of the recorded run as series.ndjson holds it (the writer's own format).
SERIES = {
    "test_id": "t1", "scenario": "failover_integrity", "pair": "single-az", "workload": "failover-randwrite-4k",
    "impairment": "crash", "mode": "replicated", "repeat": 0, "interval_s": 1.0, "bw_mib_s": [41.0, 40.2, 0.0, 39.0],
    "windows": [{"start_s": 2.5, "end_s": 6.0, "label": "primary crashed"}],
}  # fmt: skip


def _with_series(run: Path, **changes: object) -> Path:
    (run / "series.ndjson").write_text(json.dumps({**SERIES, **changes}) + "\n")
    return run


@pytest.mark.parametrize(
    "changes",
    [
        {"scenario": "x" * 5000},  # its plot's name: was a file name too long (an internal error)
        {"bw_mib_s": [float(i % 50) for i in range(500_000)]},  # drawn step by step: 13 s
        {"windows": [{"start_s": i, "end_s": i + 0.5, "label": "f"} for i in range(20_000)]},  # shaded one by one
    ],
    ids=["a 5,000-character cell", "500,000 seconds", "20,000 fault windows"],
)
def test_a_series_of_any_size_renders_in_seconds(tmp_path: Path, changes: dict[str, object]) -> None:
    run = _with_series(_run(tmp_path), **changes)
    outcome = run_cli(["report", str(run)]).clean((0,))
    assert outcome.seconds < GUARD_S / 2, f"{outcome.seconds:.1f} s"
    (plot,) = [p for p in (run / "plots").iterdir() if p.name.startswith("series-")]
    assert len(plot.name) <= 204 and plot.read_bytes().startswith(b"\x89PNG")


def test_a_password_in_a_samples_text_never_reaches_the_report(tmp_path: Path) -> None:
    run = _run(tmp_path)
    secret = "Qs3cr3tPassw0rd"
    lines = (run / "samples.ndjson").read_text().splitlines()
    for field in ("metric", "unit"):
        with_raw(lines, 0, field, json.dumps(f"postgresql://ci:{secret}@db/h"))
    (run / "samples.ndjson").write_text("\n".join(lines) + "\n")
    outcome = run_cli(["report", str(run)]).clean((0, 2))
    written = [p for p in run.rglob("*") if p.name != "samples.ndjson"]
    no_secret(secret, [outcome.stdout, outcome.stderr], written)


def test_a_surrogate_in_run_json_is_refused(tmp_path: Path) -> None:
    run = _run(tmp_path)
    (run / "run.json").write_text('{"run_id": "r", "inventory_name": "\\ud800"}')
    assert "run.json: not valid JSON: a string holds an unpaired surrogate" in run_cli(["report", str(run)]).refusal()


def test_a_plots_link_out_of_the_run_is_never_written_nor_emptied(tmp_path: Path) -> None:
    run = _run(tmp_path)
    (run / "plots").symlink_to(tmp_path / "outside")
    with unchanged(tmp_path / "outside"):
        line = run_cli(["report", str(run)]).refusal()
    assert line.endswith(f"{run / 'plots'}: is a symlink; the harness writes plots only into the run's own directory")


def test_a_users_own_pngs_in_plots_stay(tmp_path: Path) -> None:
    run = _run(tmp_path)
    run_cli(["report", str(run)]).clean((0,))
    (run / "plots" / "my-notes.png").write_bytes(b"mine")
    (run / "series.ndjson").unlink(missing_ok=True)
    run_cli(["report", str(run)]).clean((0,))
    assert (run / "plots" / "my-notes.png").read_bytes() == b"mine"


def test_a_saved_baseline_is_never_written_into(tmp_path: Path) -> None:
    run = _run(tmp_path)
    baseline = tmp_path / "reports" / "baselines" / "lab" / "lab-ref"
    shutil.copytree(BASELINE, baseline)
    reports = ["--reports", str(tmp_path / "reports")]
    with unchanged(baseline):
        assert "is a saved baseline, not a run" in run_cli(["report", str(baseline)]).refusal()
        assert "is a saved baseline, not a run" in run_cli(["compare", str(run), str(baseline), *reports]).refusal()
        run_cli(["compare", str(run), str(baseline), *reports, "--no-write"]).clean((0, 1))


def test_latest_pointing_away_from_its_reports_root_is_not_followed(tmp_path: Path) -> None:
    run = _run(tmp_path)
    away = tmp_path / "outside" / "run"
    shutil.copytree(run, away)
    (tmp_path / "reports" / "latest").symlink_to(away)
    with unchanged(tmp_path / "outside"):
        line = run_cli(["report", str(tmp_path / "reports" / "latest")]).refusal()
        assert f"points at {away}, not at a run of its reports root" in line
        reports = ["--reports", str(tmp_path / "reports")]
        assert "not at a run of its reports root" in run_cli(["compare", str(run), "latest", *reports]).refusal()


# -- the fuzz target ----------------------------------------------------------------------------


@FUZZ
@given(breaks=st.lists(broken_record(), min_size=1, max_size=3), info=st.none() | JSON_VALUES | secret_forms())
@surface("run directory: samples.ndjson, run.json")
def test_fuzz_run_files(
    tmp_path_factory: pytest.TempPathFactory, breaks: list[tuple[int, str, str]], info: object
) -> None:
    """Whatever a record holds: the report is written or refused; nothing outside the run changes,
    no password reaches the report."""
    tmp = tmp_path_factory.mktemp("run")
    run = _run(tmp)
    lines = (run / "samples.ndjson").read_text().splitlines()
    for number, field, raw in breaks:
        with_raw(lines, number, field, raw)
    (run / "samples.ndjson").write_text("\n".join(lines) + "\n")
    if info is not None:
        (run / "run.json").write_text(json.dumps({"run_id": "r", "profile": info} if isinstance(info, str) else info))
    with unchanged(tmp / "outside"):
        outcome = run_cli(["report", str(run)]).clean()
    written = [p for p in run.rglob("*") if p.name not in ("samples.ndjson", "run.json")]
    no_sentinel([raw for _, _, raw in breaks] + [json.dumps(info)], [outcome.stdout, outcome.stderr], written)
