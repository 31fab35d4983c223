"""The other programs on this machine: every user-space process that is neither one the caller
names (the lab's guests) nor the harness itself, with its CPU ticks so far.

The harness is the process tree of the interpreter running it: from this process up through
its parents while they run the same executable (an xdist worker's controller), then down to
every descendant that runs it too (the other workers).  What those start with another
executable (a ``stress-ng`` a test runs, a shell) is another program.  Kernel threads are
nobody's program: the work they do for the guests (their network bridges) is the lab's.

:func:`process_table` reads ``/proc``; :func:`other_ticks` is pure.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["ProcessStat", "other_ticks", "process_stat", "process_table", "process_ticks"]

_PROC: Final = Path("/proc")
#: ``PF_KTHREAD`` in ``/proc/PID/stat``'s flags: a kernel thread
_KTHREAD: Final = 0x00200000


@dataclass(frozen=True)
class ProcessStat:
    """One process: its parent, owner, executable (``""`` when unreadable), whether it is a
    kernel thread, and its user and system ticks with its reaped children's."""

    ppid: int
    uid: int
    exe: str
    kernel: bool
    ticks: int


def process_stat(pid: int) -> ProcessStat | None:
    """``pid``'s stat now; None once it is gone."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
        uid = (_PROC / str(pid)).stat().st_uid
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: the fields follow the last ')'
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        ppid, flags = int(fields[1]), int(fields[6])
        ticks = sum(int(v) for v in fields[11:15])
    except (IndexError, ValueError):
        return None
    kernel = bool(flags & _KTHREAD)
    exe = ""
    if not kernel:
        try:
            exe = os.readlink(_PROC / str(pid) / "exe")
        except OSError:
            exe = ""
    return ProcessStat(ppid, uid, exe, kernel, ticks)


def process_ticks(pid: int) -> int | None:
    """User and system clock ticks of ``pid`` and of its reaped children; None once it is gone."""
    found = process_stat(pid)
    return None if found is None else found.ticks


def process_table() -> dict[int, ProcessStat]:
    """Every process now, pid → its stat; one that ends while it is read is left out."""
    table: dict[int, ProcessStat] = {}
    for entry in _PROC.iterdir():
        if entry.name.isdigit():
            found = process_stat(int(entry.name))
            if found is not None:
                table[int(entry.name)] = found
    return table


def _harness(table: Mapping[int, ProcessStat], self_pid: int) -> set[int]:
    me = table.get(self_pid)
    if me is None or not me.exe:
        return {self_pid}
    root, seen = self_pid, {self_pid}
    while (parent := table.get(table[root].ppid)) is not None and parent.exe == me.exe and table[root].ppid not in seen:
        root = table[root].ppid
        seen.add(root)
    ours = {root}
    children: dict[int, list[int]] = {}
    for pid, stat in table.items():
        children.setdefault(stat.ppid, []).append(pid)
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in ours and table[child].exe == me.exe:
                ours.add(child)
                stack.append(child)
    return ours | {self_pid}


def other_ticks(
    table: Mapping[int, ProcessStat], excluded: Collection[int], self_pid: int, excluded_uid: int | None = None
) -> dict[int, int]:
    """pid → ticks of every user-space process neither in ``excluded``, nor owned by
    ``excluded_uid`` (the lab's guests' uid), nor the harness's own (the tree of ``self_pid``'s
    interpreter)."""
    ours = _harness(table, self_pid)
    return {
        pid: stat.ticks
        for pid, stat in table.items()
        if not stat.kernel and pid not in ours and pid not in excluded and stat.uid != excluded_uid
    }
