"""When a cell may run: a file lock per node and, on the embedded lab, the host guard.

xdist already keeps the cells of pairs that share a node on one worker; the per-node file
locks are a second guard beside that grouping.  The host guard is for the embedded lab, whose
guests share one 2-core host: unpinned, a CPU-heavy cell in one worker starved a
latency-sensitive cell in the other (p99 stalls of 50-200 ms, IOPS halved), so a heavy cell
holds the host alone (exclusive flock) while light ones may overlap each other (shared flock).

A lab that pins each pair to a host CPU (``lab.pin_pairs``) gives every CPU a guard of its
own: a cell whose nodes all run on one CPU holds the host guard shared and its CPU's guard as
its weight says, so the two pairs' cells run side by side and only a cell that spans CPUs
(or names no pinned node) still holds the whole host.  Measured on the lab (2026-11-28), two
heavy cells at once on the two CPUs ran at 0.90-1.02x their rate alone, and a QD1 cell beside
a 1 MiB QD16 one at 0.92-0.97x (alone, the same cell repeats within 4-6 %).  Real clusters need
no guard.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

from filelock import FileLock

from harness.cell.spec import CellSpec

__all__ = ["CellSlots", "is_heavy"]


def is_heavy(spec: CellSpec) -> bool:
    """CPU-heavy on a UML lab: anything but a single small replicated stream.  Calibration
    cells count as heavy too: they measure the pair's parts, which must not share their CPU
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
    (None: no guard) is the lab host's; ``node_cpus`` the host CPU each pinned lab node runs on."""

    def __init__(
        self,
        inventory_name: str,
        lock_dir: Path,
        host_guard: Path | None,
        node_cpus: Mapping[str, int] | None = None,
    ) -> None:
        self.inventory_name = inventory_name
        self.lock_dir = lock_dir
        self.host_guard = host_guard
        self.node_cpus = dict(node_cpus or {})

    def cpu_of(self, nodes: Sequence[str]) -> int | None:
        """The one host CPU all of ``nodes`` are pinned to; None when they are not."""
        cpus = {self.node_cpus.get(n) for n in nodes}
        if len(cpus) != 1:
            return None
        return cpus.pop()

    @contextmanager
    def host_slot(self, nodes: Sequence[str] = (), *, exclusive: bool) -> Iterator[None]:
        """Hold the host guard (no-op without one); for ``nodes`` pinned to one CPU, the host
        guard shared and that CPU's guard as ``exclusive`` says."""
        if self.host_guard is None:
            yield
            return
        cpu = self.cpu_of(nodes)
        with ExitStack() as stack:
            stack.enter_context(_flock(self.host_guard, exclusive=exclusive and cpu is None))
            if cpu is not None:
                guard = self.host_guard.with_name(f"{self.host_guard.stem}-cpu{cpu}{self.host_guard.suffix}")
                stack.enter_context(_flock(guard, exclusive=exclusive))
            yield

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
        with self.locked(nodes), self.host_slot(nodes, exclusive=is_heavy(spec)):
            yield


@contextmanager
def _flock(path: Path, *, exclusive: bool) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
