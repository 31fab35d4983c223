"""How busy the machine running the harness was over a window, each lab guest's share of it, and
the share other programs took.

On the embedded lab every guest is a set of host processes sharing the host's CPUs, so a job
on the host (a niced backup, another user's build) slows every cell while the guests' own
``/proc`` sees nothing of it: their kernel has no PSI and no steal.  The host's own view is
the same snippet the nodes run (:func:`harness.probes.pressure.pressure_script`), run here
with ``sh`` (one fork: the host is not a slow guest), and each guest's CPU time in clock
ticks, read from its processes' ``/proc/PID/stat`` by the caller that knows which processes
are whose (:mod:`harness.lab.hostload`), and so are the other programs' processes: everything
in user space that is neither a guest nor the harness itself.

The host's PSI cannot tell them apart: the lab's own guests, five processes of one CPU each on
a host of two, keep it high on a quiet host.  The other programs' CPU time can: it is what a
niced backup or another user's build costs the guests.

:func:`host_figures` turns two :class:`HostReading` into the host's window, each guest's share
of all the host's CPU time over it (a guest keeping one of two CPUs busy: 0.5), and the other
programs' share.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field

from harness.errors import InfraError
from harness.probes.pressure import NodeSnapshot, NodeWindow, parse_snapshot, pressure_script, pressure_window

__all__ = ["HOST", "HostFigures", "HostReading", "host_figures", "local_snapshot"]

#: What the host is called in a certificate.
HOST = "host"


def local_snapshot(timeout_s: float = 10.0) -> NodeSnapshot:
    """This machine's pressure snapshot; :class:`InfraError` when the snippet cannot run or
    prints something that is not one."""
    try:
        done = subprocess.run(
            ["sh", "-c", pressure_script()], capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InfraError(f"{HOST}: the pressure probe did not run: {exc}") from None
    return parse_snapshot(done.stdout, HOST)


@dataclass(frozen=True)
class HostReading:
    """The host at one instant: its pressure snapshot, and each guest's processes' CPU time so
    far, guest → pid → user and system ticks (``USER_HZ``, the unit of ``/proc/stat``), and the
    other programs' processes' ticks, pid → ticks (``None``: not read)."""

    host: NodeSnapshot
    guest_ticks: Mapping[str, Mapping[int, int]] = field(default_factory=dict)
    other_ticks: Mapping[int, int] | None = None


@dataclass(frozen=True)
class HostFigures:
    """The host over a window: its pressure window, each guest's share of its CPU time and the
    other programs' share (``None`` when they were not read at both ends)."""

    window: NodeWindow
    guest_shares: dict[str, float]
    other_share: float | None


def _used(before: Mapping[int, int], after: Mapping[int, int]) -> int:
    return sum(max(0, ticks - before.get(pid, 0)) for pid, ticks in after.items())


def host_figures(before: HostReading, after: HostReading) -> HostFigures:
    """The host's window, each guest's share (0–1) of all the host's CPU time over it, and the
    other programs' share.

    A guest seen at only one end (started or stopped meanwhile) has no share.  Per process: one
    that started meanwhile counts from 0, one that ended counts nothing of the window (its last
    ticks went with it, to its parent's reaped-children ticks), and a pid that was reused never
    counts below 0."""
    window = pressure_window(before.host, after.host, HOST)
    jiffies = after.host.cpu.total - before.host.cpu.total
    shares: dict[str, float] = {}
    for guest, processes in after.guest_ticks.items():
        start = before.guest_ticks.get(guest)
        if start is None or jiffies <= 0:
            continue
        shares[guest] = min(1.0, _used(start, processes) / jiffies)
    other = None
    if before.other_ticks is not None and after.other_ticks is not None and jiffies > 0:
        other = min(1.0, _used(before.other_ticks, after.other_ticks) / jiffies)
    return HostFigures(window, shares, other)
