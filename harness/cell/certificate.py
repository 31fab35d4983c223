"""A cell's validity certificate: what else was in the way while it measured, read in the round trips
the cell already makes.

The window opens in the guard's round trips (:mod:`.guard`: the pressure snippet rides the
primary's device-guard batch and the secondary's boot-id batch) and closes in the round trip
that sees fio exit (:mod:`.measure`: the primary's exit reads, then the secondary's snippet on
its own connection at once).  The replication path's ping rides fio's start round trip (it
already did) and the exit round trip (after fio, before the primary's impairment is cleared).
On the embedded lab the host is read locally at the same two points (:data:`HostProbe`).  The
next cell of a series opens its window where the previous one closed it.

:func:`cell_certificate` turns both ends into a :class:`~harness.rules.validity.Certificate`;
a node or the host that could not be read at one end costs its figures, never the cell, and is
named in :attr:`CellCertificate.unread`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from harness.cell.spec import CellSpec
from harness.errors import HarnessError, InfraError
from harness.probes.hostload import HostReading, host_figures
from harness.probes.pressure import NodeWindow, parse_snapshot, pressure_script, pressure_window
from harness.probes.rtt import RttStats
from harness.remote import CommandResult, Runner, Shell, run_batch
from harness.rules.validity import Certificate, RttCheck, certify
from harness.rules.validitythresholds import ValidityThresholds

__all__ = [
    "PRESSURE",
    "CellCertificate",
    "HostProbe",
    "Readings",
    "cell_certificate",
    "pressure_reads",
    "read_ends",
    "read_host",
    "rtt_check",
]

#: the name of the pressure snippet in a batch
PRESSURE = "pressure"

#: reads the embedded lab's host (its pressure and each guest's CPU time), locally
HostProbe = Callable[[], HostReading]


def pressure_reads() -> dict[str, Shell]:
    """The snippet a round trip carries to open or close a node's window."""
    return {PRESSURE: pressure_script()}


@dataclass(frozen=True)
class Readings:
    """One end of a cell's window: each node's pressure print by node name, the host's reading
    (the lab only) and what could not be read."""

    nodes: Mapping[str, str]
    host: HostReading | None = None
    problems: tuple[str, ...] = ()


def node_print(node: str, results: Mapping[str, CommandResult]) -> tuple[dict[str, str], tuple[str, ...]]:
    """A node's pressure print from a batch's results, or why there is none."""
    res = results.get(PRESSURE)
    if res is None:
        return {}, (f"{node}: the pressure probe did not run",)
    if res.exit_code != 0 and not res.stdout.strip():
        return {}, (f"{node}: the pressure probe exited {res.exit_code}: {res.stderr.strip()[:120]}",)
    return {node: res.stdout}, ()


def read_host(probe: HostProbe | None) -> tuple[HostReading | None, tuple[str, ...]]:
    """The host's reading now, or why there is none (no lab: nothing, and nothing missing)."""
    if probe is None:
        return None, ()
    try:
        return probe(), ()
    except HarnessError as exc:  # names the host itself
        return None, (str(exc),)
    except OSError as exc:
        return None, (f"host: {exc}",)


def read_ends(nodes: Sequence[Runner], probe: HostProbe | None) -> Readings:
    """Each node's snapshot on its own connection, at once, and the host's meanwhile: for the
    end of a window no round trip of the cell's own reaches, or after the guard had to wait."""
    prints: dict[str, str] = {}
    problems: list[str] = []
    with ThreadPoolExecutor(max_workers=max(len(nodes), 1), thread_name_prefix="pressure") as pool:
        futures = {node.name: pool.submit(run_batch, node, pressure_reads(), timeout=15) for node in nodes}
        host, host_problems = read_host(probe)
        for name, future in futures.items():
            try:
                found, why = node_print(name, future.result())
            except HarnessError as exc:
                found, why = {}, (f"{name}: {exc}",)
            prints.update(found)
            problems += why
    return Readings(prints, host, (*problems, *host_problems))


def rtt_check(
    spec: CellSpec, path: str, reference_ms: float | None, before: RttStats | None, after: RttStats | None
) -> RttCheck | None:
    """The replication path's pings against what the cell expects of it: the calibrated RTT
    plus the delay the cell's impairment adds.  None when the cell pinged neither time or
    nothing calibrated the path."""
    if reference_ms is None or (before is None and after is None):
        return None
    added = spec.impairment.added_rtt_s * 1e3 if spec.impairment is not None else 0.0
    return RttCheck(
        path,
        reference_ms + added,
        before.median_ms if before is not None else None,
        after.median_ms if after is not None else None,
    )


@dataclass(frozen=True)
class CellCertificate:
    """The certificate and what it could not read (each a one-line reason)."""

    certificate: Certificate
    unread: tuple[str, ...] = ()

    def properties(self) -> dict[str, str]:
        """The certificate's key/value pairs, with ``validity.unread`` when something was not read."""
        props = self.certificate.properties()
        if self.unread:
            props["validity.unread"] = "; ".join(self.unread)
        return props


def _node_windows(start: Readings, end: Readings) -> tuple[list[NodeWindow], list[str]]:
    windows: list[NodeWindow] = []
    problems: list[str] = []
    for node, before in start.nodes.items():
        after = end.nodes.get(node)
        if after is None:
            continue  # the end's own problems say why
        try:
            windows.append(pressure_window(parse_snapshot(before, node), parse_snapshot(after, node), node))
        except InfraError as exc:
            problems.append(str(exc))
    return windows, problems


def cell_certificate(
    start: Readings, end: Readings, thresholds: ValidityThresholds, *, rtt: RttCheck | None = None
) -> CellCertificate:
    """The certificate of the window between ``start`` and ``end``."""
    windows, problems = _node_windows(start, end)
    host = None
    if start.host is not None and end.host is not None:
        try:
            host = host_figures(start.host, end.host)
        except InfraError as exc:
            problems.append(str(exc))
    certificate = certify(
        windows,
        thresholds,
        rtt=rtt,
        host=host.window if host else None,
        guest_cpu_shares=host.guest_shares if host else None,
        other_cpu_share=host.other_share if host else None,
    )
    unread = dict.fromkeys((*start.problems, *end.problems, *problems))
    return CellCertificate(certificate, tuple(unread))
