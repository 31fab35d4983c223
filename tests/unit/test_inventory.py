"""Inventory schema: every error names file, line and key, before any remote access."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.inventory import inventory_json_schema, load_inventory, parse_inventory

ROOT = Path(__file__).resolve().parents[2]

GOOD = """\
name: test
nodes:
  n1:
    az: us-east-1a
    ssh: {host: 192.0.2.10, key: /k/id, known_hosts: /k/known}
    replication: {ip: 10.0.0.1, iface: eth1}
  n2:
    az: us-east-1b
    ssh: {host: 192.0.2.11, key: /k/id, known_hosts: /k/known}
    replication: {ip: 10.0.0.2, iface: eth1}
pairs:
  p:
    primary: n1
    secondary: n2
    resource: r0
    device: /dev/drbd0
"""


def test_good_inventory_and_placement() -> None:
    inv = parse_inventory(GOOD)
    assert inv.pairs["p"].protocol == "C"
    assert inv.placement("p") == "cross-az"


@pytest.mark.parametrize("path", sorted((ROOT / "inventories").glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_inventories_are_valid(path: Path) -> None:
    inv = load_inventory(path)
    assert inv.pairs


def test_unknown_key_is_named_with_line() -> None:
    text = GOOD.replace("    replication: {ip: 10.0.0.1, iface: eth1}", "    replication_iface: eth1")
    with pytest.raises(ConfigError) as info:
        parse_inventory(text, "inv.yaml")
    assert "inv.yaml:6: nodes.n1.replication_iface: unknown key" in str(info.value)
    assert "nodes.n1.replication: Field required" in str(info.value)


def test_backing_disk_as_device_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"inv.yaml:16: pairs.p.device: String should match pattern"):
        parse_inventory(GOOD.replace("/dev/drbd0", "/dev/vda"), "inv.yaml")


@pytest.mark.parametrize(
    "device", ["/dev/drbd0:x", "/dev/drbd0 ", "/dev/drbd$(id)", "/dev/drbd/by-res/r0/0", "dev/drbd0"]
)
def test_device_metacharacters_refused(device: str) -> None:
    with pytest.raises(ConfigError, match=r"pairs\.p\.device"):
        parse_inventory(GOOD.replace("/dev/drbd0", f"'{device}'"))


def test_yaml11_boolean_protocol_is_refused() -> None:
    text = GOOD.replace("    device: /dev/drbd0", "    device: /dev/drbd0\n    protocol: on")
    with pytest.raises(ConfigError, match=r"pairs\.p\.protocol"):
        parse_inventory(text)


def test_primary_equals_secondary() -> None:
    with pytest.raises(ConfigError, match="primary and secondary are the same node"):
        parse_inventory(GOOD.replace("secondary: n2", "secondary: n1"))


def test_unknown_pair_node() -> None:
    with pytest.raises(ConfigError, match=r"secondary 'n9' is not a node"):
        parse_inventory(GOOD.replace("secondary: n2", "secondary: n9"))


def test_duplicate_endpoints_and_replication_ips() -> None:
    text = GOOD.replace("192.0.2.11", "192.0.2.10").replace("10.0.0.2", "10.0.0.1")
    with pytest.raises(ConfigError) as info:
        parse_inventory(text)
    assert "same ssh endpoint" in str(info.value)
    assert "share replication ip" in str(info.value)


def test_secret_values_have_no_place() -> None:
    text = GOOD.replace("key: /k/id, known", "password: hunter2, known", 1)
    with pytest.raises(ConfigError, match=r"nodes\.n1\.ssh\.password: unknown key"):
        parse_inventory(text)


def test_relative_key_path_refused() -> None:
    with pytest.raises(ConfigError, match="must be an absolute path"):
        parse_inventory(GOOD.replace("key: /k/id", "key: id_rsa", 1))


def test_x_keys_hold_anchors_only() -> None:
    text = "x-ssh: &s {key: /k/id, known_hosts: /k/known}\n" + GOOD.replace(
        "{host: 192.0.2.10, key: /k/id, known_hosts: /k/known}", "{<<: *s, host: 192.0.2.10}"
    )
    assert parse_inventory(text).nodes["n1"].ssh.key == Path("/k/id")


def test_missing_file() -> None:
    with pytest.raises(ConfigError, match="file not found"):
        load_inventory(Path("/nonexistent/inv.yaml"))


def test_schema_is_json_with_inventory_keys() -> None:
    import json

    schema = json.loads(inventory_json_schema())
    assert {"nodes", "pairs", "lab"} <= set(schema["properties"])


@given(st.sampled_from(["A", "B", "C"]), st.integers(min_value=1, max_value=65535))
def test_protocol_and_port_accepted(protocol: str, port: int) -> None:
    text = GOOD + f"    protocol: {protocol}\n    port: {port}\n"
    pair = parse_inventory(text).pairs["p"]
    assert (pair.protocol, pair.port) == (protocol, port)


@given(st.text(min_size=1, max_size=20).filter(lambda s: s not in {"A", "B", "C"}))
def test_other_protocols_refused(protocol: str) -> None:
    text = (
        GOOD + f"    protocol: {protocol!r}\n".replace("'", '"')
        if '"' not in protocol and "\\" not in protocol
        else GOOD + "    protocol: X\n"
    )
    with pytest.raises(ConfigError):
        parse_inventory(text)
