"""How busy the machine running the harness was over a window, and each lab guest's share of it.

On the embedded lab every guest is a set of host processes sharing the host's CPUs, so a job
on the host (a niced backup, another user's build) slows every cell while the guests' own
``/proc`` sees nothing of it: their kernel has no PSI and no steal.  The host's own view is
the same snippet the nodes run (:func:`harness.probes.pressure.pressure_script`), run here
with ``sh`` (one fork: the host is not a slow guest), and each guest's CPU time in clock
ticks, read from its processes' ``/proc/PID/stat`` by the caller that knows which processes
are whose (:mod:`harness.lab.hostload`).

:func:`host_figures` turns two :class:`HostReading` into the host's window and each guest's
share of all the host's CPU time over it (a guest keeping one of two CPUs busy: 0.5).
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field

from harness.errors import InfraError
from harness.probes.pressure import NodeSnapshot, NodeWindow, parse_snapshot, pressure_script, pressure_window

__all__ = ["HOST", "HostReading", "host_figures", "local_snapshot"]

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
    far, guest → pid → user and system ticks (``USER_HZ``, the unit of ``/proc/stat``)."""

    host: NodeSnapshot
    guest_ticks: Mapping[str, Mapping[int, int]] = field(default_factory=dict)


def host_figures(before: HostReading, after: HostReading) -> tuple[NodeWindow, dict[str, float]]:
    """The host's window, and each guest's share (0–1) of all the host's CPU time over it.

    A guest seen at only one end (started or stopped meanwhile) has no share.  Per process: one
    that started meanwhile counts from 0, one that ended counts nothing of the window (its last
    ticks went with it), and a pid that was reused never counts below 0."""
    window = pressure_window(before.host, after.host, HOST)
    jiffies = after.host.cpu.total - before.host.cpu.total
    shares: dict[str, float] = {}
    for guest, processes in after.guest_ticks.items():
        start = before.guest_ticks.get(guest)
        if start is None or jiffies <= 0:
            continue
        used = sum(max(0, ticks - start.get(pid, 0)) for pid, ticks in processes.items())
        shares[guest] = min(1.0, used / jiffies)
    return window, shares
