"""How far a node's clock is from the controller's (reliability.md row 30).

No duration the harness reports mixes two clocks (the controller measures with its monotonic
clock, fio's node-side duration comes from two stamps of the node's own clock), so skew does
not bend a figure; it misleads a person lining up the ledger, the node's logs and dmesg, and a
lock lease is judged on the node's clock.  Preflight therefore shows each node's offset and
warns above a second.  The node's time is read inside preflight's round trip: the read
happened somewhere within it, so half the round trip is the measurement's uncertainty.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from harness.remote import Runner

__all__ = ["CLOCK_PROBE", "CLOCK_SKEW_WARN_S", "ClockOffset", "judge_offset", "measure_offset", "read_offset"]

CLOCK_SKEW_WARN_S: Final = 1.0
#: the node's wall clock, read-only
CLOCK_PROBE: Final = ["date", "+%s.%N"]


@dataclass(frozen=True)
class ClockOffset:
    """The node's clock minus the controller's, in seconds, ± ``uncertainty_s``."""

    offset_s: float
    uncertainty_s: float


def read_offset(node_time: str, sent: float, received: float) -> ClockOffset:
    """The offset from the node's ``date +%s.%N`` output and the controller's wall-clock
    times around the round trip that printed it."""
    try:
        stamp = float(node_time.strip())
    except ValueError:
        raise ValueError(f"not a time stamp: {node_time.strip()[:40]!r}") from None
    midpoint = (sent + received) / 2
    return ClockOffset(stamp - midpoint, (received - sent) / 2)


def measure_offset(node: Runner, clock: Callable[[], float] = time.time) -> ClockOffset:
    sent = clock()
    out = node.run(CLOCK_PROBE, timeout=15, sudo=False).stdout
    return read_offset(out, sent, clock())


def judge_offset(offset: ClockOffset) -> tuple[Literal["ok", "warn"], str]:
    """("warn", why) when the node's clock is surely more than :data:`CLOCK_SKEW_WARN_S` off."""
    detail = f"offset {offset.offset_s:+.3f} s (± {offset.uncertainty_s:.3f} s) from this host"
    if abs(offset.offset_s) - offset.uncertainty_s > CLOCK_SKEW_WARN_S:
        return "warn", detail + f"; more than {CLOCK_SKEW_WARN_S:g} s: node logs and the ledger will not line up"
    return "ok", detail
