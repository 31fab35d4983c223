"""After a node crash, every pair on that node goes back to the roles its inventory gives it.

A crash takes down every replicated device of the node, not only the pair under test: on a
node that is primary of a DRBD resource and of an md-nbd array, the failover of one leaves the
other without a primary (DRBD comes back Secondary on both sides; md-nbd comes back exporting
on both).  The harness restores those roles through the seam, the way an operator would after
a crash (promote the inventory's primary once its peer agrees), and waits for them to be healthy.

A node that has just come back is not promoted at once where the product says it may not be
yet: DRBD 9 says ``may_promote:no`` until the node sees enough of its peers (a quorum resource
refuses the promotion, "(-25) No quorum"), and a primary promoted before it reconnected would
start a history of its own.  The restore waits, bounded, until the node may be promoted and is
connected to its peer.  DRBD 8.4 and md-nbd print no such word and are promoted as before.

A pair that cannot be restored is that pair's failure, not the failover's that crashed its
node: :func:`restore_other_pairs` says so in its notes and the ledger, and the pair's next cell
refuses to write through a device that is not primary (:mod:`harness.cell.guard`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from harness.errors import HarnessError, RefusedError
from harness.inventory.models import Inventory
from harness.remote import polling
from harness.replication import ReplicaStatus, Replication
from harness.runfiles.ledger import Ledger

__all__ = ["PROMOTABLE_S", "RESYNC_S", "restore_other_pairs", "restore_pair_roles", "wait_promotable"]

#: how long a pair may take to resync after its node came back
RESYNC_S = 600.0
#: how long a node that came back may take to reconnect before it may be promoted
PROMOTABLE_S = 60.0
_POLL_S = 0.5


class _Cells(Protocol):
    """What restoring the other pairs needs of a cell runner."""

    inventory: Inventory
    ledger: Ledger

    def replication(self, pair: str, node: str) -> Replication: ...


def wait_promotable(
    replication: Replication,
    deadline_s: float = PROMOTABLE_S,
    *,
    clock: Callable[[], float] = polling.monotonic,
    sleep: Callable[[float], None] = polling.sleep,
) -> ReplicaStatus:
    """Until the product allows ``replication``'s node the primary role and it is connected to
    its peer; at once where the product does not say (``may_promote`` None).  RefusedError at
    the deadline, naming the state: nothing was promoted."""
    end = clock() + deadline_s
    while True:
        state = replication.state()
        if state.may_promote is None or (state.may_promote and state.connected):
            return state
        if clock() >= end:
            why = "not connected to its peer" if state.may_promote else "DRBD says may_promote:no"
            raise RefusedError(
                f"{replication.node}: {replication.resource} may not be promoted {deadline_s:g} s after it came back "
                f"({why}: {state.describe()}); promoting now would be refused or start a history of its own"
            )
        sleep(_POLL_S)


def restore_pair_roles(
    primary: Replication,
    secondary: Replication,
    *,
    clock: Callable[[], float] = polling.monotonic,
    sleep: Callable[[float], None] = polling.sleep,
) -> bool:
    """Give one pair its inventory roles again (``primary`` is the inventory's primary side)
    and wait until it is healthy; True when the primary had to be promoted."""
    promoted = False
    if primary.state().role != "Primary":
        if secondary.state().role == "Primary":
            secondary.demote()
        wait_promotable(primary, clock=clock, sleep=sleep)
        primary.promote()
        promoted = True
    primary.wait_healthy(RESYNC_S)
    return promoted


def restore_other_pairs(
    runner: _Cells,
    crashed: str,
    *,
    done: str,
    clock: Callable[[], float] = polling.monotonic,
    sleep: Callable[[float], None] = polling.sleep,
) -> list[str]:
    """Bring every pair on ``crashed`` other than ``done`` back to its inventory roles; returns
    what was changed, or could not be, one line per pair.  A pair that cannot be restored is
    named and left for its own next cell to refuse; the failover of ``done`` goes on."""
    changed: list[str] = []
    for name, pair in sorted(runner.inventory.pairs.items()):
        if name == done or crashed not in (pair.primary, pair.secondary):
            continue
        try:
            runner.replication(name, crashed).ensure_up()
            primary, secondary = runner.replication(name, pair.primary), runner.replication(name, pair.secondary)
            if restore_pair_roles(primary, secondary, clock=clock, sleep=sleep):
                changed.append(f"{name}: {pair.primary} promoted again after {crashed} crashed")
        except HarnessError as exc:
            runner.ledger.record("restore-failed", {"pair": name, "crashed": crashed, "error": str(exc)})
            changed.append(
                f"{name}: roles not restored after {crashed} crashed ({exc}); its next cell refuses until they are"
            )
    return changed
