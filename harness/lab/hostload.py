"""The embedded lab's host as a cell's validity certificate reads it: the host's own pressure and
each guest's CPU time, both read locally (the guests are this machine's processes).

A guest is every process of its session (:func:`harness.lab.processes.find_lab_processes`):
the UML kernel process, its helpers and one stub per guest address space, whose user time is
the guest's programs' (fio's among them).  Each process's CPU time is its user and system ticks
(``/proc/PID/stat`` fields 14 and 15) plus what its reaped children left (16 and 17), kept per
process so a stub that exits mid-window costs only its own ticks of that window
(:func:`harness.probes.hostload.host_figures`).  The processes are looked up afresh at every
reading (a few hundred small reads of ``/proc``): a stub that started meanwhile counts too.
Recorded, not judged: a guest using its CPU is the measurement.  Every other user-space
process but the harness's own is another program (:mod:`harness.probes.hostprocs`), read in
the same pass: the guests' uid excludes a stub the session lookup missed by a moment.
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.inventory.models import Inventory
from harness.lab.processes import find_lab_processes
from harness.probes.hostload import HostReading, local_snapshot
from harness.probes.hostprocs import other_ticks, process_table, process_ticks

__all__ = ["LabHostProbe", "lab_host_probe", "process_ticks"]


class LabHostProbe:
    """Reads the lab's host: its pressure snapshot and every guest process's ticks."""

    def __init__(self, netns: str, state_dir: Path, guest_uid: int | None = None) -> None:
        self.netns = netns
        self.state_dir = state_dir
        self.guest_uid = guest_uid

    def guest_ticks(self) -> dict[str, dict[int, int]]:
        """Each running guest's processes' CPU ticks so far: guest → pid → ticks."""
        ticks: dict[str, dict[int, int]] = {}
        for process in find_lab_processes(self.netns, self.state_dir):
            value = process_ticks(process.pid)
            if value is not None:
                ticks.setdefault(process.guest, {})[process.pid] = value
        return ticks

    def __call__(self) -> HostReading:
        table = process_table()
        guests = self.guest_ticks()
        lab = {pid for processes in guests.values() for pid in processes}
        others = other_ticks(table, lab, os.getpid(), self.guest_uid)
        return HostReading(local_snapshot(), guests, others)


def lab_host_probe(inventory: Inventory) -> LabHostProbe | None:
    """The probe of ``inventory``'s embedded lab; None for an inventory of real nodes."""
    if inventory.lab is None:
        return None
    return LabHostProbe(inventory.lab.netns, inventory.lab.state_dir, inventory.lab.guest_uid)
