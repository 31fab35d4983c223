"""How far a node's clock is from the controller's.

No duration the harness reports mixes two clocks (the controller measures with its monotonic
clock, fio's node-side duration comes from two stamps of the node's own clock), so skew does
not bend a figure; it misleads a person lining up the ledger, the node's logs and dmesg, and a
lock lease is judged on the node's clock.  Preflight therefore shows each node's offset and
warns above a second, and the run reads every node's clock again after preflight and at its
end (:func:`measure_offsets`, kept in run.json).  The node's time is read inside a round trip:
the read happened somewhere within it, so half the round trip is the measurement's uncertainty.
The arithmetic is :mod:`harness.runfiles.clockskew` (pure, also read by the report).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Final

from harness.errors import HarnessError
from harness.remote import Runner, polling
from harness.remote.pernode import each_node
from harness.runfiles.clockskew import CLOCK_SKEW_WARN_S, ClockOffset, NodeClock, judge_offset, read_offset

__all__ = [
    "CLOCK_PROBE",
    "CLOCK_SKEW_WARN_S",
    "ClockOffset",
    "judge_offset",
    "measure_offset",
    "measure_offsets",
    "read_offset",
]

#: the node's wall clock, read-only
CLOCK_PROBE: Final = ["date", "+%s.%N"]


def measure_offset(node: Runner, clock: Callable[[], float] = polling.wall) -> ClockOffset:
    sent = clock()
    out = node.run(CLOCK_PROBE, timeout=15, sudo=False).stdout
    return read_offset(out, sent, clock())


def measure_offsets(
    nodes: Mapping[str, Callable[[], Runner]], clock: Callable[[], float] = polling.wall
) -> dict[str, NodeClock]:
    """Each node's offset, or why it could not be read: a node lost at the end of a run must
    not cost the run its record, so every failure is kept as text instead of raised."""
    out: dict[str, NodeClock] = {}

    def read(name: str, connect: Callable[[], Runner]) -> None:
        try:
            out[name] = measure_offset(connect(), clock)
        except (HarnessError, ValueError) as exc:
            out[name] = str(exc).splitlines()[0] if str(exc) else type(exc).__name__

    # every node at once: the end of an interrupted run has 7 s in all before CI's SIGKILL
    each_node([(name, functools.partial(read, name, connect)) for name, connect in nodes.items()])
    return dict(sorted(out.items()))
