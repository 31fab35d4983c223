"""How well the model predicted a run: the share of predicted cells within a band of their
prediction, and the worst cells with their binding limit.

Reads samples only (``model_ratio`` = measured / predicted bandwidth, written by
:mod:`harness.prediction.cellmodel`); repeats of a cell are summarised by their median ratio.

A cell measured while something else was in the way (its validity certificate disturbed, on any
repeat) says nothing about the model: the fit leaves it out and names it with its reason, and
gives the share with it beside, so a busy host's effect on the figure shows.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from harness.report.validity import cell_validity
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
    #: the certificate's reason when a repeat of the cell was disturbed (None: certified clean or not certified)
    disturbed: str | None = None

    @property
    def error(self) -> float:
        """How far off, symmetric in both directions: 0.5 and 2.0 are equally wrong."""
        return abs(math.log(self.ratio))


@dataclass(frozen=True)
class ModelFit:
    #: every predicted cell, the disturbed ones among them
    all_cells: tuple[CellFit, ...]
    band: float

    @property
    def cells(self) -> tuple[CellFit, ...]:
        """The cells the fit is judged on: every predicted cell not disturbed."""
        return tuple(c for c in self.all_cells if c.disturbed is None)

    @property
    def left_out(self) -> tuple[CellFit, ...]:
        return tuple(c for c in self.all_cells if c.disturbed is not None)

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
        if not self.all_cells:
            return []
        share = self.share or 0.0
        lines = [
            f"model: {self.fitted} of {len(self.cells)} predicted cells within ±{self.band:.0%} "
            f"of the prediction ({share:.0%})"
        ]
        left = self.left_out
        if left:
            with_them = sum(1 for c in self.all_cells if self.within(c))
            lines[0] += (
                f"; {len(left)} disturbed cell{'s' if len(left) != 1 else ''} left out (with them: "
                f"{with_them} of {len(self.all_cells)}, {with_them / len(self.all_cells):.0%})"
            )
            lines += [f"  left out: {c.key}: disturbed: {c.disturbed}" for c in left[:5]]
        lines += [f"  off by {c.ratio:.2f}×: {c.key} (model: {c.bottleneck})" for c in self.worst()]
        return lines


def model_fit(samples: Iterable[Sample], band: float = DEFAULT_BAND) -> ModelFit:
    ratios: dict[str, list[float]] = {}
    limits: dict[str, tuple[str, str]] = {}
    metadata: dict[str, list[Mapping[str, Any]]] = {}
    for s in samples:
        if s.metric != "model_ratio" or not math.isfinite(s.value) or s.value <= 0:
            continue
        key = cell_key(s.metadata)
        ratios.setdefault(key, []).append(s.value)
        limits[key] = (str(s.metadata.get("bottleneck", "?")), str(s.metadata.get("model_detail", "")))
        metadata.setdefault(key, []).append(s.metadata)
    cells = []
    for key, values in sorted(ratios.items()):
        validity = cell_validity(metadata[key])
        disturbed = (validity.reason or "disturbed") if validity.status == "disturbed" else None
        cells.append(CellFit(key, statistics.median(values), *limits[key], disturbed))
    return ModelFit(tuple(cells), band)
