"""What a finished cell reports: its rates, and its JUnit properties.

Shared by the replicated cells (:class:`harness.cell.CellResult`), the disk-study cells
(:class:`harness.disk.cell.DiskCellResult`) and the failover cell, so they cannot differ in how
a property is redacted or which numbers are left out.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any, ClassVar, Final

from harness.fio.result import DirectionStats
from harness.redact import redact_obj
from harness.rules.bounds import BoundResult
from harness.runfiles.samples import Sample
from harness.units import MIB

__all__ = ["VALIDITY_PREFIX", "CellOutcome", "MeasuredRates", "junit_properties", "property_name", "validity_property"]

#: the metadata keys of a cell's validity certificate start so (``validity``, ``validity.reason``, ...)
VALIDITY_PREFIX = "validity"

#: How a sample's unit ends a JUnit property's name: ``bw_mib_s``, ``clat_p99_ms``; a unit the
#: metric's name already says (``iops``, ``ss_attained``) adds nothing.
_UNIT_SUFFIX: Final = {
    "MiB/s": "mib_s",
    "MiB": "mib",
    "KiB": "kib",
    "ms": "ms",
    "s": "s",
    "%": "percent",
    "ops/s": "per_s",
    "blocks": "blocks",
    "×": "ratio",
    "IOPS": "",
    "0/1": "",
    "0-1": "",  # a fraction (the confidence asked of an interval)
    "runs": "",  # a count of repeats
}


def property_name(metric: str, unit: str) -> str:
    """A metric's JUnit property name, its unit at the end: ``clat_p99`` in ms is ``clat_p99_ms``."""
    suffix = _UNIT_SUFFIX.get(unit)
    if suffix is None:  # a unit not listed: its letters, lower case
        suffix = "_".join("".join(c if c.isalnum() else " " for c in unit.lower()).split())
    return metric if not suffix or metric.endswith(suffix) else f"{metric}_{suffix}"


def validity_property(key: str) -> str:
    """A certificate key's JUnit property name.  The cell-wide figures read as ``verdict`` and
    ``verdict_reason`` do (``validity``, ``validity_reason``, ``validity_unread``); a figure keeps
    its ``validity.<where>.<figure>`` path, the figure's name ending in its unit
    (``validity.a1.cpu_pressure_pct``, with ``.max``, ``.source``, ``.disturbed`` beside it)."""
    parts = key.split(".")
    return "_".join(parts) if len(parts) <= 2 else key


def _text(value: object) -> str | None:
    """A property's value as a CI system shows it: no Python repr (``None``, ``['/dev/sdb']``,
    ``True``); a list is its items joined by commas, a mapping is JSON, nothing is no property."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        items = [_text(v) for v in value]
        return ",".join(i for i in items if i is not None)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return str(value)


def junit_properties(metrics: Iterable[tuple[str, float]], rest: Iterable[tuple[str, object]]) -> list[tuple[str, str]]:
    """JUnit properties: ``metrics`` (name with unit, value) rounded, a NaN or infinite one left
    out (JUnit tools cannot read it; the sample keeps the gap as null), then ``rest`` as text.

    Values are redacted once more here: the JUnit file is uploaded by CI, and metadata comes
    from nodes.
    """
    props = [(name, str(round(value, 4))) for name, value in metrics if math.isfinite(value)]
    for key, value in rest:
        text = _text(redact_obj(value))
        if text is not None:
            props.append((key, text))
    return props


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

    def properties(self) -> list[tuple[str, str]]:
        """Name/value pairs for JUnit ``record_property`` (:func:`junit_properties`)."""
        rest: list[tuple[str, object]] = [("verdict", self.verdict.verdict), ("verdict_reason", self.verdict.reason)]
        rest += [(key, self.metadata.get(key)) for key in self.PROPERTY_KEYS]
        # the model's binding limit, when the cell was predicted (harness.prediction.cellmodel)
        # and which calibration the prediction used: its id, time, and whether reused from a past run
        rest += [(key, self.metadata[key]) for key in ("bottleneck", "calibration") if key in self.metadata]
        # the validity certificate: its verdict, reason and every figure with threshold and source
        rest += [(validity_property(k), v) for k, v in self.metadata.items() if k.startswith(VALIDITY_PREFIX)]
        return junit_properties(((property_name(s.metric, s.unit), s.value) for s in self.samples), rest)
