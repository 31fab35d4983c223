"""``harness killcheck``: kill trials, N per signal and phase, as a table (see :mod:`killtrial`)."""

from __future__ import annotations

import signal
import tempfile
from collections.abc import Sequence
from pathlib import Path

from tabulate import tabulate

from harness.bench.killtrial import CellKind, KillTrial, Phase, run_kill_trial
from harness.errors import HarnessError
from harness.inventory import load_inventory
from harness.lab.lifecycle import Lab
from harness.progress import Progress

__all__ = ["run_killcheck"]


def run_killcheck(
    path: Path,
    *,
    trials: int,
    signals: Sequence[str],
    progress: Progress,
    cells: Sequence[CellKind] = ("impaired",),
    deadman_grace_s: float | None = None,
) -> int:
    """Exit code 0 when every trial ended with nothing left on the nodes and, for SIGKILL,
    the replication path was clean within the cell's fio deadline + the dead-man grace; 1
    otherwise.  ``deadman_grace_s`` None runs the cells with the harness's default."""
    inventory = load_inventory(path)
    if inventory.lab is not None:
        lab = Lab(inventory, path, progress=progress)
        state = lab.state()
        if state is None or state.phase != "up":
            raise HarnessError("bring the lab up first (`harness lab up`): a killed run must not own it")
    rows = []
    root = Path(__file__).resolve().parents[2]  # the checkout: scenarios/ is run from there
    with tempfile.TemporaryDirectory(prefix="harness-killcheck-") as tmp:
        for cell in cells:
            for sig in (signal.Signals[f"SIG{name}"] for name in signals):
                for phase in PHASES[cell]:
                    for i in range(trials):
                        trial = run_kill_trial(
                            root, path, inventory, sig=sig, phase=phase, reports=Path(tmp), cell=cell,
                            deadman_grace_s=deadman_grace_s,
                        )  # fmt: skip
                        progress(_line(trial, i))
                        rows.append(_row(trial, i))
    print(tabulate(rows, headers=HEADERS))
    return 0 if all(_ok(row) for row in rows) else 1


#: the phases worth a kill per cell: an unimpaired cell has no fault; a partition's fio
#: started before its cut, so its fault is the phase
PHASES: dict[CellKind, tuple[Phase, ...]] = {
    "impaired": ("impairment", "fio"),
    "unimpaired": ("fio",),
    "partition": ("impairment",),
}

HEADERS = [
    "cell",
    "signal",
    "phase",
    "trial",
    "exit",
    "exit s",
    "left at exit",
    "left finally",
    "path clean s",
    "bound s",
    "s until clean",
    "restarts",
]


def _fmt(value: float | None) -> float | str:
    return "-" if value is None else round(value, 1)


def _row(trial: KillTrial, i: int) -> list[object]:
    return [
        trial.cell,
        trial.signal,
        trial.phase,
        i + 1,
        trial.exit_code,
        round(trial.exit_s, 1),
        len(trial.leftovers_at_exit),
        len(trial.leftovers_final),
        _fmt(trial.path_clean_s),
        _fmt(trial.bound_s),
        round(trial.waited_s),
        len(trial.early_exits),
    ]


def _ok(row: list[object]) -> bool:
    clean, path_clean, bound = row[7] == 0, row[8], row[9]
    in_time = not isinstance(path_clean, float) or not isinstance(bound, float) or path_clean <= bound
    return clean and in_time


def _line(trial: KillTrial, i: int) -> str:
    return (
        f"killcheck: {trial.cell} cell, {trial.signal} during {trial.phase} #{i + 1}: exit {trial.exit_code} "
        f"after {trial.exit_s:.1f} s, left at exit {len(trial.leftovers_at_exit)}, "
        f"finally {len(trial.leftovers_final)} after {trial.waited_s:.0f} s; path clean after "
        f"{_fmt(trial.path_clean_s)} s (bound {_fmt(trial.bound_s)} s)"
        + "".join(f"\n  (restarted: {reason})" for reason in trial.early_exits)
    )
