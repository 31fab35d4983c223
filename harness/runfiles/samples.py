"""The one result record: ``Sample(metric, value, unit, metadata)``, and its NDJSON store.

After PerfKitBenchmarker's ``sample.Sample``: every number the harness produces is one flat
record, and the same records feed JUnit properties, the terminal table, CSV/Markdown/HTML,
plots and baselines.  ``metadata`` carries the cell's identity and provenance (see
:data:`IDENTITY_KEYS` and :data:`PROVENANCE_KEYS`); values are JSON scalars or small dicts.

The store appends one JSON object per line to ``reports/<run-id>/samples.ndjson``.  Several
xdist workers append to the same file, so each append takes a file lock.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import ConfigError
from harness.limits import MAX_TIMESTAMP
from harness.redact import redact, redact_obj
from harness.runfiles.ndjson import NdjsonFile, read_ndjson
from harness.userfiles.jsonsafe import dumps, loads

__all__ = [
    "CALIBRATION_SCENARIO",
    "IDENTITY_KEYS",
    "METRICS",
    "PROVENANCE_KEYS",
    "SIGNED_METRICS",
    "Sample",
    "SampleStore",
    "cell_key",
    "measured_value",
    "read_samples",
    "timestamp_value",
]

#: Metrics a measurement cell records, with their units.
METRICS: dict[str, str] = {
    "bw": "MiB/s",
    "iops": "IOPS",
    "clat_mean": "ms",
    "clat_p50": "ms",
    "clat_p99": "ms",
    "clat_p999": "ms",
    "rtt": "ms",
    "runtime": "s",
    "wall": "s",
    "overhead": "s",
    "fio_overhead": "s",
    "predicted_bw": "MiB/s",
    "predicted_iops": "IOPS",
    "model_ratio": "×",  # measured / predicted bandwidth
    "ss_attained": "0/1",  # fio's steady-state criterion met (precondition cells)
    # --repeat auto (harness.cell.autorepeat): the repeats a cell needed, the confidence asked
    # for, the interval's method (1 lognormal, 0 order-statistic) and the interval of its median
    # bandwidth at that confidence
    "repeats_needed": "runs",
    "interval_confidence": "0-1",
    "interval_lognormal": "0/1",
    "interval_low": "MiB/s",
    "interval_high": "MiB/s",
    # the test's own assertion failed after its cell had passed (harness.plugin.verdicts)
    "assertion_failed": "0/1",
    "lost_writes": "blocks",
    "acked_writes": "blocks",
    # bonnie++ (harness.bonnie): seeks and file create/stat/delete per second, each phase's
    # %CPU (above 100 with several seeker processes) and its longest single operation
    "ops": "ops/s",
    "cpu": "%",
    "lat_max": "ms",
    # the partition cell (harness.cell.partition)
    "cut": "s",  # how long the replication path was cut
    "stall": "s",  # the longest write while it was cut
    "detect": "s",  # until the primary declared the peer lost
    "behind": "MiB",  # out of sync on the primary when the path healed
    "resync_time": "s",  # from the heal until both replicas were current again
    "verify_out_of_sync": "KiB",  # what online verify found different afterwards
    # the quorum cell (harness.cell.quorum)
    "refused_after": "s",  # from the cut until the first write failed with an I/O error
    "acked_after_loss": "blocks",  # writes acknowledged after that while the cut lasted (must be 0)
    "resumed_after": "s",  # from the heal until a write was acknowledged again
    "io_errors": "blocks",  # writes that failed in the cell
    # the durability map (harness.durability.durmap): per product, mode, placement and fault
    "trials": "trials",  # crash trials run
    "torn_writes": "blocks",  # blocks found holding parts of several writes
    "max_lost": "blocks",  # the most acknowledged writes one trial lost
    "loss_bound": "blocks",  # the most one trial may lose, by the mode's model
    "over_bound": "trials",  # trials that lost more than their bound (must be 0)
    "recovery_max": "s",  # the longest recovery of a trial
}

#: The scenario of the calibration cells (harness.prediction.calibrate): the model's inputs, which
#: no test reports.
CALIBRATION_SCENARIO = "calibration"

#: Metadata that identifies a cell across runs (baselines match on these, never on nodeids).
IDENTITY_KEYS = ("scenario", "pair", "mode", "workload", "impairment")

#: Metadata that explains a number; a baseline comparison warns when these differ.
PROVENANCE_KEYS = (
    "fio_version",
    "kernel",
    "drbd_version",
    "protocol",
    "instance_type_primary",
    "instance_type_secondary",
    "placement",
)


def cell_key(metadata: Mapping[str, Any]) -> str:
    """Stable identity of a cell, e.g. ``replicated_write/multi-az/replicated/randwrite-4k-nj8-qd1/none``."""
    return "/".join(str(metadata.get(k, "-")) for k in IDENTITY_KEYS)


#: Metrics that can be negative: the harness's overhead is a difference of two clocks.  Every
#: other metric is a rate, a latency, a time or a count, and a negative one is a corrupt file.
SIGNED_METRICS: frozenset[str] = frozenset({"overhead", "fio_overhead"})
_CORRUPT = "a corrupt file: restore it from a copy, or measure again"


def measured_value(metric: str, unit: str, raw: Any) -> float:
    """A sample's value as read back: a number (``null`` is a gap: NaN), finite, and not
    negative unless the metric can be (ValueError naming the metric otherwise)."""
    if raw is None:
        return math.nan
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise ValueError(f"{metric} value {raw!r} is not a number ({_CORRUPT})")
    try:
        value = float(raw)
    except OverflowError:
        value = math.inf
    if not math.isfinite(value):
        raise ValueError(f"{metric} {value:g} {unit} is not a finite number ({_CORRUPT})")
    if value < 0 and metric not in SIGNED_METRICS:
        raise ValueError(f"{metric} {value:g} {unit} is negative ({_CORRUPT})")
    return value


def timestamp_value(raw: Any) -> float:
    """A sample's Unix time as read back: a number from 1970 to the year 9999 (ValueError otherwise)."""
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 <= raw <= MAX_TIMESTAMP:
        raise ValueError(f"timestamp {raw!r} is no time between 1970 and 9999 ({_CORRUPT})")
    return float(raw)


@dataclass(frozen=True)
class Sample:
    """One measured (or derived) number with everything needed to interpret it."""

    metric: str
    value: float
    unit: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    timestamp: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        # Metadata quotes nodes and fio (verdict reasons, validity, versions): redacted when a
        # sample is made or read, so every writer downstream (NDJSON, tables, HTML, baselines)
        # gets the same clean text, and an old run's file is cleaned on its way through.
        object.__setattr__(self, "metadata", redact_obj(self.metadata))
        object.__setattr__(self, "metric", redact(self.metric))  # a damaged file's metric may be any text
        object.__setattr__(self, "unit", redact(self.unit))

    def to_json(self) -> str:
        # NaN (fio reported no such number) is written as null and read back as NaN
        return dumps(
            {
                "metric": self.metric,
                "value": self.value,
                "unit": self.unit,
                "timestamp": self.timestamp,
                "metadata": self.metadata,
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, line: str) -> Sample:
        """One NDJSON line, checked: a corrupt measurement (negative bandwidth, ``Infinity``,
        text for a number) is a ValueError, never a number that compares as a regression."""
        return cls.from_dict(loads(line))

    @classmethod
    def from_dict(cls, data: Any) -> Sample:
        """A record as read back (an NDJSON line's object, a results database row), checked as
        :meth:`from_json` checks it."""
        if not isinstance(data, dict) or not isinstance(data.get("metadata") or {}, dict):
            raise ValueError("expected an object with metric, value, unit and metadata")
        metric, unit = data["metric"], data["unit"]
        if not (isinstance(metric, str) and isinstance(unit, str)):
            raise ValueError(f"metric and unit must be text, not {type(metric).__name__} and {type(unit).__name__}")
        return cls(
            metric=metric,
            value=measured_value(metric, unit, data["value"]),
            unit=unit,
            metadata=dict(data.get("metadata") or {}),
            timestamp=timestamp_value(data.get("timestamp", 0.0)),
        )

    @property
    def cell(self) -> str:
        return cell_key(self.metadata)


class SampleStore:
    """Append-only NDJSON file of samples, safe for concurrent writers on one host."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = NdjsonFile(path)

    def append(self, samples: Iterable[Sample]) -> None:
        self._file.append(s.to_json() for s in samples)

    def __iter__(self) -> Iterator[Sample]:
        return iter(read_samples(self.path))


def read_samples(path: Path) -> list[Sample]:
    """All samples in an NDJSON file; a malformed or corrupt line is a ConfigError naming
    file:line, and so is a file with no sample at all (a run writes the file with its first
    cell, so an empty one was truncated or made by hand)."""
    samples = read_ndjson(
        path,
        Sample.from_json,
        what="sample",
        missing="no samples file (was the run interrupted before any cell finished?)",
    )
    if not samples:
        raise ConfigError(f"{path}: empty — no sample in it (a run writes it with its first cell; {_CORRUPT})")
    return samples
