"""What a cell measures: a workload on a pair, in a mode, under an impairment.

Also what a scenario's extra checks get to see of a finished measurement
(:class:`CellContext`) and the shape of a model's annotation (:data:`Annotator`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from harness.fio.result import DirectionStats, FioResult
from harness.fio.spec import WorkloadSpec
from harness.impair.profile import NetemProfile
from harness.probes.rtt import RttStats

__all__ = ["Annotator", "CellContext", "CellSpec", "Mode"]

Mode = Literal["replicated", "disconnected"]


@dataclass(frozen=True)
class CellSpec:
    """What to measure."""

    scenario: str
    pair: str
    workload: WorkloadSpec
    mode: Mode = "replicated"
    impairment: NetemProfile | None = None
    repeat: int = 0
    #: the protocol the pair runs for this cell when a scenario switched it (recorded in the
    #: cell's metadata); None: the inventory's
    protocol: str | None = None

    @property
    def impairment_name(self) -> str:
        return self.impairment.name if self.impairment else "none"

    @property
    def id(self) -> str:
        parts = [self.pair, self.workload.id()]
        if self.mode != "replicated":
            parts.append(self.mode)
        if self.impairment:
            parts.append(self.impairment.name)
        if self.repeat:
            parts.append(f"r{self.repeat}")
        return "-".join(parts)


@dataclass(frozen=True)
class CellContext:
    """What extra checks of a scenario get to see (measured RTT, the node facts, the result)."""

    spec: CellSpec
    rtt: RttStats
    fio: FioResult
    stats: DirectionStats


#: adds model values to a finished cell: (spec, measured RTT or None, measured metric values)
#: -> (extra metric values, extra metadata), stored with the cell's own samples (one metadata)
Annotator = Callable[[CellSpec, RttStats | None, dict[str, float]], tuple[dict[str, float], dict[str, Any]]]
