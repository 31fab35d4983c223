"""After a node crash, every pair on that node goes back to the roles its inventory gives it.

A crash takes down every replicated device of the node, not only the pair under test: on a
node that is primary of a DRBD resource and of an md-nbd array, the failover of one leaves the
other without a primary (DRBD comes back Secondary on both sides; md-nbd comes back exporting
on both).  The harness restores those roles through the seam, the way an operator would after
a crash (promote the inventory's primary once its peer agrees), and waits for them to be healthy.
"""

from __future__ import annotations

from harness.cell.runner import CellRunner

__all__ = ["restore_other_pairs"]

#: how long a pair may take to resync after its node came back
RESYNC_S = 600.0


def restore_other_pairs(runner: CellRunner, crashed: str, *, done: str) -> list[str]:
    """Bring every pair on ``crashed`` other than ``done`` back to its inventory roles; returns
    what was changed, one line per pair."""
    changed: list[str] = []
    for name, pair in sorted(runner.inventory.pairs.items()):
        if name == done or crashed not in (pair.primary, pair.secondary):
            continue
        runner.replication(name, crashed).ensure_up()
        primary = runner.replication(name, pair.primary)
        secondary = runner.replication(name, pair.secondary)
        if primary.state().role != "Primary":
            if secondary.state().role == "Primary":
                secondary.demote()
            primary.promote()
            changed.append(f"{name}: {pair.primary} promoted again after {crashed} crashed")
        primary.wait_healthy(RESYNC_S)
    return changed
