"""Disruptive scenarios: who may run them, and on what they are refused.

A scenario is *disruptive* when it crashes a node, cuts the replication link (``drbdadm
disconnect``) or adds latency at DRBD's timeouts.  On a real cluster that can freeze or fail
I/O, trigger fencing (STONITH), or make a cluster manager move services.  Such tests carry
``@pytest.mark.disruptive`` and the plugin asks this module before each of them:

* the embedded lab (an inventory with a ``lab:`` section) runs them;
* any other inventory needs ``--allow-disruptive``;
* an inventory with ``production: true`` needs the opt-in to *name* it,
  ``--allow-disruptive=<inventory name>``: a bare flag left in a CI job does not reach
  production, and a name that is not this inventory's is a usage error for the whole run.

Allowed or not by the flag, a disruptive test then audits its pair's replication and cluster
configuration on both nodes (the replication's configuration audit, :mod:`harness.replication`)
and is refused, before any change, when anything risky is found.
"""

from __future__ import annotations

from typing import Final

from harness.errors import RefusedError
from harness.inventory.models import Inventory
from harness.remote.pool import NodePool
from harness.replication import replication_for

__all__ = ["OPTION", "opt_in_error", "pair_risks", "refuse_risky", "skip_reason"]

OPTION: Final = "--allow-disruptive"
_WHAT: Final = "disruptive test (node crash, replication link cut, or latency at DRBD's timeouts)"


def opt_in_error(inventory: Inventory, value: str | None) -> str | None:
    """A usage error when ``--allow-disruptive=NAME`` names another inventory, else None.

    ``value`` is the option's value: None without the flag, ``""`` for the bare flag."""
    if not value or value == inventory.name:
        return None
    return (
        f"{OPTION}={value} does not name this run's inventory {inventory.name!r}: write {OPTION}={inventory.name} "
        f"(a path right after a bare {OPTION} is read as its value; put the flag after the paths)"
    )


def skip_reason(inventory: Inventory, value: str | None) -> str | None:
    """Why a disruptive test may not run with this opt-in, naming the flag that enables it; None
    when it may."""
    if inventory.production:
        if value == inventory.name:
            return None
        return (
            f"{_WHAT} on inventory {inventory.name!r}, which is marked production: true; "
            f"confirm by naming it: {OPTION}={inventory.name}"
        )
    if inventory.lab is not None or value is not None:
        return None
    return f"{_WHAT} on inventory {inventory.name!r}, which is not the embedded lab; enable with {OPTION}"


def pair_risks(inventory: Inventory, pool: NodePool, pair_name: str) -> list[str]:
    """The audit's risks on both nodes of a pair, each prefixed with its node (read-only:
    one round trip per node)."""
    pair = inventory.pairs[pair_name]
    risks: list[str] = []
    for node in (pair.primary, pair.secondary):
        audit = replication_for(pair, pool.get(node), nodes=inventory.nodes).audit()
        risks += [f"{node}: {risk}" for risk in audit.risks()]
    return risks


def refuse_risky(inventory: Inventory, pool: NodePool, pair_name: str) -> None:
    """:class:`RefusedError` (nothing changed) if the pair's configuration makes a disruptive
    test dangerous."""
    risks = pair_risks(inventory, pool, pair_name)
    if risks:
        raise RefusedError(
            f"pair {pair_name}: refusing a {_WHAT} before any change, the configuration is risky: " + "; ".join(risks)
        )
