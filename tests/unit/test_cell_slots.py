"""The lab host guard with real flocks: pairs pinned to different CPUs run side by side, a
CPU's heavy cells run one at a time, and a cell that spans CPUs holds the whole host."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from harness.cell.slots import CellSlots

# the lab's placement: a pair per CPU, the router with the pair that crosses it
CPUS = {"a1": 0, "a2": 0, "a3": 1, "b1": 1, "router": 1}


class Attempt:
    """Takes a slot in a thread and holds it until released."""

    def __init__(self, slots: CellSlots, nodes: Sequence[str], *, exclusive: bool) -> None:
        self.holding = threading.Event()
        self.release = threading.Event()
        self.thread = threading.Thread(target=self._hold, args=(slots, nodes, exclusive), daemon=True)
        self.thread.start()

    def _hold(self, slots: CellSlots, nodes: Sequence[str], exclusive: bool) -> None:
        with slots.host_slot(nodes, exclusive=exclusive):
            self.holding.set()
            self.release.wait(30)

    def done(self) -> None:
        self.release.set()
        self.thread.join(30)


@contextmanager
def held(slots: CellSlots, nodes: Sequence[str], *, exclusive: bool) -> Iterator[Attempt]:
    first = Attempt(slots, nodes, exclusive=exclusive)
    assert first.holding.wait(10)
    try:
        yield first
    finally:
        first.done()


def slots(tmp_path: Path, cpus: dict[str, int] | None = CPUS) -> CellSlots:
    return CellSlots("lab", tmp_path, tmp_path / "lab-host.lock", cpus)


def test_heavy_cells_of_pairs_on_different_cpus_run_side_by_side(tmp_path: Path) -> None:
    guard = slots(tmp_path)
    with held(guard, ["a1", "a2"], exclusive=True):
        other = Attempt(guard, ["a3", "b1"], exclusive=True)
        assert other.holding.wait(10), "a heavy cell on CPU 1 waited for one on CPU 0"
        other.done()


@pytest.mark.parametrize(
    ("first", "second", "second_exclusive", "pinned"),
    [
        (["a1", "a2"], ["a1", "a2"], True, True),  # one CPU's heavy cells, one at a time
        (["a1", "a2"], ["a1", "a2"], False, True),  # a light cell waits for its CPU's heavy one
        (["a1", "a2"], ["a2", "b1"], True, True),  # a cell spanning CPUs needs the whole host
        (["a1", "a2"], ["c9"], True, True),  # so does one whose node is not pinned
        (["a1", "b1"], ["a3", "b1"], False, True),  # a whole-host cell blocks every pinned cell
        (["a1", "a2"], ["a3", "b1"], True, False),  # an unpinned lab keeps one guard for the host
    ],
    ids=["same-cpu", "light-after-heavy", "spanning", "unpinned-node", "whole-host-first", "unpinned-lab"],
)
def test_a_cell_waits_for_a_heavy_cell_it_would_share_a_cpu_with(
    tmp_path: Path, first: list[str], second: list[str], second_exclusive: bool, pinned: bool
) -> None:
    guard = slots(tmp_path, CPUS if pinned else None)
    with held(guard, first, exclusive=True):
        waiting = Attempt(guard, second, exclusive=second_exclusive)
        assert not waiting.holding.wait(0.5), f"{second} ran beside the heavy cell on {first}"
    assert waiting.holding.wait(10), f"{second} never ran after {first} ended"
    waiting.done()


def test_light_cells_share_the_host_and_without_a_guard_nothing_waits(tmp_path: Path) -> None:
    guard = slots(tmp_path, cpus=None)
    with held(guard, ["a1", "a2"], exclusive=False):
        beside = Attempt(guard, ["a3", "b1"], exclusive=False)
        assert beside.holding.wait(10)
        beside.done()
    free = CellSlots("lab", tmp_path, None, CPUS)
    with held(free, ["a1", "a2"], exclusive=True):
        beside = Attempt(free, ["a1", "a2"], exclusive=True)
        assert beside.holding.wait(10)
        beside.done()
