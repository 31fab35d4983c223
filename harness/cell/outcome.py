"""What a finished cell reports: its rates, and its JUnit properties.

Shared by the replicated cells (:class:`harness.cell.CellResult`), the disk-study cells
(:class:`harness.disk.cell.DiskCellResult`) and the failover cell, so they cannot differ in how
a property is redacted or which numbers are left out.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from harness.fio.result import DirectionStats
from harness.redact import redact_obj
from harness.rules.bounds import BoundResult
from harness.runfiles.samples import Sample
from harness.units import MIB

__all__ = ["VALIDITY_PREFIX", "CellOutcome", "MeasuredRates"]

#: the metadata keys of a cell's validity certificate start so (``validity``, ``validity.reason``, ...)
VALIDITY_PREFIX = "validity"


class MeasuredRates:
    """``bw_mib_s`` and ``iops`` of a cell result that holds fio's ``stats``."""

    stats: DirectionStats

    @property
    def bw_mib_s(self) -> float:
        return self.stats.bytes_per_s / MIB

    @property
    def iops(self) -> float:
        return self.stats.iops


class CellOutcome:
    """What a finished cell reports to JUnit; shared by replicated cells, disk-study cells
    (:class:`harness.disk.cell.DiskCellResult`) and the failover cell
    (:class:`harness.cell.failover.FailoverResult`), which differ only in their identity keys.
    The cells that ran fio also carry :class:`MeasuredRates`."""

    samples: list[Sample]
    verdict: BoundResult
    metadata: dict[str, Any]
    #: metadata keys that identify the cell and its provenance in the JUnit properties
    PROPERTY_KEYS: ClassVar[tuple[str, ...]] = ()

    def properties(self) -> list[tuple[str, object]]:
        """Name/value pairs for JUnit ``record_property``.

        A NaN or infinite metric is left out (JUnit tools cannot read it; the sample keeps the
        gap as null).  Values are redacted once more here: the JUnit file is uploaded by CI, and
        metadata comes from nodes.
        """
        props: list[tuple[str, object]] = [
            (s.metric, round(s.value, 4)) for s in self.samples if math.isfinite(s.value)
        ]
        props += [("verdict", self.verdict.verdict), ("verdict_reason", self.verdict.reason)]
        props += [(key, self.metadata.get(key)) for key in self.PROPERTY_KEYS]
        # the model's binding limit, when the cell was predicted (harness.prediction.cellmodel)
        if "bottleneck" in self.metadata:
            props.append(("bottleneck", self.metadata["bottleneck"]))
        # which calibration the prediction used: its id, time, and whether reused from a past run
        if "calibration" in self.metadata:
            props.append(("calibration", self.metadata["calibration"]))
        # the validity certificate: its verdict, reason and every figure with threshold and source
        props += [(key, value) for key, value in self.metadata.items() if key.startswith(VALIDITY_PREFIX)]
        return [(key, redact_obj(value)) for key, value in props]
