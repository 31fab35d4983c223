"""A node the inventory pins by machine-id or by its DRBD identity is checked before anything
changes (case 35): ``uname -n`` alone lets a re-imaged machine of the same name,
or another machine answering at the address, pass.

Cases of tests/RELIABILITY_CASES.md, the fault and bad-input map; each test is marked
``reliability_row(N)`` and named ``test_case_NN_*``; select a case with ``-k rowNN``.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from harness.drbd.replication import DrbdReplication
from harness.inventory import Inventory, parse_inventory
from harness.inventory.models import NodeSpec
from harness.safety.preflight import Finding
from tests.doubles import ROOT, Answer, FakeRunner, data, mutations
from tests.unit.reliability.support import finding, lab_node, preflight

#: recorded: `cat /etc/machine-id` (tests/data/identity/README.md)
MACHINE_ID = data("identity/machine-id-debian12.txt")
#: recorded on the lab's a1: `drbdsetup show single-az` (DRBD 8.4.11)
SHOW_A1 = data("drbd/84-drbdsetup-show.txt")
#: the batch name of a1's identity probe for single-az
WHOAMI = next(iter(DrbdReplication(FakeRunner("a1"), "single-az").node_identity_probes()))
A1_LINE = "    ssh: {<<: *ssh, host: 10.213.0.11}"


def _a1_showing_its_drbd() -> FakeRunner:
    node = lab_node("a1")
    node.batch[WHOAMI] = Answer(SHOW_A1)
    return node


def _lab_with(a1_pins: str, *, port: int = 7789) -> Inventory:
    text = (ROOT / "inventories" / "lab.yaml").read_text()
    assert A1_LINE in text and "port: 7789}" in text
    text = text.replace(A1_LINE, f"{a1_pins}\n{A1_LINE}").replace("port: 7789}", f"port: {port}}}")
    return parse_inventory(text)


@pytest.mark.reliability_row(35)
def test_case_35_machine_id_pin_blocks_another_machine() -> None:
    other = "0123456789abcdef0123456789abcdef"  # what the inventory pins: not this machine
    inv = _lab_with(f"    machine_id: {other}")
    a1 = lab_node("a1", machine_id=Answer(MACHINE_ID))
    report = preflight({"a1": a1, "a2": lab_node("a2")}, inv)
    found = MACHINE_ID.strip()
    assert finding(report, "a1", "machine-id") == Finding(
        "a1", "machine-id", "BLOCK", f"a1: /etc/machine-id is {found}, the inventory pins {other} (another machine)"
    )
    assert not report.ok and mutations(a1) == []  # blocked before any change


@pytest.mark.reliability_row(35)
def test_case_35_machine_id_pin_passes_the_right_machine() -> None:
    inv = _lab_with(f"    machine_id: {MACHINE_ID.strip()}")
    report = preflight({"a1": lab_node("a1", machine_id=Answer(MACHINE_ID)), "a2": lab_node("a2")}, inv)
    assert report.ok, report.render()
    assert finding(report, "a1", "machine-id") == Finding("a1", "machine-id", "ok", MACHINE_ID.strip())


@pytest.mark.reliability_row(35)
def test_case_35_an_unreadable_machine_id_blocks() -> None:
    inv = _lab_with(f"    machine_id: {MACHINE_ID.strip()}")
    a1 = lab_node("a1", machine_id=Answer(""))  # an empty /etc/machine-id (a template image)
    report = preflight({"a1": a1, "a2": lab_node("a2")}, inv)
    assert finding(report, "a1", "machine-id").detail == "a1: cannot read /etc/machine-id: it is empty"
    assert not report.ok


@pytest.mark.reliability_row(35)
def test_case_35_drbd84_identity_is_the_on_sections_address() -> None:
    """DRBD 8.4 has no node ids: the pin holds the node to its `on <host>` section's address."""
    right = preflight({"a1": _a1_showing_its_drbd(), "a2": lab_node("a2")}, _lab_with("    drbd_node_id: 0"))
    assert right.ok, right.render()
    assert finding(right, "a1", "drbd identity").detail == (
        "single-az: DRBD 8.4 (no node ids): its `on` section's address is 10.213.1.11:7789"
    )
    a1 = _a1_showing_its_drbd()
    wrong = preflight({"a1": a1, "a2": lab_node("a2")}, _lab_with("    drbd_node_id: 0", port=7790))
    assert finding(wrong, "a1", "drbd identity") == Finding(
        "a1",
        "drbd identity",
        "BLOCK",
        "a1: DRBD resource single-az runs on 10.213.1.11:7789, the inventory expects 10.213.1.11:7790",
    )
    assert not wrong.ok and mutations(a1) == []


@pytest.mark.reliability_row(35)
def test_case_35_unpinned_nodes_are_not_asked() -> None:
    """Without a pin nothing more is read: an inventory that pins nothing runs as before."""
    a1 = lab_node("a1")
    assert preflight({"a1": a1, "a2": lab_node("a2")}).ok
    assert not any("machine-id" in c or "drbdsetup show single-az" in c for c in a1.calls)


@pytest.mark.reliability_row(35)
@pytest.mark.parametrize(
    ("pin", "why"),
    [
        ({"machine_id": "3D1219C7C4C5404AAA1F6D2A48ADFDA4"}, "should match pattern"),  # machine-id(5): lowercase
        ({"machine_id": "3d1219c7c4c5404aaa1f6d2a48adfda"}, "should match pattern"),
        ({"drbd_node_id": 32}, "less than or equal to 31"),
        ({"drbd_node_id": -1}, "greater than or equal to 0"),
        ({"drbd_node_id": "1"}, "valid integer"),
    ],
)
def test_case_35_pins_are_checked_when_the_inventory_loads(pin: dict[str, object], why: str) -> None:
    base = {
        "az": "a",
        "ssh": {"host": "192.0.2.1", "key": "/k", "known_hosts": "/kh"},
        "replication": {"ip": "192.0.2.2", "iface": "eth1"},
    }
    with pytest.raises(ValidationError, match=why):
        NodeSpec.model_validate({**base, **pin})
