"""The end of a run's write into the results database: one call, one transaction, one line to say.

:class:`~harness.plugin.runend.RunEnd` calls :func:`write_results` once, in the controller, with
the results it read once and the run's final record (run.json as written) and gate verdict.
A database that cannot be written is reported, never a lost run: the NDJSON files in
``reports/<run-id>/`` stay the run's export, and ``harness results import`` can add the run later.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.errors import HarnessError
from harness.report.results import RunResults
from harness.resultsdb.location import ResultsDb
from harness.resultsdb.records import record_of
from harness.runfiles.runinfo import RunInfo

__all__ = ["WriteOutcome", "write_results"]


@dataclass(frozen=True)
class WriteOutcome:
    """What the write did, for the terminal summary; ``error`` when it did nothing."""

    line: str
    error: HarnessError | None = None


def write_results(db: ResultsDb, info: RunInfo, results: RunResults, *, gate: str | None = None) -> WriteOutcome:
    """Write one finished run (replacing nothing: a run id is written once)."""
    record = record_of(info, results, gate=gate)
    try:
        with db.open() as store:
            store.write_run(record)
    except HarnessError as exc:
        where = " --results-db URL" if db.url else ""
        hint = f"harness results import <reports>/{info.run_id}{where}"
        return WriteOutcome(f"results db: NOT written ({exc}); add it later with `{hint}`", exc)
    cells = len(record.cells)
    return WriteOutcome(
        f"results db: run {info.run_id} written to {db.describe()} ({len(record.samples)} samples, {cells} cells)"
    )
