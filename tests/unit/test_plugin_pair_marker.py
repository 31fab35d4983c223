"""Which pairs a scenario's ``pairs(...)`` marker selects, and why an inventory without one
collects a skipped placeholder: the quorum scenario's need for a resource of more nodes names
the variable that brings the lab's up."""

from __future__ import annotations

from harness.lab.drbd9 import ENV_VAR, lab_inventory
from harness.plugin import _marked_pairs
from tests.doubles import LAB


def test_placement_alone_is_as_before() -> None:
    assert _marked_pairs(LAB, {}) == (list(LAB.pairs), "pair")
    names, why = _marked_pairs(LAB, {"placement": "cross-az"})
    assert names == ["multi-az", "multi-az-md-nbd"] and why == "cross-az pair"


def test_the_lab_on_84_has_no_pair_with_peers_and_says_how_to_get_one() -> None:
    for peers in ("any", "tiebreaker"):
        names, why = _marked_pairs(LAB, {"peers": peers})
        assert names == [] and ENV_VAR in why and "DRBD 9" in why


def test_the_lab_on_9_selects_its_three_node_pairs() -> None:
    on9 = lab_inventory(LAB, {ENV_VAR: "/opt/drbd9"})
    assert _marked_pairs(on9, {"peers": "any"})[0] == ["three-node", "tiebreaker"]
    assert _marked_pairs(on9, {"peers": "tiebreaker"})[0] == ["tiebreaker"]
    assert _marked_pairs(on9, {"peers": "any", "placement": "cross-az"})[0] == []
