"""``harness killcheck``: kill trials, N per signal and phase, as a table (see :mod:`killtrial`)."""

from __future__ import annotations

import signal
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from tabulate import tabulate

from harness.errors import HarnessError
from harness.inventory import load_inventory
from harness.lab.lifecycle import Lab
from harness.safety.killtrial import run_kill_trial

__all__ = ["run_killcheck"]


def run_killcheck(path: Path, *, trials: int, signals: Sequence[str], progress: Callable[[str], None]) -> int:
    """Exit code 0 when every trial ended with nothing left on the nodes, 1 otherwise."""
    inventory = load_inventory(path)
    if inventory.lab is not None:
        lab = Lab(inventory, path, progress=progress)
        state = lab.state()
        if state is None or state.phase != "up":
            raise HarnessError("bring the lab up first (`harness lab up`): a killed run must not own it")
    rows = []
    root = Path(__file__).resolve().parents[2]  # the checkout: scenarios/ is run from there
    with tempfile.TemporaryDirectory(prefix="harness-killcheck-") as tmp:
        for sig in (signal.Signals[f"SIG{name}"] for name in signals):
            for phase in ("impairment", "fio"):
                for i in range(trials):
                    trial = run_kill_trial(
                        root,
                        path,
                        inventory,
                        sig=sig,
                        phase=phase,
                        reports=Path(tmp),
                    )
                    progress(
                        f"killcheck: {sig.name} during {phase} #{i + 1}: exit {trial.exit_code} "
                        f"after {trial.exit_s:.1f} s, left at exit {len(trial.leftovers_at_exit)}, "
                        f"finally {len(trial.leftovers_final)} after {trial.waited_s:.0f} s"
                        + "".join(f"\n  (restarted: {reason})" for reason in trial.early_exits)
                    )
                    rows.append(
                        [
                            sig.name,
                            phase,
                            i + 1,
                            trial.exit_code,
                            round(trial.exit_s, 1),
                            len(trial.leftovers_at_exit),
                            len(trial.leftovers_final),
                            round(trial.waited_s),
                            len(trial.early_exits),
                        ]
                    )
    print(
        tabulate(
            rows,
            headers=[
                "signal",
                "phase",
                "trial",
                "exit",
                "exit s",
                "left at exit",
                "left finally",
                "s until clean",
                "restarts",
            ],
        )
    )
    return 0 if all(r[6] == 0 for r in rows) else 1
