"""``harness lab doctor``: judge the running lab (guests, pairs, every hop of every replication
path) and show the evidence where it is broken; ``--repair`` restarts an unfit lab.

Exit codes: 0 fit to measure (after a repair, if one was needed), 1 not fit, 2 bad inventory.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["add_labdoctor_command"]


def _lab_doctor(args: argparse.Namespace) -> int:
    from harness.inventory import load_inventory
    from harness.lab.doctor import diagnose
    from harness.lab.lifecycle import Lab

    path = Path(args.inventory)
    lab = Lab(load_inventory(path), path, progress=lambda line: print(line, file=sys.stderr, flush=True))
    diagnosis = diagnose(lab)
    print(diagnosis.render(evidence=not args.brief))
    if diagnosis.healthy or not args.repair:
        return 0 if diagnosis.healthy else 1
    print("repairing: the lab goes down and up again (its guests boot fresh)", file=sys.stderr)
    lab.down()
    lab.up()
    again = diagnose(lab)
    print(again.render(evidence=not args.brief))
    return 0 if again.healthy else 1


def add_labdoctor_command(lab_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``doctor`` to the ``harness lab`` actions."""
    text = "judge the running lab: every guest, pair and hop of each replication path; evidence where broken"
    p = lab_sub.add_parser("doctor", help=text, description=text)
    p.set_defaults(handler=_lab_doctor)
    p.add_argument("--inventory", default="inventories/lab.yaml", help="lab inventory (default: %(default)s)")
    p.add_argument("--repair", action="store_true", help="restart an unfit lab (down, up) and judge it again")
    p.add_argument("--brief", action="store_true", help="findings and paths only, without the evidence")
