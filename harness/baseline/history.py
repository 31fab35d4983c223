"""``--baseline-compare history:N``: gate a run on the last N good runs in the results database.

The reference is not one saved run but the newest ``N`` runs of the same inventory that
finished measuring and did not regress (:attr:`~harness.resultsdb.records.StoredRun.good`),
their samples pooled as the repeats of one reference (:func:`~harness.resultsdb.queries.pooled_samples`).
Everything after that is the ordinary gate (:func:`~harness.baseline.gate.run_gate`): per cell
the median's change against the tolerance, and a change counts only when the run's repeats lie
outside the range the history spans, so the history's own run-to-run noise is the noise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from harness.baseline.refs import Side
from harness.errors import ConfigError
from harness.report.results import RunResults
from harness.resultsdb.queries import pooled_samples, run_history
from harness.resultsdb.store import ResultsStore
from harness.runfiles.runinfo import RunInfo

__all__ = ["HISTORY_PREFIX", "MAX_HISTORY_RUNS", "history_runs", "history_side"]

#: ``--baseline-compare`` values starting with this name the history, not a saved baseline.
HISTORY_PREFIX: Final = "history:"
MAX_HISTORY_RUNS: Final = 1000


def history_runs(ref: str) -> int | None:
    """N of ``history:N``; ``None`` when ``ref`` names no history (a baseline name); ConfigError
    for a history reference without a whole number of runs in [1, 1000]."""
    if not ref.startswith(HISTORY_PREFIX):
        return None
    text = ref[len(HISTORY_PREFIX) :]
    if not (text.isascii() and text.isdigit() and len(text) <= 4) or not 1 <= int(text) <= MAX_HISTORY_RUNS:
        raise ConfigError(f"{ref!r}: expected history:N, N the number of good runs to compare with (1–1000)")
    return int(text)


def history_side(store: ResultsStore, inventory: str, runs: int, *, exclude: str | None = None) -> Side:
    """The last ``runs`` good runs of ``inventory`` as one side of a comparison (``exclude``: the
    run being gated); ConfigError when the database has none."""
    history = run_history(store, inventory=inventory, last=runs, good_only=True, exclude=exclude)
    if not history.runs:
        raise ConfigError(
            f"{store.where}: no finished run of inventory {inventory!r} to compare with "
            f"(history:{runs} needs earlier runs in the results database; `harness results import reports/`)"
        )
    profiles = {r.info.profile for r in history.runs}
    info = RunInfo(
        run_id=f"{HISTORY_PREFIX}{runs}",
        inventory_name=inventory,
        profile=profiles.pop() if len(profiles) == 1 else None,
    )
    results = RunResults(tuple(pooled_samples(history)))
    return Side("history", Path(store.where), info, results, history=tuple(history.run_ids))
