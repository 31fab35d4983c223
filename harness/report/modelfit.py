"""How well the model predicted a run: the share of predicted cells within a band of their
prediction, and the worst cells with their binding limit.

Reads samples only (``model_ratio`` = measured / predicted bandwidth, written by
:mod:`harness.prediction.cellmodel`); repeats of a cell are summarised by their median ratio.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from harness.runfiles.samples import Sample, cell_key

__all__ = ["CellFit", "ModelFit", "model_fit"]

#: a prediction within ±20 % of the measurement counts as a fit (the sizing model's acceptance band)
DEFAULT_BAND = 0.20


@dataclass(frozen=True)
class CellFit:
    key: str
    ratio: float  # measured / predicted bandwidth (median over repeats)
    bottleneck: str
    detail: str

    @property
    def error(self) -> float:
        """How far off, symmetric in both directions: 0.5 and 2.0 are equally wrong."""
        return abs(math.log(self.ratio))


@dataclass(frozen=True)
class ModelFit:
    cells: tuple[CellFit, ...]
    band: float

    def within(self, cell: CellFit) -> bool:
        return 1 - self.band <= cell.ratio <= 1 + self.band

    @property
    def fitted(self) -> int:
        return sum(1 for c in self.cells if self.within(c))

    @property
    def share(self) -> float | None:
        return self.fitted / len(self.cells) if self.cells else None

    def worst(self, n: int = 5) -> list[CellFit]:
        return sorted((c for c in self.cells if not self.within(c)), key=lambda c: -c.error)[:n]

    def summary(self) -> list[str]:
        if not self.cells:
            return []
        share = self.share or 0.0
        lines = [
            f"model: {self.fitted} of {len(self.cells)} predicted cells within ±{self.band:.0%} "
            f"of the prediction ({share:.0%})"
        ]
        lines += [f"  off by {c.ratio:.2f}×: {c.key} (model: {c.bottleneck})" for c in self.worst()]
        return lines


def model_fit(samples: Iterable[Sample], band: float = DEFAULT_BAND) -> ModelFit:
    ratios: dict[str, list[float]] = {}
    limits: dict[str, tuple[str, str]] = {}
    for s in samples:
        if s.metric != "model_ratio" or not math.isfinite(s.value) or s.value <= 0:
            continue
        key = cell_key(s.metadata)
        ratios.setdefault(key, []).append(s.value)
        limits[key] = (str(s.metadata.get("bottleneck", "?")), str(s.metadata.get("model_detail", "")))
    cells = tuple(CellFit(key, statistics.median(values), *limits[key]) for key, values in sorted(ratios.items()))
    return ModelFit(cells, band)
