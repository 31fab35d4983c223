"""The other programs on the host, told from the lab's guests and the harness itself: the pure
split over generated process tables, and the real ``/proc`` of this machine with a shell loop
and a second interpreter started for the purpose."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from hypothesis import given
from hypothesis import strategies as st

from harness.probes.hostprocs import ProcessStat, other_ticks, process_table

PY = "/usr/bin/python3.11"
SH = "/usr/bin/dash"


def _table(rows: dict[int, tuple[int, str, bool]], uid: int = 0) -> dict[int, ProcessStat]:
    return {pid: ProcessStat(ppid, uid, exe, kernel, pid * 10) for pid, (ppid, exe, kernel) in rows.items()}


def test_the_harness_tree_is_ours_and_what_it_starts_with_another_program_is_not() -> None:
    # init 1; a shell 50 ran the controller 100, whose workers 101 and 102 run the same python;
    # worker 101 started stress-ng 200; kthreadd 2 and a kworker 3; a guest 300; a build 400
    rows = {
        1: (0, "/sbin/init", False),
        2: (0, "", True),
        3: (2, "", True),
        50: (1, SH, False),
        100: (50, PY, False),
        101: (100, PY, False),
        102: (100, PY, False),
        200: (101, "/usr/bin/stress-ng", False),
        300: (1, "/usr/bin/linux.uml", False),
        400: (1, "/usr/bin/make", False),
    }
    assert set(other_ticks(_table(rows), {300}, 102)) == {1, 50, 200, 400}
    # the lab's uid excludes its processes even when the guests' lookup missed one
    table = _table(rows) | {301: ProcessStat(300, 4242, "/usr/bin/linux.uml", False, 7)}
    assert 301 not in other_ticks(table, {300}, 101, excluded_uid=4242)


@st.composite
def process_tables(draw: st.DrawFn) -> tuple[dict[int, ProcessStat], int]:
    pids = draw(st.lists(st.integers(1, 60), min_size=1, max_size=25, unique=True))
    table = {
        pid: ProcessStat(
            draw(st.sampled_from([0, *pids])),
            draw(st.sampled_from([0, 4242])),
            draw(st.sampled_from(["", PY, SH])),
            draw(st.booleans()),
            draw(st.integers(0, 10**6)),
        )
        for pid in pids
    }
    return table, draw(st.sampled_from(pids))


@given(case=process_tables(), excluded=st.sets(st.integers(1, 60), max_size=5))
def test_nothing_is_counted_twice_or_made_up(case: tuple[dict[int, ProcessStat], int], excluded: set[int]) -> None:
    """Whatever the table (cycles of parents included): a subset of it, never ourselves, an
    excluded pid, the lab's uid or a kernel thread, each with its own ticks."""
    table, me = case
    found = other_ticks(table, excluded, me, excluded_uid=4242)
    assert me not in found and not set(found) & excluded
    assert all(pid in table and table[pid].ticks == ticks for pid, ticks in found.items())
    assert all(not table[pid].kernel and table[pid].uid != 4242 for pid in found)


def test_this_machines_other_programs_are_read_and_ours_are_not() -> None:
    loop = subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True)
    ours = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        time.sleep(0.5)
        first = other_ticks(process_table(), set(), os.getpid())
        time.sleep(0.5)
        second = other_ticks(process_table(), set(), os.getpid())
        assert loop.pid in first and second[loop.pid] > first[loop.pid]  # a shell loop is busy
        assert os.getpid() not in first and ours.pid not in first  # a second interpreter of ours
    finally:
        loop.kill()
        ours.kill()
        loop.wait()
        ours.wait()
