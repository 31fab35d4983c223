"""Where a cell's wall time goes, phase by phase, read back from a run's ledger.

The cell pipeline already writes a timestamped ledger event at most phase boundaries (``fio-start``,
``fio-running``, ``fio-exit``, ``impair-intent``, ``impair-applied``); the runner adds one
``cell-phases`` event per finished cell with the boundaries nothing else marks (after the locks,
after the guard, after the fault, after the undo, after the re-check, after the recording) and
fio's own wall time on the node.  This module only reads: it never changes what a cell does.

Phases (seconds, wall clock of the harness host):

* ``guard + state``: device guard, replication state and boot id (one round trip), and the
  bounded wait for a healthy replication when it was not;
* ``boot ids + lint``: the nodes' boot ids read for the reboot watch and, when impaired, the
  impairment held against the resource's timeouts and the baseline RTT (once per process);
  for a disconnected cell, the disconnect;
* ``impair: apply + read-back``: netem on both nodes at once, each read back in the round trip
  that applied it;
* ``impair: RTT probe``: from the last read-back to the fault in place (the probe that proves the
  impairment took rides fio's start round trip, so this is only the harness's own step);
* ``fio start``: from the fault in place to fio running on the node (the RTT probe, impaired or
  not, and the watch's start ride the same round trip);
* ``fio run``: fio's own wall time on the node (the physics: ramp + runtime + fio's start-up);
* ``output fetch``: from fio's end on the node to its output in the harness's hands (the wait's
  wake-up and the one round trip that brings back JSON, times, logs and the watch);
* ``undo``: every registered undo (impairment cleared and verified, reconnect and resync);
* ``re-check``: the boot ids read again (a node that rebooted mid-cell lost its faults);
* ``recording``: the locks released, judge, provenance, samples and the bandwidth series.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["PHASES", "CellPhases", "cell_phases", "phase_table"]

PHASES: Final = (
    "guard + state",
    "boot ids + lint",
    "impair: apply + read-back",
    "impair: RTT probe",
    "fio start",
    "fio run",
    "output fetch",
    "undo",
    "re-check",
    "recording",
)


@dataclass(frozen=True)
class CellPhases:
    """One finished cell: its class (``unimpaired``, ``impaired``, ``disconnected``), the
    seconds of each phase (``PHASES``) and fio's planned ramp + runtime."""

    cell: str
    kind: str
    seconds: Mapping[str, float]
    fio_planned_s: float | None = None

    @property
    def total_s(self) -> float:
        return sum(self.seconds.values())

    @property
    def overhead_s(self) -> float:
        """Everything but fio's own run: what the harness costs the cell."""
        return self.total_s - self.seconds["fio run"]


def _kind(event: Mapping[str, Any]) -> str:
    if event.get("mode") == "disconnected":
        return "disconnected"
    return "unimpaired" if event.get("impairment") in (None, "none") else "impaired"


def _within(events: Iterable[Mapping[str, Any]], name: str, start: float, end: float, **match: Any) -> list[float]:
    return [
        float(e["ts"])
        for e in events
        if e.get("event") == name and start <= float(e["ts"]) <= end and all(e.get(k) == v for k, v in match.items())
    ]


def _one(event: Mapping[str, Any], entries: Sequence[Mapping[str, Any]]) -> CellPhases | None:
    start, end = float(event["start"]), float(event["recorded"])
    mine = [e for e in entries if e.get("pid") == event.get("pid")]
    running = _within(mine, "fio-running", start, end, cell=event["cell"])
    exited = _within(mine, "fio-exit", start, end, cell=event["cell"])
    fio_s = event.get("fio_s")
    if not running or not exited or fio_s is None:
        return None  # a cell of an older harness, or one whose fio times were unreadable
    guarded, faulted = float(event["guarded"]), float(event["faulted"])
    intents = _within(mine, "impair-intent", guarded, faulted)
    applied = _within(mine, "impair-applied", guarded, faulted)
    # netem goes on after the lint and the baseline; the probe follows the last read-back
    impaired = bool(intents and applied)
    seconds = {
        "guard + state": guarded - start,
        "boot ids + lint": (min(intents) if impaired else faulted) - guarded,
        "impair: apply + read-back": max(applied) - min(intents) if impaired else 0.0,
        "impair: RTT probe": faulted - max(applied) if impaired else 0.0,
        "fio start": running[-1] - faulted,
        "fio run": float(fio_s),
        "output fetch": exited[-1] - running[-1] - float(fio_s),
        "undo": float(event["undone"]) - exited[-1],
        "re-check": float(event["rechecked"]) - float(event["undone"]),
        "recording": end - float(event["rechecked"]),
    }
    planned = event.get("fio_planned_s")
    return CellPhases(str(event["cell"]), _kind(event), seconds, float(planned) if planned is not None else None)


def cell_phases(entries: Sequence[Mapping[str, Any]]) -> list[CellPhases]:
    """The phases of every finished cell in a run's ledger entries, in ledger order."""
    out = []
    for event in entries:
        if event.get("event") == "cell-phases":
            phases = _one(event, entries)
            if phases is not None:
                out.append(phases)
    return out


def phase_table(cells: Sequence[CellPhases], kind: str) -> tuple[list[str], list[list[Any]]]:
    """Headers and rows: median and max seconds of each phase over the cells of ``kind``."""
    chosen = [c for c in cells if c.kind == kind]
    headers = [f"phase ({kind}, {len(chosen)} cells)", "median s", "max s"]
    rows: list[list[Any]] = []
    if not chosen:
        return headers, rows
    columns = [(p, [c.seconds[p] for c in chosen]) for p in PHASES]
    columns += [("total", [c.total_s for c in chosen]), ("overhead (total - fio run)", [c.overhead_s for c in chosen])]
    planned = [c for c in chosen if c.fio_planned_s is not None]
    if planned:
        # fio's own start-up and tear-down on the node: not the harness's, but not I/O either
        columns.append(
            ("fio run beyond ramp + runtime", [c.seconds["fio run"] - (c.fio_planned_s or 0) for c in planned])
        )
        columns.append(("total - ramp - runtime", [c.total_s - (c.fio_planned_s or 0) for c in planned]))
    for name, values in columns:
        rows.append([name, statistics.median(values), max(values)])
    return headers, rows
