"""Questions the history asks of the results database: an inventory's last runs, cell by cell.

:func:`run_history` reads the newest complete runs of one inventory and aggregates each run's
samples into cells exactly as that run's own report did (:class:`~harness.report.results.RunResults`),
so a history point is the number the run's table showed.  :func:`pooled_samples` puts the runs
a history gate compares with into one set of samples, each run's repeats numbered apart, so the
baseline comparison sees them as the repeats of one reference.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property

from harness.errors import ConfigError
from harness.report.aggregate import Cell
from harness.report.results import RunResults
from harness.resultsdb.records import StoredRun
from harness.resultsdb.store import ResultsStore
from harness.runfiles.samples import Sample

__all__ = ["RunHistory", "inventories", "pooled_samples", "run_history"]

#: Repeat numbers of one run in a pool are offset by this, so runs never share a repeat index.
_REPEAT_STRIDE = 10_000


@dataclass(frozen=True, eq=False)
class RunHistory:
    """Complete runs of one inventory, oldest first, each with its results."""

    inventory: str | None
    runs: tuple[StoredRun, ...]
    results: Mapping[str, RunResults] = field(repr=False)

    @cached_property
    def cells(self) -> Mapping[str, Mapping[str, Cell]]:
        """Per run id, its cells by key."""
        return {r.run_id: {c.key: c for c in self.results[r.run_id].cells} for r in self.runs}

    @property
    def run_ids(self) -> list[str]:
        return [r.run_id for r in self.runs]


def inventories(store: ResultsStore) -> list[str]:
    """The inventory names of the database's runs."""
    return sorted({r.inventory_name for r in store.runs() if r.inventory_name})


def _pick_inventory(store: ResultsStore, inventory: str | None) -> str | None:
    if inventory is not None:
        return inventory
    names = inventories(store)
    if len(names) > 1:
        several = ", ".join(names)
        raise ConfigError(f"{store.where}: runs of several inventories ({several}): choose one with --inventory")
    return names[0] if names else None


def run_history(
    store: ResultsStore,
    *,
    inventory: str | None = None,
    last: int | None = None,
    good_only: bool = False,
    exclude: str | None = None,
) -> RunHistory:
    """The newest ``last`` complete runs of ``inventory`` (the only one in the database when not
    given); with ``good_only`` only runs a gate may compare with (:attr:`StoredRun.good`), and
    never run ``exclude`` (the run being gated)."""
    name = _pick_inventory(store, inventory)
    runs = [r for r in store.runs(inventory=name) if r.run_id != exclude and (r.good or not good_only)]
    if last is not None:
        runs = runs[-last:] if last > 0 else []
    return RunHistory(name, tuple(runs), {r.run_id: RunResults(tuple(store.samples(r.run_id))) for r in runs})


def _renumbered(sample: Sample, index: int) -> Sample:
    meta = dict(sample.metadata)
    try:
        repeat = int(meta.get("repeat", 0))
    except (TypeError, ValueError):
        repeat = 0
    meta["repeat"] = index * _REPEAT_STRIDE + repeat
    return replace(sample, metadata=meta)


def pooled_samples(history: RunHistory) -> list[Sample]:
    """Every sample of ``history``'s runs as repeats of one reference (each run's repeats kept apart)."""
    out: list[Sample] = []
    for index, run in enumerate(history.runs):
        out.extend(_renumbered(s, index) for s in history.results[run.run_id].samples)
    return out
