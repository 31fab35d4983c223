"""One bonnie++ result → the disk study's metric values, one table row per phase.

Rows are named ``bonnie-<phase>`` (``bonnie-seq-output-block``) so that they sit beside fio's
workloads in the filesystem study's table.  A sequential phase records ``bw`` (MiB/s), seeks
and the file phases ``ops`` (operations/s); every phase records its %CPU (``cpu``) and its
longest single operation (``lat_max``, ms).  A phase bonnie++ could not time (``+++++``) or
did not run records no rate: a number it did not measure is never written down.
"""

from __future__ import annotations

from typing import Final

from harness.bonnie.result import BonnieResult
from harness.units import MIB

__all__ = ["BONNIE_ENGINE", "bonnie_values", "phase_workload"]

#: The ``engine`` metadata of bonnie++ samples (fio's samples have no ``engine``: fio is the default).
BONNIE_ENGINE: Final = "bonnie++"
_PREFIX: Final = "bonnie-"


def phase_workload(phase: str) -> str:
    """The table row of a bonnie++ phase: ``seq-output-block`` → ``bonnie-seq-output-block``."""
    return _PREFIX + phase


def bonnie_values(result: BonnieResult) -> dict[str, dict[str, float]]:
    """Per row (:func:`phase_workload`), the metric values measured in that phase."""
    rows: dict[str, dict[str, float]] = {}
    for phase in result.phases:
        values: dict[str, float] = {}
        if phase.rate is not None:
            if phase.kind == "throughput":
                values["bw"] = phase.rate / MIB
            else:
                values["ops"] = phase.rate
        if phase.cpu_pct is not None:
            values["cpu"] = phase.cpu_pct
        if phase.latency_s is not None:
            values["lat_max"] = phase.latency_s * 1000.0
        if values:
            rows[phase_workload(phase.name)] = values
    return rows
