"""What one run measured, in memory: its samples read once, and what is computed from them once.

The end of a pytest run, ``harness report`` and ``harness compare`` each read a run's
samples.ndjson (and series.ndjson) exactly once into a :class:`RunResults`, then hand that same
object to everything that needs it: the tables and the HTML page, the plots, the relative bounds
and the model-fit line of the terminal summary, the baseline gate and the baseline save.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from harness.errors import ConfigError
from harness.report.aggregate import Cell, aggregate_samples
from harness.report.comparison import Comparison, build_comparison
from harness.runfiles.rundir import RunDir
from harness.runfiles.samples import Sample, read_samples
from harness.runfiles.series import CellSeries

__all__ = ["RunResults"]


@dataclass(frozen=True, eq=False)
class RunResults:
    """A run's samples and per-second series; cells and comparison tables computed on first use."""

    samples: Sequence[Sample] = field(repr=False)
    series: Sequence[CellSeries] = field(default=(), repr=False)

    @classmethod
    def read(cls, run: RunDir) -> RunResults:
        """The one read of ``run``'s samples.ndjson and series.ndjson; ConfigError when it has no samples."""
        if not run.samples_ndjson.exists():
            raise ConfigError(
                f"{run.path}: no samples.ndjson — not a run directory, "
                "or the run was interrupted before any cell finished"
            )
        return cls(tuple(read_samples(run.samples_ndjson)), tuple(run.read_series()))

    @cached_property
    def cells(self) -> list[Cell]:
        """The samples aggregated per cell (repeats as median and spread)."""
        return aggregate_samples(self.samples)

    @cached_property
    def comparison(self) -> Comparison:
        """The comparison tables of :attr:`cells`."""
        return build_comparison(self.cells)
