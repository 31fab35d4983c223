"""The run's progress counts each of its cells once, when its teardown is reported, with the time
of all its phases: a report of another test, or a second report of one already counted (a
rerun), never pushes the count past the total."""

from __future__ import annotations

import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Literal, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.plugin.progress import ProgressPlugin
from harness.plugin.session import SESSION_KEY

CELLS = [f"scenarios/test_replicated_write.py::test_write[p{i}]" for i in range(4)]
OTHERS = ["tests/unit/test_units.py::test_one", "scenarios/conftest.py::helper"]


def _plugin(tmp: str) -> ProgressPlugin:
    """The plugin of a two-worker run with no earlier run under an empty reports root."""
    session = SimpleNamespace(reports_root=Path(tmp), inventory=SimpleNamespace(name="lab", pairs={}), run_id="r1")
    config = SimpleNamespace(option=SimpleNamespace(numprocesses=2), stash={SESSION_KEY: session})
    return ProgressPlugin(cast(pytest.Config, config))


def _report(
    nodeid: str,
    when: str = "teardown",
    outcome: Literal["passed", "failed", "skipped"] = "passed",
    duration: float = 1.5,
) -> pytest.TestReport:
    # "???": the phase xdist gives the report it makes for a crashed worker's cell
    return pytest.TestReport(nodeid, ("f.py", 1, "t"), {}, outcome, None, when, [], duration=duration)  # type: ignore[arg-type]


@given(st.lists(st.sampled_from([*CELLS, *OTHERS]), max_size=30))
def test_no_cell_counts_twice_and_no_other_test_counts(order: list[str]) -> None:
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        plugin = _plugin(tmp)
        plugin.pytest_xdist_node_collection_finished(None, [*CELLS, OTHERS[0]])
    assert plugin.progress is not None
    plugin.progress.say = lines.append
    for nodeid in order:
        plugin.pytest_runtest_logreport(_report(nodeid))
    counted = [int(line.split("] ", 1)[1].split("/", 1)[0]) for line in lines]
    assert counted == list(range(1, len({n for n in order if n in CELLS}) + 1))
    assert all(f"/{len(CELLS)} cells" in line for line in lines)


def test_a_cell_skipped_in_setup_counts_once(tmp_path: Path) -> None:
    lines: list[str] = []
    plugin = _plugin(str(tmp_path))
    plugin.pytest_xdist_node_collection_finished(None, CELLS[:2])
    assert plugin.progress is not None
    plugin.progress.say = lines.append
    plugin.pytest_runtest_logreport(_report(CELLS[0], "setup", "skipped"))
    plugin.pytest_runtest_logreport(_report(CELLS[0], "teardown"))
    plugin.pytest_runtest_logreport(_report(CELLS[1], "setup"))
    plugin.pytest_runtest_logreport(_report(CELLS[1], "call"))
    assert len(lines) == 1  # the second cell is not done before its teardown
    plugin.pytest_runtest_logreport(_report(CELLS[1], "teardown"))
    assert [line.split("] ", 1)[1].split(" cells")[0] for line in lines] == ["1/2", "2/2"]


def test_a_cells_time_is_its_setup_call_and_teardown(tmp_path: Path) -> None:
    lines: list[str] = []
    plugin = _plugin(str(tmp_path))
    plugin.pytest_xdist_node_collection_finished(None, CELLS[:3])
    assert plugin.progress is not None
    plugin.progress.say = lines.append
    for when, seconds in (("setup", 20.0), ("call", 7.5), ("teardown", 2.5)):
        plugin.pytest_runtest_logreport(_report(CELLS[0], when, duration=seconds))
    # two more cells of 30 s, each its own group (no @group in their ids), on the two workers
    assert ", last test_write[p0] 30.0 s, ETA 30s" in lines[-1]


def test_a_cell_whose_worker_crashed_counts_at_its_crash_report(tmp_path: Path) -> None:
    # xdist reports a crashed worker's cell once, in a phase of its own, and never its teardown
    lines: list[str] = []
    plugin = _plugin(str(tmp_path))
    plugin.pytest_xdist_node_collection_finished(None, CELLS[:2])
    assert plugin.progress is not None
    plugin.progress.say = lines.append
    plugin.pytest_runtest_logreport(_report(CELLS[0], "setup"))
    plugin.pytest_runtest_logreport(_report(CELLS[0], "???", "failed"))
    assert len(lines) == 1 and "1/2 cells" in lines[0]
