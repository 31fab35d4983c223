"""Run progress: the ETA per xdist group (hypothesis on simulated runs whose cells take known
times), the slowest group's as the run's, the calibration counted apart, the progress line, and
the calibration time carried on a report as xdist carries it."""

from __future__ import annotations

import re
import shutil
import statistics
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from _pytest.reports import TestReport
from hypothesis import given
from hypothesis import strategies as st

from harness.plugin.eta import GroupEta, cell_kind, groups_of, pair_of, schedule
from harness.plugin.progress import RunProgress, format_eta, previous_durations
from harness.runfiles.samples import read_samples

DISK_RUN = Path(__file__).resolve().parents[1] / "data" / "disk_runs" / "20261125-115711-97ce"


@given(st.floats(0, 10 * 86400))
def test_eta_text_round_trips_to_the_second(seconds: float) -> None:
    text = format_eta(seconds)
    m = re.fullmatch(r"(?:(\d+)h(\d\d)m|(?:(\d+)m(\d\d)s)|(\d+)s)", text)
    assert m is not None, text
    h, hm, m_, ms, s = m.groups()
    total = int(h) * 3600 + int(hm) * 60 if h else int(m_) * 60 + int(ms) if m_ else int(s)
    # hours drop the seconds; below an hour the text is exact to the rounded second
    assert abs(total - round(seconds)) < (60 if h else 1)


_LOADS = st.lists(st.floats(0, 1e5), min_size=1, max_size=12)


@given(left=_LOADS, workers=st.integers(1, 16))
def test_schedule_lies_between_the_longest_group_and_the_sum(left: list[float], workers: int) -> None:
    end = schedule(left, workers)
    assert max(left) <= end <= sum(left) + 1e-6
    assert end >= sum(left) / workers - 1e-6
    if workers == 1:
        assert end == pytest.approx(sum(left))
    if workers >= len(left):
        assert end == max(left)  # every group has a worker: the slowest group decides


def test_schedule_hands_each_group_to_the_first_free_worker() -> None:
    # 10 and 1 start; the 1 frees its worker first and takes the 5: ends at 10, not 11 or 15
    assert schedule([10, 1, 5], 2) == 10
    assert schedule([1, 1, 5], 2) == 6


@dataclass(frozen=True)
class Sim:
    """A run whose cells take known times: ``groups[g]`` lists (kind, pair) of group g's cells in
    the order its worker runs them; a pair's first cell also calibrates for ``calibration`` s."""

    groups: list[list[tuple[int, int]]]
    kind_s: list[float]
    calibration: float

    def nodeid(self, g: int, i: int) -> str:
        kind, pair = self.groups[g][i]
        return f"scenarios/test_k{kind}.py::test_k{kind}[p{g}x{pair}-{i}]@nodes-{g}"

    @property
    def pairs(self) -> list[str]:
        return sorted({f"p{g}x{pair}" for g, cells in enumerate(self.groups) for _, pair in cells})

    def events(self) -> list[tuple[float, str, float, float]]:
        """(end time, cell, seconds, calibration seconds) of every cell, in the order they end."""
        out = []
        for g, cells in enumerate(self.groups):
            now, seen = 0.0, set()
            for i, (kind, pair) in enumerate(cells):
                calibration = self.calibration if pair not in seen else 0.0
                seen.add(pair)
                now += self.kind_s[kind] + calibration
                out.append((now, self.nodeid(g, i), self.kind_s[kind] + calibration, calibration))
        return sorted(out)

    @property
    def end(self) -> float:
        return self.events()[-1][0]

    def replay(self, estimate: GroupEta) -> Iterator[tuple[float, str]]:
        """Tell ``estimate`` every start and end as a worker per group runs them; after each end
        but the last, yield (its time, the cell)."""
        following = {}  # cell -> the next cell of its group
        for g, cells in enumerate(self.groups):
            estimate.started(self.nodeid(g, 0), 0.0)  # a group's first cell starts at once
            following.update({self.nodeid(g, i): self.nodeid(g, i + 1) for i in range(len(cells) - 1)})
        for now, nodeid, seconds, calibration in self.events()[:-1]:
            estimate.finished(nodeid, seconds, calibration_s=calibration)
            if nodeid in following:  # the worker starts the group's next cell at once
                estimate.started(following[nodeid], now)
            yield now, nodeid

    def estimate(self, workers: int, prior: dict[str, float] | None = None) -> GroupEta:
        cells = groups_of(self.nodeid(g, i) for g, group in enumerate(self.groups) for i in range(len(group)))
        return GroupEta(cells, self.pairs, workers, prior or {})

    def prior(self, pace: float) -> dict[str, float]:
        """A previous run of the same cells that went ``pace`` times as fast (its walls, by id)."""
        return {
            self.nodeid(g, i).rpartition("@")[0]: self.kind_s[kind] / pace
            for g, cells in enumerate(self.groups)
            for i, (kind, _) in enumerate(cells)
        }


@st.composite
def sims(draw: st.DrawFn) -> Sim:
    kinds = draw(st.integers(1, 3))
    groups = draw(
        st.lists(
            st.lists(st.tuples(st.integers(0, kinds - 1), st.integers(0, 2)), min_size=1, max_size=15),
            min_size=1,
            max_size=4,
        )
    )
    kind_s = draw(st.lists(st.floats(1, 600), min_size=kinds, max_size=kinds))
    return Sim(groups, kind_s, draw(st.floats(0, 900)))


@given(sim=sims())
def test_once_every_kind_of_cell_has_run_the_eta_is_right(sim: Sim) -> None:
    # A worker per group (xdist's loadgroup with -n at least the groups), cells of a kind that
    # take the same time: once each kind has finished once, the estimate is the time left.
    estimate = sim.estimate(workers=len(sim.groups))
    kinds = {cell_kind(n) for n in estimate.cells}
    seen: set[str] = set()
    for now, nodeid in sim.replay(estimate):
        seen.add(cell_kind(nodeid))
        eta = estimate.eta(now)
        assert eta is not None
        if seen == kinds:
            assert eta == pytest.approx(sim.end - now, rel=1e-9, abs=1e-6)


@given(sim=sims(), pace=st.floats(0.25, 4))
def test_with_the_previous_run_the_eta_is_right_from_the_first_cell(sim: Sim, pace: float) -> None:
    # every cell took 1/pace of its time last run: one finished cell tells the pace
    estimate = sim.estimate(workers=len(sim.groups), prior=sim.prior(pace))
    for now, _ in sim.replay(estimate):
        assert estimate.eta(now) == pytest.approx(sim.end - now, rel=1e-9, abs=1e-6)


@given(sim=sims(), workers=st.integers(1, 4))
def test_the_eta_is_the_schedule_of_what_is_left(sim: Sim, workers: int) -> None:
    estimate = sim.estimate(workers)
    for now, _ in sim.replay(estimate):
        left = estimate.left_by_group(now)
        eta = estimate.eta(now)
        assert eta is not None and max(left.values()) <= eta + 1e-6 <= sum(left.values()) + 2e-6
        assert min(left.values()) >= 0


def test_a_calibration_is_neither_a_cells_time_nor_forgotten_for_the_pairs_to_come() -> None:
    # two pairs in one group; the first cell of p1 calibrated for 300 s and measured for 30 s
    cells = groups_of(f"scenarios/test_w.py::test_w[{pair}-{i}]@nodes-a1" for pair in ("p1", "p2") for i in range(3))
    estimate = GroupEta(cells, ["p1", "p2"], workers=2)
    estimate.finished("scenarios/test_w.py::test_w[p1-0]@nodes-a1", 330.0, calibration_s=300.0)
    # 5 cells of 30 s left, and p2's calibration still to come
    assert estimate.left_by_group() == {"nodes-a1": 5 * 30 + 300}
    estimate.finished("scenarios/test_w.py::test_w[p2-0]@nodes-a1", 30.0, calibration_s=0.0)  # reused: 0 s
    assert estimate.left_by_group() == {"nodes-a1": 4 * 30}


def _old_eta(durations: list[float], left: int, workers: int) -> float:
    """The estimate before: the median cell time, times the cells left, over the workers."""
    return statistics.median(durations) * left / workers


#: the shape that made the first ETA 77 min for a 35 min run, then 30-50 % low: under -n 2 one
#: group holds a third of the cells, each group's first cell calibrates its pair, and the
#: slower group ends with ten cells of a longer kind
UNEQUAL = Sim(groups=[[(0, 0)] * 20, [(0, 0)] * 40 + [(1, 0)] * 10], kind_s=[20.0, 60.0], calibration=240.0)


def _errors(estimate: GroupEta) -> tuple[dict[int, float], dict[int, float]]:
    """The estimate's error and the old one's, in seconds, at 10, 50 and 90 % of the run."""
    new: dict[int, float] = {}
    old: dict[int, float] = {}
    durations: list[float] = []
    events = UNEQUAL.events()
    for k, (now, _) in enumerate(UNEQUAL.replay(estimate), start=1):
        durations.append(events[k - 1][2])
        for mark in (10, 50, 90):
            if mark not in new and now >= UNEQUAL.end * mark / 100:
                eta = estimate.eta(now)
                assert eta is not None
                new[mark] = eta - (UNEQUAL.end - now)
                old[mark] = _old_eta(durations, len(events) - k, 2) - (UNEQUAL.end - now)
    return new, old


def test_two_unequal_groups_are_right_once_their_kinds_have_run() -> None:
    new, old = _errors(UNEQUAL.estimate(workers=2))
    # the slower group's ten 60 s cells are of a kind not run before 90 %: until then they are
    # taken for 20 s cells, 400 s short; the old estimate was off by far more all along
    assert new == {10: pytest.approx(-400), 50: pytest.approx(-400), 90: pytest.approx(0)}
    assert all(abs(old[m]) > abs(new[m]) for m in (10, 50)) and abs(old[90]) >= 100


def test_two_unequal_groups_with_the_previous_run_are_right_at_once() -> None:
    new, _ = _errors(UNEQUAL.estimate(workers=2, prior=UNEQUAL.prior(pace=0.8)))  # the lab is slower today
    assert new == {10: pytest.approx(0), 50: pytest.approx(0), 90: pytest.approx(0)}


def test_previous_durations_are_the_walls_of_the_newest_run_of_the_inventory(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    shutil.copytree(DISK_RUN, reports / DISK_RUN.name)
    # a newer run of another inventory, and this run itself, are not the previous run
    other = reports / "20261126-090000-aaaa"
    other.mkdir()
    (other / "run.json").write_text('{"run_id": "20261126-090000-aaaa", "inventory_name": "prod"}')
    prior = previous_durations(reports, "lab", run_id="20261127-090000-bbbb")
    assert len(prior) == 6  # the fio cells: bonnie++'s have no wall of their own
    raw = "scenarios/test_filesystems.py::test_filesystem[a1-randwrite-4k-nj4-qd8-raw]"
    walls = [s.value for s in read_samples(DISK_RUN / "samples.ndjson") if s.metric == "wall"]
    assert prior[raw] == pytest.approx(7.8, abs=0.05) and set(prior.values()) <= set(walls)
    assert previous_durations(reports, "prod", run_id="x") == {}  # prod's run recorded no samples
    assert previous_durations(reports, "lab", run_id=DISK_RUN.name) == {}
    assert previous_durations(tmp_path / "none", "lab", run_id="x") == {}


def test_the_progress_line_names_the_slowest_group_and_ignores_other_tests() -> None:
    lines: list[str] = []
    cells = groups_of(["scenarios/a.py::t[x-1]@g1", "scenarios/a.py::t[x-2]@g1", "scenarios/a.py::t[y-1]@g2"])
    progress = RunProgress(GroupEta(cells, ["x", "y"], workers=2), say=lines.append)
    assert progress.finished("scenarios/a.py::test_not_a_cell", 1.0) is None
    progress.finished("scenarios/a.py::t[y-1]@g2", 5.0)
    assert re.fullmatch(r"\[harness \d\d:\d\d:\d\d\] 1/3 cells, last t\[y-1\]@g2 5\.0 s, ETA 10s", lines[-1])
    progress.finished("scenarios/a.py::t[x-1]@g1", 4.0)
    assert lines[-1].endswith(", ETA 4s")  # g1 alone is left: no group to name
    progress.finished("scenarios/a.py::t[x-2]@g1", 4.0)
    assert "3/3 cells" in lines[-1] and "ETA" not in lines[-1]


def test_several_groups_left_name_the_one_that_ends_last() -> None:
    lines: list[str] = []
    cells = groups_of(
        [f"scenarios/a.py::t[x-{i}]@g1" for i in range(4)] + [f"scenarios/a.py::t[y-{i}]@g2" for i in range(2)]
    )
    progress = RunProgress(GroupEta(cells, ["x", "y"], workers=2), say=lines.append)
    progress.finished("scenarios/a.py::t[y-0]@g2", 3.0)
    assert lines[-1].endswith(", ETA 12s (g1 last)")


def test_ids_name_their_kind_pair_and_group() -> None:
    nodeid = "scenarios/test_replicated_write.py::test_replicated_write[single-az-md-nbd-write-1m]@nodes-a1"
    assert cell_kind(nodeid) == "scenarios/test_replicated_write.py::test_replicated_write"
    assert pair_of(nodeid, ["single-az", "single-az-md-nbd", "multi-az"]) == "single-az-md-nbd"
    assert pair_of("scenarios/t.py::test_x[single-az]", ["single-az"]) == "single-az"
    assert pair_of("scenarios/t.py::test_disk[a1-raw]", ["single-az"]) is None
    assert groups_of([nodeid, "scenarios/t.py::test_x[b]"], {"scenarios/t.py::test_x[b]": "nodes-b1"}) == {
        nodeid: "nodes-a1",
        "scenarios/t.py::test_x[b]": "nodes-b1",
    }


def test_the_calibration_time_travels_with_the_report_as_xdist_sends_it() -> None:
    # xdist sends a worker's report as pytest's own JSON form and rebuilds it in the controller
    report = TestReport("scenarios/a.py::t[x]@g1", ("a.py", 1, "t"), {}, "passed", None, "call", [], duration=9.0)
    report.harness_calibration_s = 4.5  # type: ignore[attr-defined]
    back = TestReport._from_json(report._to_json())
    assert back.harness_calibration_s == 4.5 and back.duration == 9.0


def test_a_cell_reports_its_calibration(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
import pytest
from harness.plugin.progress import calibrating

pytest_plugins = ["harness.plugin.progress"]

def pytest_runtest_logreport(report):
    if report.when == "call":
        with open("reported.txt", "a") as f:
            f.write(f"{report.nodeid} {getattr(report, 'harness_calibration_s', None)}\\n")
"""
    )
    pytester.makepyfile(
        test_cells="""
import time
from harness.plugin.progress import calibrating

def test_calibrates(request):
    with calibrating(request.node):
        time.sleep(0.05)

def test_does_not():
    pass
"""
    )
    assert pytester.runpytest_inprocess("-p", "no:cacheprovider").ret == 0
    reported = dict(line.split() for line in (pytester.path / "reported.txt").read_text().splitlines())
    assert reported["test_cells.py::test_does_not"] == "None"
    assert 0.05 <= float(reported["test_cells.py::test_calibrates"]) < 5


def test_a_function_not_run_yet_takes_its_previous_runs_cells_at_this_runs_pace() -> None:
    # the previous run had test_b only on pair x; here its cells on y are left, and test_a ran
    # twice as slow as then: test_b[y-*] are taken for twice test_b[x]'s previous time
    cells = groups_of(["s/t.py::test_a[x]@g", "s/t.py::test_b[y-1]@g", "s/t.py::test_b[y-2]@g"])
    estimate = GroupEta(cells, ["x", "y"], workers=1, prior={"s/t.py::test_a[x]": 5.0, "s/t.py::test_b[x]": 30.0})
    estimate.finished("s/t.py::test_a[x]@g", 10.0)
    assert estimate.left_by_group() == {"g": 2 * (30.0 * 2)}


def test_a_function_nobody_ran_is_taken_for_a_typical_one_not_for_the_mean_cell() -> None:
    # three functions ran: one long cell of test_f (a failover trial) and eight short ones of
    # test_a and test_b; a cell of test_c is taken for the median function's mean (8 s), not
    # for the mean cell's (about 17 s)
    ids = [f"s/t.py::test_a[p-{i}]@g" for i in range(4)] + [f"s/t.py::test_b[p-{i}]@g" for i in range(4)]
    cells = groups_of([*ids, "s/t.py::test_f[p]@g", "s/t.py::test_c[p]@g"])
    estimate = GroupEta(cells, ["p"], workers=1)
    for nodeid in ids[:4]:
        estimate.finished(nodeid, 7.0)
    for nodeid in ids[4:]:
        estimate.finished(nodeid, 8.0)
    estimate.finished("s/t.py::test_f[p]@g", 90.0)
    assert estimate.left_by_group() == {"g": 8.0}
