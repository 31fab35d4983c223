"""The lab's DRBD 9 configuration and boot scripts against what DRBD 9.2.18 printed of the lab's
own resources (tests/data/drbd/drbd-9.2.18: ``drbdadm -v dump`` of the two-node ``single-az``,
of the three-node ``r3`` with quorum, and of ``r3`` after its third node became a diskless
tie-breaker; README.md there gives each file's command and state)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.drbd.audit import audit_dump
from harness.drbd.config import Statement, find_resources, parse_config
from harness.drbd.layout import Endpoint, PairEnds, ResourceLayout, layout_of_dump, option_leaves
from harness.drbd.provision import QUORUM_OPTIONS, node_ids, render_conf
from harness.drbd.quorum import QuorumSetting, quorum_setting
from harness.inventory import Inventory, load_inventory, parse_inventory
from harness.lab.drbd9 import ENV_VAR, DrbdModules, ModuleLoad, lab_inventory
from harness.lab.render import render_boot_script
from harness.lab.topology import build_topology, drbd_disks
from tests.unit.drbd9_recorded import read

LAB = Path(__file__).resolve().parents[2] / "inventories" / "lab.yaml"
MODULES = DrbdModules(
    Path("/opt/drbd9"),
    "9.2.18",
    "6.1.176",
    "6.1.176 mod_unload",
    (
        ModuleLoad("lru_cache"),
        ModuleLoad("drbd", Path("/opt/drbd9/drbd.ko")),
        ModuleLoad("drbd_transport_tcp", Path("/opt/drbd9/drbd_transport_tcp.ko")),
    ),
)


@pytest.fixture(scope="module")
def on84() -> Inventory:
    return load_inventory(LAB)


@pytest.fixture(scope="module")
def on9(on84: Inventory) -> Inventory:
    return lab_inventory(on84, {ENV_VAR: "/opt/drbd9"})


def _resource(text: str, name: str) -> tuple[tuple[Statement, ...], dict[str, list[tuple[str, ...]]]]:
    parsed = parse_config(text)
    (block,) = find_resources(parsed, name)
    common = option_leaves(s for s in parsed if s.block is not None and s.words == ("common",))
    return block.block or (), common


def _layout(text: str, name: str) -> ResourceLayout:
    return layout_of_dump(*_resource(text, name))


def _host_node_ids(text: str, name: str) -> dict[str, int]:
    statements, _ = _resource(text, name)
    return {
        s.args[0]: int(option_leaves(s.block)["node-id"][0][0])
        for s in statements
        if s.key == "on" and s.block is not None
    }


def _conf(inv: Inventory) -> str:
    return render_conf(inv, drbd9=True, disks=drbd_disks(inv))


def _peer_pairs(layout: ResourceLayout) -> set[frozenset[str]]:
    return {frozenset(c.names()) for c in layout.connections}


def test_a_two_node_pair_on_9_has_what_the_lab_ran_on_9218(on9: Inventory) -> None:
    recorded = read("a1.single-az.drbdadm-v-dump.txt")
    ours = _conf(on9)
    assert sorted(_host_node_ids(ours, "single-az").values()) == sorted(_host_node_ids(recorded, "single-az").values())
    mine, theirs = _layout(ours, "single-az"), _layout(recorded, "single-az")
    assert (mine.nodes, _peer_pairs(mine), mine.diskless) == (theirs.nodes, _peer_pairs(theirs), theirs.diskless)
    assert quorum_setting(mine.resource_options) == quorum_setting(theirs.resource_options) == QuorumSetting()
    ends = PairEnds(Endpoint(frozenset({"a1"})), Endpoint(frozenset({"a2"})))
    assert audit_dump(ours, "single-az", "C", ends) == audit_dump(recorded, "single-az", "C", ends) == []


def test_the_three_node_resource_is_a_mesh_with_quorum_as_r3_was(on9: Inventory) -> None:
    recorded = read("a1.r3.drbdadm-v-dump.txt")
    ours = _conf(on9)
    mine, theirs = _layout(ours, "three-node"), _layout(recorded, "r3")
    assert (
        (mine.nodes, len(_peer_pairs(mine)), mine.diskless)
        == (theirs.nodes, len(_peer_pairs(theirs)), ())
        == (
            3,
            3,
            (),
        )
    )
    assert _peer_pairs(mine) == {frozenset(p) for p in (("a1", "a2"), ("a1", "b1"), ("a2", "b1"))}
    setting = quorum_setting(mine.resource_options)
    assert setting == quorum_setting(theirs.resource_options) == QuorumSetting("majority", "io-error", "off")
    assert sorted(_host_node_ids(ours, "three-node").values()) == sorted(_host_node_ids(recorded, "r3").values())
    # across the AZ link too: every connection carries both hosts' replication addresses
    assert {c.addresses for c in mine.connections if "b1" in c.names()} == {
        ("10.213.1.11", "10.213.2.21"),
        ("10.213.1.12", "10.213.2.21"),
    }
    # quorum majority on three nodes: a primary cut off from its peer still reaches a majority
    ends = PairEnds(Endpoint(frozenset({"a1"})), Endpoint(frozenset({"a2"})))
    assert audit_dump(ours, "three-node", "C", ends) == []
    assert audit_dump(recorded, "r3", "C", ends) == []


def test_the_tiebreaker_variant_has_no_disk_on_its_third_node_as_r3_at_state_8(on9: Inventory) -> None:
    recorded = read("a3.r3.drbdadm-v-dump.8-diskless.txt")
    ours = _conf(on9)
    mine, theirs = _layout(ours, "tiebreaker"), _layout(recorded, "r3")
    assert theirs.diskless == ("a3",) and mine.diskless == ("b1",)
    assert (mine.nodes, len(mine.connections)) == (theirs.nodes, len(theirs.connections))
    assert quorum_setting(mine.resource_options) == quorum_setting(theirs.resource_options)
    statements, _ = _resource(ours, "tiebreaker")
    b1 = next(s for s in statements if s.words == ("on", "b1"))
    assert ("meta-disk" not in option_leaves(b1.block or ())) and option_leaves(b1.block or ())["disk"] == [("none",)]


def test_each_resource_of_more_nodes_has_a_disk_of_its_own(on9: Inventory) -> None:
    disks = drbd_disks(on9)
    assert disks["single-az"] == disks["multi-az"] == "/dev/ubda"
    own = {disks["three-node"], disks["tiebreaker"]}
    assert len(own) == 2 and "/dev/ubda" not in own
    topo = build_topology(on9)
    count = len(topo.guest("a1").disks)
    assert {f"/dev/ubd{chr(ord('a') + count - 2)}", f"/dev/ubd{chr(ord('a') + count - 1)}"} == own
    # the md-nbd leg and the scratch disks keep their places
    assert {"/dev/ubdb", "/dev/ubdc", "/dev/ubdd"}.isdisjoint(own)


def test_pinned_node_ids_are_kept_and_the_rest_fill_in(on9: Inventory) -> None:
    text = LAB.read_text().replace(
        "    replication: {ip: 10.213.2.21, iface: vec1}",
        "    replication: {ip: 10.213.2.21, iface: vec1}\n    drbd_node_id: 0",
    )
    pinned = lab_inventory(parse_inventory(text, "lab.yaml"), {ENV_VAR: "/opt/drbd9"})
    assert node_ids(pinned, pinned.pairs["three-node"]) == {"a1": 1, "a2": 2, "b1": 0}
    assert node_ids(on9, on9.pairs["three-node"]) == {"a1": 0, "a2": 1, "b1": 2}


def test_boot_scripts_on_9_load_the_modules_and_bring_up_every_resource(on9: Inventory) -> None:
    topo = build_topology(on9)
    a1 = render_boot_script(on9, topo, topo.guest("a1"), MODULES)
    b1 = render_boot_script(on9, topo, topo.guest("b1"), MODULES)
    for script in (a1, b1):
        assert "modprobe -a drbd " not in script
        loads = [script.index(line) for line in MODULES.guest_lines("/lab/drbd-modules")]
        assert loads == sorted(loads) and loads[-1] < script.index("drbdadm")
    assert 'for i in $(seq 600); do [ "$(drbdadm cstate three-node | sort -u)" = Connected ]' in a1
    assert "drbdadm primary three-node" in a1 and "drbdadm primary tiebreaker" in a1
    # the tie-breaker has no metadata to create: it only comes up
    assert "drbdadm up tiebreaker\n" in b1 and "create-md --force tiebreaker" not in b1
    assert "create-md --force three-node" in b1 and "primary" not in b1.replace("# pair", "")


def test_on_84_nothing_of_drbd_9_is_rendered(on84: Inventory) -> None:
    topo = build_topology(on84)
    conf = render_conf(on84, disks=drbd_disks(on84))
    assert conf == render_conf(on84)
    assert "node-id" not in conf and "connection-mesh" not in conf and QUORUM_OPTIONS not in conf
    script = render_boot_script(on84, topo, topo.guest("a1"))
    assert "modprobe -a drbd sch_netem" in script and "insmod" not in script
    assert len(topo.guest("a1").disks) == 4
