"""Which node of each instance type the disk studies run on (``disk_study_nodes``)."""

from __future__ import annotations

import re
from pathlib import Path

from harness.inventory.loader import load_inventory, parse_inventory
from harness.plugin import disk_study_nodes

LAB = Path(__file__).resolve().parents[2] / "inventories" / "lab.yaml"


def test_the_lab_runs_them_beside_its_cross_az_pairs() -> None:
    # a1 and a2 form the same-AZ pairs (and carry the failovers); a3 is in the cross-AZ pairs only
    assert disk_study_nodes(load_inventory(LAB)) == ["a3"]


def test_without_a_node_outside_same_az_pairs_the_first_by_name() -> None:
    text = LAB.read_text()
    # b1 moves to az-a: every pair is then same-AZ
    posed = re.sub(r"(  b1:\n    az: )az-b", r"\1az-a", text)
    assert posed != text
    inventory = parse_inventory(posed, "posed")
    assert {inventory.placement(p) for p in inventory.pairs} == {"same-az"}
    assert disk_study_nodes(inventory) == ["a1"]


def test_nodes_without_scratch_devices_are_never_chosen() -> None:
    text = LAB.read_text()
    posed = re.sub(r"(  a3:\n(?:    .*\n)*?)    scratch_devices: .*\n", r"\1", text)
    assert posed != text
    inventory = parse_inventory(posed, "posed")
    assert not inventory.nodes["a3"].scratch_devices
    assert disk_study_nodes(inventory) == ["b1"]
