"""What a ``RUN_OR_BASELINE`` argument refers to, loaded as one side of a comparison.

Accepted, in this order (a bare word is never taken for a directory of the current one, so a
folder that happens to be called ``main`` cannot shadow the baseline ``main``):

1. a path (it has a ``/`` or starts with ``.``): a run directory
   (``reports/20261121-101500-ab12``) or a baseline directory (``reports/baselines/lab/main``);
2. ``latest``: the newest run (``reports/latest``);
3. a run id under the reports root;
4. a saved baseline's name (of the given inventory, or the only one with that name).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from harness.baseline.store import BaselineInfo, BaselineStore, validate_name
from harness.errors import ConfigError
from harness.report.aggregate import Cell
from harness.report.results import RunResults
from harness.runfiles.rundir import LATEST, RunDir, list_runs
from harness.runfiles.runid import is_run_id
from harness.runfiles.runinfo import RunInfo
from harness.runfiles.samples import Sample

__all__ = ["Side", "resolve_reference", "resolve_run"]


@dataclass(frozen=True)
class Side:
    """One side of a comparison: a run or a baseline, with its results and run record."""

    kind: Literal["run", "baseline", "history"]
    path: Path
    info: RunInfo
    results: RunResults = field(repr=False)
    baseline: BaselineInfo | None = None
    #: For a history side (``--baseline-compare history:N``): the run ids it pools, oldest first.
    history: tuple[str, ...] = ()

    @property
    def samples(self) -> Sequence[Sample]:
        return self.results.samples

    @property
    def cells(self) -> list[Cell]:
        return self.results.cells

    @property
    def inventory_name(self) -> str | None:
        if self.baseline is not None:
            return self.baseline.inventory
        if self.info.inventory_name:
            return self.info.inventory_name
        names = {str(s.metadata["inventory"]) for s in self.samples if s.metadata.get("inventory")}
        return names.pop() if len(names) == 1 else None

    def describe(self) -> str:
        """``baseline `main` (inventory `lab`, run `…`, saved …)`` or ``run `…```: for report headers."""
        if self.baseline is not None:
            b = self.baseline
            return f"baseline `{b.name}` (inventory `{b.inventory}`, run `{b.run_id}`, saved {b.saved})"
        if self.kind == "history":
            runs = ", ".join(f"`{r}`" for r in self.history)
            return f"the last {len(self.history)} good runs of inventory `{self.inventory_name}` ({runs})"
        inventory = f" (inventory `{self.inventory_name}`)" if self.inventory_name else ""
        return f"run `{self.info.run_id}`{inventory}"

    @classmethod
    def of_run(cls, run: RunDir, results: RunResults | None = None, info: RunInfo | None = None) -> Side:
        """``run`` as a side; ``results`` and ``info`` when they are in memory already (the end of
        a pytest run), read from the run directory otherwise."""
        if results is None:
            results = RunResults.read(run)
        return cls("run", run.path, run.run_info() if info is None else info, results)

    @classmethod
    def of_baseline(cls, baseline: BaselineInfo) -> Side:
        info = baseline.run or RunInfo(run_id=baseline.run_id, inventory_name=baseline.inventory)
        return cls("baseline", baseline.path, info, RunResults(tuple(baseline.read_samples())), baseline)


def _is_path(ref: str) -> bool:
    return "/" in ref or ref.startswith(".")


def _is_run_under(reports_root: Path, ref: str) -> bool:
    # Only a valid run id names a run under the reports root: reports/baselines/ is no run.
    return not _is_path(ref) and is_run_id(ref) and (reports_root / ref).is_dir()


def resolve_run(reports_root: Path, ref: str) -> RunDir:
    """A run directory from a path, ``latest`` or a run id; ConfigError naming the choices otherwise."""
    path = Path(ref)
    if ref == LATEST:
        latest = reports_root / LATEST
        if not latest.exists():
            raise ConfigError(f"{latest}: no runs yet (nothing has pointed {LATEST} at a run)")
        return RunDir.open(latest)
    if _is_path(ref) and path.is_dir():
        return RunDir.open(path)
    if _is_run_under(reports_root, ref):
        return RunDir.open(reports_root / ref)
    recent = ", ".join(r.run_id for r in list_runs(reports_root)[-3:]) or "none"
    raise ConfigError(f"{ref!r}: not a run directory, a run id under {reports_root} or {LATEST} (newest: {recent})")


def resolve_reference(reports_root: Path, ref: str, inventory: str | None = None) -> Side:
    """Load ``ref`` (see the module docstring); ``inventory`` picks among same-named baselines."""
    path = Path(ref)
    if _is_path(ref) and (path / "baseline.json").is_file():
        return Side.of_baseline(BaselineInfo.read(path))
    if ref == LATEST or _is_path(ref) or _is_run_under(reports_root, ref):
        return Side.of_run(resolve_run(reports_root, ref))
    try:
        validate_name(ref)
    except ConfigError:
        raise ConfigError(
            f"{ref!r}: not a run directory, a run id under {reports_root}, {LATEST}, or a baseline name"
        ) from None
    store = BaselineStore(reports_root)
    try:
        return Side.of_baseline(store.find(ref, inventory))
    except ConfigError as exc:
        if inventory is None:
            raise ConfigError(f"{ref!r} is not a run directory or run id, and {exc}") from None
        first = exc
    try:
        # Not saved for this inventory, but perhaps for exactly one other (comparing two
        # clusters on purpose); the comparison then warns that the inventories differ.
        return Side.of_baseline(store.find(ref))
    except ConfigError:
        raise ConfigError(f"{ref!r} is not a run directory or run id, and {first}") from None
