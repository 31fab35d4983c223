"""When a cell may run: a file lock per node and, on the embedded lab, the host guard.

xdist already keeps the cells of pairs that share a node on one worker; the per-node file
locks are a second guard beside that grouping.  The host guard is for the embedded lab, whose
guests share one 2-core host: a CPU-heavy cell in one worker starves a latency-sensitive cell
in the other (p99 stalls of 50-200 ms, IOPS halved), so heavy cells hold it alone (exclusive
flock) while light ones may overlap each other (shared flock).  Real clusters do not need it.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

from filelock import FileLock

from harness.cell.spec import CellSpec

__all__ = ["CellSlots", "is_heavy"]


def is_heavy(spec: CellSpec) -> bool:
    """CPU-heavy on a UML lab: anything but a single small replicated stream.  Calibration
    cells count as heavy too: they measure the pair's parts, which must not share the host
    with another cell."""
    w = spec.workload
    return (
        spec.mode != "replicated"
        or spec.scenario == "calibration"
        or w.max_bs >= 64 * 1024
        or w.numjobs * w.iodepth >= 4
    )


class CellSlots:
    """The locks of one inventory's cells: ``lock_dir`` holds one file per node; ``host_guard``
    (None: no guard) is the lab host's."""

    def __init__(self, inventory_name: str, lock_dir: Path, host_guard: Path | None) -> None:
        self.inventory_name = inventory_name
        self.lock_dir = lock_dir
        self.host_guard = host_guard

    @contextmanager
    def host_slot(self, *, exclusive: bool) -> Iterator[None]:
        """Hold the host guard (no-op without one)."""
        if self.host_guard is None:
            yield
            return
        self.host_guard.parent.mkdir(parents=True, exist_ok=True)
        with open(self.host_guard, "a+") as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            try:
                yield
            finally:
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)

    @contextmanager
    def locked(self, nodes: Sequence[str]) -> Iterator[None]:
        """Hold the per-node file locks of ``nodes``."""
        self.lock_dir.mkdir(parents=True, exist_ok=True)
        with ExitStack() as stack:
            for name in sorted(set(nodes)):  # sorted: no lock-order deadlock between workers
                lock = FileLock(str(self.lock_dir / f"{self.inventory_name}-{name}.lock"))
                stack.enter_context(lock)
            yield

    @contextmanager
    def hold(self, spec: CellSpec, nodes: Sequence[str]) -> Iterator[None]:
        """The node locks, then the host guard (exclusive for a heavy cell)."""
        with self.locked(nodes), self.host_slot(exclusive=is_heavy(spec)):
            yield
