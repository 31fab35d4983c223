"""What one fio job brought back once it exited (:class:`FioOutcome`), in one object.

fio's report, its own wall time on the node, the start-up and tear-down it spent beyond its
planned ramp and runtime, and what it left behind (its bandwidth logs), together with the
results of the caller's snippets that rode the round trip which saw fio exit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from harness.fio.result import DirectionStats, FioResult
from harness.fio.spec import WorkloadSpec
from harness.remote import CommandResult

__all__ = ["FioOutcome"]


@dataclass(frozen=True)
class FioOutcome:
    """One fio job's outcome: ``result`` is its parsed report, ``wall_s`` its wall time on the
    node (two stamps of the node's own clock, so no clock offset enters; None when a stamp is
    missing), ``bw_logs`` its per-second bandwidth logs (None: not logged) and ``after_exit``
    every result of the round trip that saw it exit, the caller's snippets included."""

    result: FioResult
    workload: WorkloadSpec
    wall_s: float | None = None
    bw_logs: CommandResult | None = None
    after_exit: Mapping[str, CommandResult] = field(default_factory=dict)

    @property
    def stats(self) -> DirectionStats:
        """The direction the workload measures: its writes for any job that writes."""
        return self.result.write if self.workload.is_write else self.result.read

    @property
    def overhead_s(self) -> float | None:
        """fio's own start-up and tear-down beyond ramp + runtime (large on a slow guest);
        None without timings."""
        if self.wall_s is None:
            return None
        runtime_s = self.stats.runtime_ms / 1000.0
        return self.wall_s - runtime_s - float(self.workload.ramp_s)
