"""After a node crash, every pair on that node goes back to the roles its inventory gives it.

A crash takes down every replicated device of the node, not only the pair under test: on a
node that is primary of a DRBD resource and of an md-nbd array, the failover of one leaves the
other without a primary (DRBD comes back Secondary on both sides; md-nbd comes back exporting
on both).  The harness restores those roles through the seam, the way an operator would after
a crash (promote the inventory's primary once its peer agrees), and waits for them to be healthy.
"""

from __future__ import annotations

from harness.cell.runner import CellRunner
from harness.replication import Replication

__all__ = ["restore_other_pairs", "restore_pair_roles"]

#: how long a pair may take to resync after its node came back
RESYNC_S = 600.0


def restore_pair_roles(primary: Replication, secondary: Replication) -> bool:
    """Give one pair its inventory roles again (``primary`` is the inventory's primary side)
    and wait until it is healthy; True when the primary had to be promoted."""
    promoted = False
    if primary.state().role != "Primary":
        if secondary.state().role == "Primary":
            secondary.demote()
        primary.promote()
        promoted = True
    primary.wait_healthy(RESYNC_S)
    return promoted


def restore_other_pairs(runner: CellRunner, crashed: str, *, done: str) -> list[str]:
    """Bring every pair on ``crashed`` other than ``done`` back to its inventory roles; returns
    what was changed, one line per pair."""
    changed: list[str] = []
    for name, pair in sorted(runner.inventory.pairs.items()):
        if name == done or crashed not in (pair.primary, pair.secondary):
            continue
        runner.replication(name, crashed).ensure_up()
        if restore_pair_roles(runner.replication(name, pair.primary), runner.replication(name, pair.secondary)):
            changed.append(f"{name}: {pair.primary} promoted again after {crashed} crashed")
    return changed
