"""The lab's replicated pairs as ``harness lab status`` shows them, read through the seam.

One row per pair, read on the pair's primary, in the product's own words (DRBD:
``Connected``, ``UpToDate/UpToDate``, ``Primary/Secondary``).  ``lab up`` waits until every row
is healthy, which for the lab also means the inventory's roles.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from harness.errors import HarnessError, RefusedError
from harness.inventory.models import Inventory
from harness.remote import Runner
from harness.replication import replication_for

__all__ = ["PairRow", "pair_rows"]

UNKNOWN = "Unknown"
UNCONFIGURED = "Unconfigured"


@dataclass(frozen=True)
class PairRow:
    name: str
    pair: str
    primary: str
    secondary: str
    connection: str
    disk: str
    role: str
    #: the product's own verdict, read on the primary, which must hold the primary role
    healthy: bool = False


def pair_rows(inventory: Inventory, conns: Mapping[str, Runner]) -> list[PairRow]:
    """A row per pair of ``inventory``, read on its primary (a probe that fails reads Unknown)."""
    out: list[PairRow] = []
    for pname, pair in sorted(inventory.pairs.items()):
        healthy = False
        try:
            status = replication_for(pair, conns[pair.primary], nodes=inventory.nodes).state()
            words, healthy = status.words, status.healthy and status.role == "Primary"
        except RefusedError:  # not configured on the node (yet)
            words = (UNCONFIGURED, UNCONFIGURED, UNCONFIGURED)
        except HarnessError:
            words = (UNKNOWN, UNKNOWN, UNKNOWN)
        out.append(PairRow(pair.resource, pname, pair.primary, pair.secondary, *words, healthy=healthy))
    return out
