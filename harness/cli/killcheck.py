"""``harness killcheck``: kill a running scenario cell and time how the nodes clean up."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.argtypes import number

__all__ = ["add_killcheck_arguments", "killcheck_command"]

_TRIALS = number(int, 1, 1000, what="trials")


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def killcheck_command(args: argparse.Namespace) -> int:
    from harness.bench.killcheck import run_killcheck

    return run_killcheck(
        Path(args.inventory),
        trials=args.trials,
        signals=args.signals,
        progress=_progress,
        cells=args.cells,
        deadman_grace_s=args.deadman_grace,
    )


def add_killcheck_arguments(kill: argparse.ArgumentParser, default_inventory: Path) -> None:
    kill.add_argument("--inventory", default=str(default_inventory))
    kill.add_argument("--trials", type=_TRIALS, default=5, help="trials per signal and phase (default: %(default)s)")
    kill.add_argument(
        "--signals",
        nargs="+",
        choices=["INT", "TERM", "KILL"],
        default=["INT", "TERM", "KILL"],
        help="which signals to send (default: all three)",
    )
    kill.add_argument(
        "--cells",
        nargs="+",
        choices=["impaired", "unimpaired", "partition"],
        default=["impaired"],
        help="which cells to kill (default: %(default)s)",
    )
    kill.add_argument(
        "--deadman-grace",
        type=number(float, 0, 3600, exclusive_minimum=True, what="seconds"),
        default=None,
        help="the cells' dead-man grace (default: the harness's own, as a user's run has it)",
    )
