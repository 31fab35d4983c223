"""What a replicated-write cell returns (the JUnit side is the shared :class:`CellOutcome`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.cell.outcome import CellOutcome, MeasuredRates
from harness.cell.spec import CellSpec
from harness.fio.result import DirectionStats, FioResult
from harness.probes.rtt import RttStats
from harness.rules.bounds import BoundResult
from harness.rules.validity import Certificate
from harness.runfiles.samples import Sample

__all__ = ["CellResult"]


@dataclass
class CellResult(CellOutcome, MeasuredRates):
    spec: CellSpec
    fio: FioResult
    stats: DirectionStats
    rtt: RttStats
    verdict: BoundResult
    validity: BoundResult
    metadata: dict[str, Any]
    samples: list[Sample] = field(default_factory=list)
    wall_s: float = 0.0
    #: what else was in the way while the cell measured (None: not certified)
    certificate: Certificate | None = None

    PROPERTY_KEYS = (
        "pair",
        "placement",
        "protocol",
        "workload",
        "impairment",
        "mode",
        "fio_version",
        "kernel",
        "drbd_version",
        "run_id",
    )
