"""Bad inventory input is refused at parse time, naming the file and line (cases 1-5).

Cases of tests/RELIABILITY_CASES.md, the fault and bad-input map; each test is marked
``reliability_row(N)`` and named ``test_case_NN_*``; select a case with ``-k rowNN``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

import harness.cli
import harness.remote.pool
from harness.errors import (
    ConfigError,
)
from harness.impair.commands import validate_ifname
from harness.inventory import load_inventory, parse_inventory
from harness.remote import SshNode
from tests.unit.reliability.support import (
    MINI,
)


@pytest.mark.reliability_row(1)
def test_case_01_yaml_syntax_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text(MINI.replace("iface: vec1}", "iface: vec1", 1))  # an unclosed flow mapping

    def no_ssh(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("an SSH connection was attempted for a broken inventory")

    monkeypatch.setattr(harness.remote.pool, "ConnectionPool", no_ssh)
    monkeypatch.setattr(SshNode, "open", no_ssh)
    assert harness.cli.main(["preflight", "--inventory", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:7:5: YAML syntax error" in err  # file:line:col (PyYAML marks where it noticed)
    with pytest.raises(ConfigError) as info:
        load_inventory(path)
    assert info.value.exit_code == 2


@pytest.mark.reliability_row(2)
@pytest.mark.parametrize("index", range(len(MINI.splitlines())))
def test_case_02_duplicate_keys(index: int) -> None:
    lines = MINI.splitlines()
    key = lines[index].strip().split(":", 1)[0]
    text = "\n".join([*lines[: index + 1], lines[index], *lines[index + 1 :]]) + "\n"
    with pytest.raises(
        ConfigError, match=rf"inv.yaml:{index + 2}: duplicate key '{re.escape(key)}' \(first at line {index + 1}\)"
    ):
        parse_inventory(text, "inv.yaml")


@pytest.mark.reliability_row(2)
def test_case_02_duplicate_device_would_silently_win_in_plain_pyyaml() -> None:
    text = MINI.replace("    device: /dev/drbd0\n", "    device: /dev/drbd0\n    device: /dev/vda\n")
    # the hazard: plain PyYAML keeps the last of two equal keys
    assert yaml.safe_load(text)["pairs"]["single-az"]["device"] == "/dev/vda"
    with pytest.raises(ConfigError, match=r"inv.yaml:17: duplicate key 'device' \(first at line 16\)"):
        parse_inventory(text, "inv.yaml")


YAML11_WORDS = ["y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF"]


@pytest.mark.reliability_row(3)
@given(st.sampled_from(YAML11_WORDS), st.sampled_from(YAML11_WORDS))
def test_case_03_yaml11_words_stay_strings(az: str, iface: str) -> None:
    text = MINI.replace("az: az-a", f"az: {az}", 1).replace("iface: vec1}", f"iface: {iface}}}", 1)
    inv = parse_inventory(text)
    assert inv.nodes["a1"].az == az and isinstance(inv.nodes["a1"].az, str)
    assert inv.nodes["a1"].replication.iface == iface
    assert validate_ifname(iface) == iface  # and the impairer takes it as the same name


@pytest.mark.reliability_row(3)
@given(st.sampled_from(YAML11_WORDS))
def test_case_03_protocol_on_is_refused_not_coerced(word: str) -> None:
    text = MINI.replace("    device: /dev/drbd0\n", f"    device: /dev/drbd0\n    protocol: {word}\n")
    with pytest.raises(ConfigError, match=r"inv.yaml:17: pairs.single-az.protocol: Input should be 'A', 'B' or 'C'"):
        parse_inventory(text, "inv.yaml")


@pytest.mark.reliability_row(3)
def test_case_03_numbers_are_not_coerced_to_strings_or_octal() -> None:
    with pytest.raises(ConfigError, match=r"inv.yaml:4: nodes.a1.az: Input should be a valid string"):
        parse_inventory(MINI.replace("az: az-a", "az: 8.4", 1), "inv.yaml")  # a float, never "8.4"
    inv = parse_inventory(MINI.replace("resource: single-az", "resource: 010"))
    assert inv.pairs["single-az"].resource == "010"  # not octal 8
    with pytest.raises(ConfigError, match=r"nodes.a1.ssh.port: Input should be a valid integer"):
        parse_inventory(MINI.replace("host: 10.213.0.11,", "host: 10.213.0.11, port: 010,"))
    with pytest.raises(ConfigError, match=r"production: Input should be a valid boolean"):
        parse_inventory(MINI + "production: yes\n")


@pytest.mark.reliability_row(3)
@pytest.mark.parametrize("iface", ["eth0:1", "-eth0", ".", ".."])
def test_case_03_interface_names_the_impairer_refuses_are_refused_at_parse_time(iface: str) -> None:
    with pytest.raises(ConfigError):
        validate_ifname(iface)
    text = MINI.replace("iface: vec1}", f'iface: "{iface}"}}', 1)
    try:
        parse_inventory(text)
    except ConfigError:
        return
    raise AssertionError(f"inventory accepted iface {iface!r}")


@pytest.mark.reliability_row(4)
def test_case_04_unknown_key() -> None:
    text = MINI.replace("    replication: {ip: 10.213.1.11, iface: vec1}", "    replication_iface: vec1")
    with pytest.raises(ConfigError) as info:
        parse_inventory(text, "inv.yaml")
    # the closest known name, and every name allowed at that place
    assert (
        "inv.yaml:6: nodes.a1.replication_iface: unknown key (did you mean 'replication'? allowed here: "
        "az, drbd_node_id, hostname, instance_type, machine_id, replication, scratch_devices, ssh, volume)"
    ) in str(info.value)
    assert "inv.yaml:3: nodes.a1.replication: Field required" in str(info.value)
    top = MINI.replace("pairs:", "pairz:")
    with pytest.raises(ConfigError, match=r"pairz: unknown key \(did you mean 'pairs'\? allowed here: .*nodes, pairs"):
        parse_inventory(top, "inv.yaml")
    # workloads name the allowed set as well
    text = MINI + "workloads:\n  w: {rw: randwrite, size: 64M, iodepht: 4}\n"
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['iodepht'\] \(allowed: .*'iodepth'"):
        parse_inventory(text)


AMBIGUOUS = [
    (
        "same-host-twice",
        MINI.replace("host: 10.213.0.12", "host: 10.213.0.11"),
        r"nodes 'a1' and 'a2' have the same ssh endpoint 10.213.0.11:22",
    ),
    (
        "same-replication-ip",
        MINI.replace("ip: 10.213.1.12", "ip: 10.213.1.11"),
        r"nodes 'a1' and 'a2' share replication ip 10.213.1.11",
    ),
    (
        "primary-is-secondary",
        MINI.replace("secondary: a2", "secondary: a1"),
        r"primary and secondary are the same node 'a1'",
    ),
    (
        "two-pairs-one-device",
        MINI + "  second: {primary: a1, secondary: a2, resource: other, device: /dev/drbd0}\n",
        r"pairs 'single-az' and 'second' both use /dev/drbd0 on 'a1'",
    ),
    (
        "two-pairs-one-resource",
        MINI + "  second: {primary: a1, secondary: a2, resource: single-az, device: /dev/drbd1}\n",
        r"pairs 'single-az' and 'second' both use resource 'single-az'",
    ),
    ("unknown-node", MINI.replace("secondary: a2", "secondary: a3"), r"secondary 'a3' is not a node"),
    (
        "no-az-label",
        MINI.replace("    az: az-a\n    ssh: {host: 10.213.0.12", "    ssh: {host: 10.213.0.12"),
        r"nodes.a2.az: Field required",
    ),
]


@pytest.mark.reliability_row(5)
@pytest.mark.parametrize(("text", "message"), [(t, m) for _, t, m in AMBIGUOUS], ids=[i for i, _, _ in AMBIGUOUS])
def test_case_05_ambiguous_inventory(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_inventory(text, "inv.yaml")


@pytest.mark.reliability_row(5)
def test_case_05_single_az_pair_is_never_taken_for_cross_az() -> None:
    inv = parse_inventory(MINI)
    assert inv.placement("single-az") == "same-az"
    assert parse_inventory(MINI.replace("az: az-a", "az: az-b", 1)).placement("single-az") == "cross-az"
