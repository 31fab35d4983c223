"""What the results database holds about a run, as Python values: one run going in, one run read back.

:class:`RunRecord` is everything one run puts in the database, built once from the run's
:class:`~harness.report.results.RunResults` and :class:`~harness.runfiles.runinfo.RunInfo`
(:func:`record_of`): its samples as they are, and per cell the verdict, provenance and the
model's prediction, taken from the same aggregation the reports use.  :class:`StoredRun` is a
run's row as read back.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from harness.report.aggregate import Cell
from harness.report.results import RunResults
from harness.runfiles.runinfo import RunInfo
from harness.runfiles.samples import PROVENANCE_KEYS, Sample

__all__ = ["GOOD_EXIT", "CellRow", "PredictionRow", "RunRecord", "Source", "StoredRun", "record_of"]

Source = Literal["run", "import"]

#: pytest exit statuses of a run that finished measuring (tests passed, or some failed their
#: bounds); an interrupted, refused or broken run is never history a gate compares with.
GOOD_EXIT: Final = (0, 1)
_PREDICTED: Final = ("predicted_bw", "predicted_iops", "model_ratio")


@dataclass(frozen=True)
class CellRow:
    """One cell of a run: identity, verdict and provenance."""

    key: str
    identity: Mapping[str, str]
    verdict: str | None
    verdict_reason: str | None
    repeats: int
    provenance: Mapping[str, str]


@dataclass(frozen=True)
class PredictionRow:
    """The model's prediction for one cell (medians over repeats) and its binding limit."""

    key: str
    predicted_bw: float | None
    predicted_iops: float | None
    model_ratio: float | None
    bottleneck: str | None


@dataclass(frozen=True)
class RunRecord:
    """One run, as it goes into the database in one transaction."""

    info: RunInfo
    samples: Sequence[Sample] = field(repr=False)
    cells: tuple[CellRow, ...] = ()
    predictions: tuple[PredictionRow, ...] = ()
    #: The baseline gate's overall verdict (``regressed``, ``pass``...), when the run was gated.
    gate: str | None = None
    source: Source = "run"

    @property
    def run_id(self) -> str:
        return self.info.run_id

    @property
    def inventory_name(self) -> str | None:
        """run.json's inventory name; for a record without one, the samples' own (if they agree)."""
        if self.info.inventory_name:
            return self.info.inventory_name
        names = {str(s.metadata["inventory"]) for s in self.samples if s.metadata.get("inventory")}
        return names.pop() if len(names) == 1 else None


@dataclass(frozen=True)
class StoredRun:
    """A complete run as read back from the database."""

    info: RunInfo
    inventory_name: str | None
    gate: str | None
    source: Source

    @property
    def run_id(self) -> str:
        return self.info.run_id

    @property
    def good(self) -> bool:
        """A run a history gate may compare with: it finished measuring and did not regress."""
        return self.info.exitstatus in GOOD_EXIT and self.gate != "regressed"


def _median(cell: Cell, metric: str) -> float | None:
    value = cell.median(metric)
    return value if value is not None and math.isfinite(value) else None


def _cell_row(cell: Cell) -> CellRow:
    provenance = {k: cell.value_text(k) for k in PROVENANCE_KEYS if cell.value_text(k)}
    return CellRow(cell.key, cell.identity, cell.verdict, cell.verdict_reason, len(cell.repeats), provenance)


def _prediction_row(cell: Cell) -> PredictionRow | None:
    values = [_median(cell, m) for m in _PREDICTED]
    if all(v is None for v in values):
        return None
    bottleneck = cell.value_text("bottleneck") or None
    return PredictionRow(cell.key, values[0], values[1], values[2], bottleneck)


def record_of(info: RunInfo, results: RunResults, *, gate: str | None = None, source: Source = "run") -> RunRecord:
    """The database record of a run, from what the end of the run (or an import) read once."""
    cells = results.cells
    predictions = tuple(p for p in (_prediction_row(c) for c in cells) if p is not None)
    return RunRecord(info, results.samples, tuple(_cell_row(c) for c in cells), predictions, gate, source)
