"""Which cells may share a worker: pairs that share a node are one xdist group.

Under ``--dist loadgroup`` xdist runs the cells of one group on one worker, one after the
other.  Two pairs with a node in common, on two workers, would load, impair or crash that node
from both at once; so a group is a connected component of the graph whose nodes are the
inventory's nodes and whose edges join the nodes of each pair's resource (its other peers too),
named ``nodes-<a node of it>``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from harness.inventory.models import Inventory

__all__ = ["cell_groups", "components"]


def components(links: Iterable[tuple[str, str]]) -> Callable[[str], str]:
    """Union-find over ``links``: a function giving each name its component's representative.

    Two names get the same representative exactly when a chain of links joins them; a name on
    no link is its own.
    """
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for a, b in links:
        parent[find(a)] = find(b)
    return find


def cell_groups(inventory: Inventory) -> dict[str, str]:
    """The xdist group of each pair's cells (by pair name) and of each node's disk studies
    (``node:<name>``): a disk-study node runs with the pairs it belongs to, never beside their cells."""
    # a resource's other peers too: a cell on it replicates to them, and a quorum cell cuts them off
    find = components((pair.primary, node) for pair in inventory.pairs.values() for node in pair.nodes[1:])
    groups = {name: "nodes-" + find(pair.primary) for name, pair in inventory.pairs.items()}
    groups.update({f"node:{name}": "nodes-" + find(name) for name in inventory.nodes})
    return groups
