"""Clock offsets of the nodes from the controller, as numbers and as a run's record.

Pure: no I/O.  :mod:`harness.safety.clock` reads the nodes' clocks; this module turns what it
read into an offset ± uncertainty, judges it, and gives the form run.json keeps (``clock_offsets``:
one reading per node at the start of the run, after preflight, and one at its end).  A clock that
drifted during a long run shows as two different offsets; a node that could not be read at the
end says why instead of a number.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = [
    "CLOCK_SKEW_WARN_S",
    "ClockOffset",
    "NodeClock",
    "judge_offset",
    "offsets_record",
    "read_offset",
    "skew_notes",
]

CLOCK_SKEW_WARN_S: Final = 1.0
#: the moments of a run at which the nodes' clocks are read, in the record's order
PHASES: Final = ("start", "end")


@dataclass(frozen=True)
class ClockOffset:
    """The node's clock minus the controller's, in seconds, ± ``uncertainty_s``."""

    offset_s: float
    uncertainty_s: float


#: one node's reading: an offset, or why there is none (the node could not be reached)
NodeClock = ClockOffset | str


def read_offset(node_time: str, sent: float, received: float) -> ClockOffset:
    """The offset from the node's ``date +%s.%N`` output and the controller's wall-clock
    times around the round trip that printed it."""
    try:
        stamp = float(node_time.strip())
    except ValueError:
        stamp = math.nan
    if not math.isfinite(stamp):
        raise ValueError(f"not a time stamp: {node_time.strip()[:40]!r}")
    midpoint = (sent + received) / 2
    return ClockOffset(stamp - midpoint, (received - sent) / 2)


def _beyond_threshold(offset: ClockOffset) -> bool:
    return abs(offset.offset_s) - offset.uncertainty_s > CLOCK_SKEW_WARN_S


def judge_offset(offset: ClockOffset) -> tuple[Literal["ok", "warn"], str]:
    """("warn", why) when the node's clock is surely more than :data:`CLOCK_SKEW_WARN_S` off."""
    detail = f"offset {offset.offset_s:+.3f} s (± {offset.uncertainty_s:.3f} s) from this host"
    if _beyond_threshold(offset):
        return "warn", detail + f"; more than {CLOCK_SKEW_WARN_S:g} s: node logs and the ledger will not line up"
    return "ok", detail


def _entry(reading: NodeClock) -> dict[str, Any]:
    if isinstance(reading, str):
        return {"error": reading}
    return {"offset_s": round(reading.offset_s, 6), "uncertainty_s": round(reading.uncertainty_s, 6)}


def offsets_record(start: Mapping[str, NodeClock], end: Mapping[str, NodeClock]) -> dict[str, Any]:
    """run.json's ``clock_offsets``: ``{"start": {node: {offset_s, uncertainty_s} | {error}}, "end": ...}``."""
    return {
        "start": {name: _entry(r) for name, r in sorted(start.items())},
        "end": {name: _entry(r) for name, r in sorted(end.items())},
    }


def _reading(entry: Any) -> NodeClock | None:
    if not isinstance(entry, Mapping):
        return None
    if "error" in entry:
        return str(entry["error"])
    offset, uncertainty = entry.get("offset_s"), entry.get("uncertainty_s")
    if isinstance(offset, bool) or isinstance(uncertainty, bool):
        return None
    if isinstance(offset, int | float) and isinstance(uncertainty, int | float):
        return ClockOffset(float(offset), float(uncertainty))
    return None


def skew_notes(record: Mapping[str, Any]) -> list[str]:
    """One note per node whose clock was surely more than the threshold off at the start or at
    the end of the run, or could not be read at the end: what the report's header shows."""
    by_node: dict[str, list[str]] = {}
    for phase in PHASES:
        readings = record.get(phase)
        if not isinstance(readings, Mapping):
            continue
        for name, entry in sorted(readings.items()):
            reading = _reading(entry)
            if isinstance(reading, str):
                by_node.setdefault(str(name), []).append(f"unread at the {phase} ({reading})")
            elif reading is not None and _beyond_threshold(reading):
                by_node.setdefault(str(name), []).append(
                    f"{reading.offset_s:+.3f} s ± {reading.uncertainty_s:.3f} at the {phase}"
                )
    return [f"{name} {', '.join(parts)}" for name, parts in by_node.items()]
