"""The run's progress counts each of its cells once: a report of another test, or a second report
of one already counted (a rerun), never pushes the count past the total."""

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
    when: Literal["setup", "call", "teardown"] = "call",
    outcome: Literal["passed", "failed", "skipped"] = "passed",
) -> pytest.TestReport:
    return pytest.TestReport(nodeid, ("f.py", 1, "t"), {}, outcome, None, when, [], duration=1.5)


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
    assert [line.split("] ", 1)[1].split(" cells")[0] for line in lines] == ["1/2", "2/2"]
