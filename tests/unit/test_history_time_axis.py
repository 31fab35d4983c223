"""The history plot's x axis is time: runs at their start, when every run has one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cli import main
from harness.report.plots.history import time_axis
from tests.unit.test_history_lab_runs import RUNS

_TIMES = st.lists(
    st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2030, 1, 1), timezones=st.just(UTC)),
    min_size=1,
    max_size=8,
)


@given(_TIMES)
def test_runs_sit_at_their_start_times_when_every_run_has_one(times: list[datetime]) -> None:
    ordered = sorted(times)
    spans = ordered[0] < ordered[-1]
    assert time_axis([t.isoformat() for t in ordered]) == (ordered if spans else None)
    # a run without a start, or a run list out of time order, falls back to even spacing
    assert time_axis([*(t.isoformat() for t in ordered), None]) is None
    if spans:
        assert time_axis([t.isoformat() for t in reversed(ordered)]) is None


def test_a_start_that_is_no_time_or_a_naive_one_beside_aware_ones_spaces_evenly() -> None:
    start = datetime(2026, 11, 25, 12, tzinfo=UTC)
    assert time_axis(["yesterday"]) is None
    assert time_axis([start.isoformat(), (start + timedelta(hours=1)).replace(tzinfo=None).isoformat()]) is None


def test_the_plot_of_the_recorded_lab_runs_is_drawn_on_their_times(tmp_path: Path) -> None:
    db = tmp_path / "results.sqlite"
    assert main(["results", "import", str(RUNS), "--results-db", str(db)]) == 0
    plot = tmp_path / "history.png"
    assert main(["history", "--results-db", str(db), "--metric", "iops", "-k", "multi-az", "--plot", str(plot)]) == 0
    assert plot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


@pytest.fixture(autouse=True)
def _quiet(capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI's tables are not what these tests look at."""
