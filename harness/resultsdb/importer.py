"""``harness results import reports/``: existing run directories into the results database.

Each run directory's run.json and samples.ndjson are read as the end of a run reads them
(:class:`~harness.report.results.RunResults`) and written as one run, in one transaction, with
``source = import``.  A run already in the database is skipped (``replace`` writes it again); a
directory without run.json (a run that was interrupted before its end) or without samples is
skipped with the reason: the database holds finished runs only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from harness.errors import ConfigError
from harness.report.results import RunResults
from harness.resultsdb.records import record_of
from harness.resultsdb.store import ResultsStore, RunExistsInStore
from harness.runfiles.rundir import RunDir, list_runs

__all__ = ["ImportedRun", "import_runs", "run_dirs_under"]

Status = Literal["imported", "replaced", "present", "skipped"]


@dataclass(frozen=True)
class ImportedRun:
    run_id: str
    status: Status
    detail: str = ""

    def line(self) -> str:
        return f"{self.status:9} {self.run_id}" + (f": {self.detail}" if self.detail else "")


def run_dirs_under(path: Path) -> list[RunDir]:
    """``path`` itself when it is a run directory, else the run directories in it (oldest first)."""
    if not path.is_dir():
        raise ConfigError(f"{path}: no such directory (expected a reports root or a run directory)")
    single = RunDir(path.resolve())
    if single.run_json.exists() or single.samples_ndjson.exists():
        return [single]
    return list_runs(path)


def _import_one(store: ResultsStore, run: RunDir, replace: bool) -> ImportedRun:
    try:
        info = run.read_run_info()
    except ConfigError as exc:
        return ImportedRun(run.run_id, "skipped", str(exc))
    if info is None:
        return ImportedRun(run.run_id, "skipped", "no run.json (the run did not reach its end)")
    if not run.samples_ndjson.exists():
        return ImportedRun(run.run_id, "skipped", "no samples.ndjson (no cell finished)")
    existed = store.has_run(info.run_id)
    if existed and not replace:
        return ImportedRun(info.run_id, "present", "in the database already")
    try:
        results = RunResults.read(run)
    except ConfigError as exc:
        return ImportedRun(run.run_id, "skipped", str(exc))
    try:
        store.write_run(record_of(info, results, source="import"), replace=replace)
    except RunExistsInStore:  # written by a run finishing meanwhile
        return ImportedRun(info.run_id, "present", "in the database already")
    what = f"{len(results.samples)} samples, {len(results.cells)} cells"
    return ImportedRun(info.run_id, "replaced" if existed else "imported", what)


def import_runs(
    store: ResultsStore,
    path: Path,
    *,
    replace: bool = False,
    progress: Callable[[ImportedRun], None] | None = None,
) -> list[ImportedRun]:
    """Import every run directory at ``path`` (a reports root or one run); one outcome per run."""
    out = []
    for run in run_dirs_under(path):
        outcome = _import_one(store, run, replace)
        if progress is not None:
            progress(outcome)
        out.append(outcome)
    return out
