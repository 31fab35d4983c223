"""Which cells may share an xdist worker (:mod:`harness.plugin.groups`)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from harness.inventory.loader import load_inventory
from harness.plugin.groups import cell_groups, components

LAB = Path(__file__).resolve().parents[2] / "inventories" / "lab.yaml"

_NAMES = st.sampled_from([f"n{i}" for i in range(8)])
_LINKS = st.lists(st.tuples(_NAMES, _NAMES), max_size=12)


def _reachable(links: list[tuple[str, str]], start: str) -> set[str]:
    """The names a chain of links joins to ``start``, by a plain graph search."""
    seen, todo = {start}, [start]
    while todo:
        here = todo.pop()
        for a, b in links:
            for there in (b,) if a == here else (a,) if b == here else ():
                if there not in seen:
                    seen.add(there)
                    todo.append(there)
    return seen


@given(_LINKS, _NAMES, _NAMES)
def test_two_names_share_a_representative_exactly_when_links_join_them(
    links: list[tuple[str, str]], x: str, y: str
) -> None:
    find = components(links)
    assert (find(x) == find(y)) == (y in _reachable(links, x))


@given(_LINKS, _NAMES)
def test_a_representative_is_a_member_of_its_own_component(links: list[tuple[str, str]], x: str) -> None:
    find = components(links)
    assert find(x) in _reachable(links, x)
    assert find(find(x)) == find(x)


def test_the_lab_groups_its_pairs_by_shared_nodes() -> None:
    inventory = load_inventory(LAB)
    groups = cell_groups(inventory)
    for name, pair in inventory.pairs.items():
        # a pair's cells and the disk studies of both its nodes are one group
        assert groups[name] == groups[f"node:{pair.primary}"] == groups[f"node:{pair.secondary}"]
    by_group: dict[str, set[str]] = {}
    for name, pair in inventory.pairs.items():
        by_group.setdefault(groups[name], set()).update((pair.primary, pair.secondary))
    # the DRBD and the md-nbd pair of a1/a2 are one group, those of a3/b1 another
    assert sorted(sorted(members) for members in by_group.values()) == [["a1", "a2"], ["a3", "b1"]]
    # a group is named after one of its own nodes
    assert all(group.removeprefix("nodes-") in members for group, members in by_group.items())
