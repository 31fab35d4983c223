"""Hostile Ansible inventories (INI and YAML) and mappings: host ranges that would expand
without end, files of many hosts, ports of thousands of digits, NULs and secret-named variables.
Each refusal is the real ``harness inventory from-ansible`` under the time and memory guards
(tests/unit/hostile_inputs.py); the fuzz targets generate INI and YAML inventories of every
construct the reader knows (groups, children, hosts, vars, ranges, ports, secret-named
variables, vault values, NULs), hostile values included."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.inventory.ansible_ini import host_port
from harness.limits import MAX_HOSTS
from tests.unit.fuzz_tally import surface
from tests.unit.hostile_inputs import FUZZ, GUARD_S, no_sentinel, run_cli, secret_forms, unchanged

MAPPING = """\
ansible_inventory: hosts.ini
name: from-ansible
host_vars: {replication_ip: repl_ip, replication_iface: repl_iface}
defaults:
  az: az-1
  ssh: {known_hosts: /etc/harness/known_hosts, key_env: HARNESS_SSH_KEY}
pairs:
  p: {group: g, resource: r0, device: /dev/drbd0}
"""
GOOD = (
    "[g]\n"
    "db1 ansible_host=192.0.2.11 repl_ip=10.1.0.11 repl_iface=eth1\n"
    "db2 ansible_host=192.0.2.12 repl_ip=10.1.0.12 repl_iface=eth1\n"
)
PORT = "port '999999999999999999999999999999' is not a whole number in 1-65535"


def _convert(tmp_path: Path, hosts: str | bytes, mapping: str = MAPPING, name: str = "hosts.ini") -> list[str]:
    inventory = tmp_path / name
    inventory.write_bytes(hosts if isinstance(hosts, bytes) else hosts.encode())
    path = tmp_path / "mapping.yaml"
    path.write_text(textwrap.dedent(mapping))
    return ["inventory", "from-ansible", str(inventory), "--mapping", str(path)]


def _fuzz_convert(tmp: Path, hosts: str | bytes, name: str) -> None:
    """One fuzz input converted for real, with a field mapped to a variable the input may set:
    exit 0 or one clear refusal, no hang, no blow-up, nothing written, no password copied or quoted."""
    mapping = MAPPING.replace("hosts.ini", name).replace("host_vars: {", "host_vars: {instance_type: ec2_type, ")
    argv = _convert(tmp, hosts, mapping, name)  # the inputs, written before the watch starts
    with unchanged(tmp):
        outcome = run_cli(argv).clean()
    text = hosts.decode() if isinstance(hosts, bytes) else hosts
    no_sentinel([text], [outcome.stdout, outcome.stderr])


def test_the_good_inventory_converts(tmp_path: Path) -> None:
    """The control: the inventory the cases below break converts (exit 0)."""
    outcome = run_cli(_convert(tmp_path, GOOD)).clean((0,))
    assert "host: 192.0.2.11" in outcome.stdout


def test_a_33_byte_range_of_30_million_hosts_is_refused_before_it_expands(tmp_path: Path) -> None:
    hosts = "[g]\nh[0:30000000]\n"
    assert len(hosts) < 40
    line = run_cli(_convert(tmp_path, hosts)).refusal()
    refusal = f"hosts.ini:2: host range 'h[0:30000000]' names 30000001 hosts; the harness reads at most {MAX_HOSTS}"
    assert line.endswith(refusal)


def test_nested_ranges_multiply_and_are_refused(tmp_path: Path) -> None:
    line = run_cli(_convert(tmp_path, "[g]\nh[0:999]-[0:999]\n")).refusal()
    assert "names 1000000 hosts" in line


@pytest.mark.parametrize("pattern", ["h[0:30000000]", "h[0:999]-[0:999]", "h[1:" + "9" * 400 + "]", "h[3:1:x]"])
def test_a_range_in_a_yaml_inventory_is_refused_naming_the_file_and_group(tmp_path: Path, pattern: str) -> None:
    hosts = f"all:\n  children:\n    g:\n      hosts:\n        {pattern}:\n"
    line = run_cli(_convert(tmp_path, hosts, MAPPING.replace("hosts.ini", "hosts.yaml"), "hosts.yaml")).refusal()
    assert line.startswith(f"error: {tmp_path / 'hosts.yaml'}: group 'g' hosts: host range '{pattern[:40]}")


def test_a_range_with_a_400_digit_bound_is_refused(tmp_path: Path) -> None:
    line = run_cli(_convert(tmp_path, f"[g]\nh[1:{'9' * 400}]\n")).refusal()
    assert "a bound has more than 30 digits" in line


def test_sixty_thousand_hosts_take_seconds_not_minutes(tmp_path: Path) -> None:
    hosts = GOOD + "[many]\n" + "".join(f"host{i}\n" for i in range(60_000))
    outcome = run_cli(_convert(tmp_path, hosts)).clean((0,))
    assert outcome.seconds < GUARD_S / 2, f"{outcome.seconds:.1f} s for 60,000 hosts"


def test_more_hosts_than_the_limit_is_refused(tmp_path: Path) -> None:
    hosts = GOOD + f"[many]\nh[1:{MAX_HOSTS // 2}]\nk[1:{MAX_HOSTS // 2}]\n"
    line = run_cli(_convert(tmp_path, hosts)).refusal()
    refusal = f"hosts.ini:6: 'k[1:{MAX_HOSTS // 2}]': more than {MAX_HOSTS} hosts in the file; the harness refuses it"
    assert line.endswith(refusal)


@pytest.mark.parametrize(
    ("hosts", "name", "message"),
    [
        (GOOD.replace("db1 ", "db1:" + "9" * 5000 + " "), "hosts.ini", PORT),
        (GOOD.replace("db1 ", "db1 ansible_port=" + "9" * 5000 + " "), "hosts.ini", PORT),
        (GOOD.replace("db1 ", "db1 ansible_port=0 "), "hosts.ini", "ansible_port: port 0 is outside 1-65535"),
        (GOOD.replace("db1 ", "db1:0 "), "hosts.ini", "hosts.ini:2: port 0 is outside 1-65535"),
        ("all:\n  children:\n    g:\n      hosts:\n        db1: {ansible_port: " + "9" * 5000 + "}\n", "hosts.yaml",
         "hosts.yaml:5:29: a number of more than 30 digits"),
    ],
)  # fmt: skip
def test_ports_are_1_to_65535_whatever_is_written(tmp_path: Path, hosts: str, name: str, message: str) -> None:
    mapping = MAPPING.replace("hosts.ini", name)
    line = run_cli(_convert(tmp_path, hosts, mapping, name)).refusal()
    assert message in line and str(tmp_path / name) in line  # the file the port is written in


def test_a_port_is_quoted_by_its_start_once_redacted() -> None:
    """Cut to 30 characters first, a URL in the port lost its ``@`` and kept its password."""
    with pytest.raises(ConfigError) as refused:
        host_port("postgresql://ci:hunter2hunter2@db/x", "ansible_port")
    assert str(refused.value) == "ansible_port: port 'postgresql://ci:***redacted***' is not a whole number in 1-65535"


@pytest.mark.parametrize(
    ("hosts", "message"),
    [
        (GOOD.replace("ansible_host=192.0.2.11", 'ansible_host="192.0.2.11\\x00"'), "nodes.db1.ssh.host"),
        (GOOD.replace("repl_iface=eth1", 'repl_iface="\\x00"', 1), "nodes.db1.replication.iface"),
        (GOOD + "[all:vars]\nansible_ssh_private_key_file='/etc/k\\x00ey'\n", "holds a NUL"),
        (GOOD.encode() + b"# \x00\n", "a NUL byte"),
    ],
)
def test_a_nul_in_an_ansible_file_is_refused(tmp_path: Path, hosts: str | bytes, message: str) -> None:
    assert message in run_cli(_convert(tmp_path, hosts)).refusal()


@pytest.mark.parametrize("variable", ["root_pw", "db_pw", "pgpass", "mysql_root_pwd", "api_token", "vault_cred"])
def test_a_field_mapped_to_a_secret_named_variable_is_refused(tmp_path: Path, variable: str) -> None:
    mapping = MAPPING.replace("host_vars: {", f"host_vars: {{hostname: {variable}, ")
    hosts = GOOD.replace("db1 ", f"db1 {variable}=hunter2 ")
    line = run_cli(_convert(tmp_path, hosts, mapping)).refusal()
    assert f"mapping.yaml:3: host_vars.hostname: {variable} is a secret variable" in line
    assert "hunter2" not in line


def test_secret_named_variables_are_never_copied(tmp_path: Path) -> None:
    hosts = GOOD.replace("db1 ", "db1 root_pw=hunter2 pgpass=hunter3 db_url=postgresql://ci:hunter4@db/x ")
    outcome = run_cli(_convert(tmp_path, hosts)).clean((0,))
    assert "db1: not copied (secrets stay in Ansible): db_url, pgpass, root_pw" in outcome.stderr
    assert not {"hunter2", "hunter3", "hunter4"} & set((outcome.stdout + outcome.stderr).split())


# -- the fuzz target ----------------------------------------------------------------------------

_WORD = st.from_regex(r"\A[a-z][a-z0-9_]{0,8}\Z")
_BOUND = st.one_of(st.integers(0, 50).map(str), st.sampled_from(["", "a", "z", "01", "9" * 400, "-1", "x", "1e9"]))
_VALUE = st.one_of(
    st.text(max_size=20),
    st.sampled_from(['"\\x00"', "'\\ud800'", "9" * 5000, "[[[[[[[[[[", "1e400", '"a b"', "{{ lookup('x') }}"]),
    st.integers().map(str),
)


@st.composite
def _host(draw: st.DrawFn) -> str:
    name = draw(_WORD)
    for _ in range(draw(st.integers(0, 3))):
        parts = [draw(_BOUND) for _ in range(draw(st.integers(1, 3)))]
        name += f"[{':'.join(parts)}]" + draw(st.sampled_from(["", "-", ".x"]))
    if draw(st.booleans()):
        name += ":" + draw(st.sampled_from(["22", "0", "65536", "9" * 5000, "x"]))
    assignments = [f"{draw(_WORD)}={draw(_VALUE)}" for _ in range(draw(st.integers(0, 3)))]
    return " ".join([name, *assignments])


@st.composite
def ini_inventory(draw: st.DrawFn) -> str:
    """An INI inventory: sections of hosts, vars and children, with hostile ranges and values,
    and the sentinel password in a variable of a host the mapping converts."""
    good = GOOD.replace("db1 ", f"db1 {draw(_WORD | st.just('ec2_type'))}={draw(secret_forms())} ", 1)
    lines = [good.rstrip("\n")] if draw(st.booleans()) else []
    for _ in range(draw(st.integers(0, 5))):
        group = draw(st.sampled_from(["g", "h", "all"]) | _WORD)
        kind = draw(st.sampled_from(["", ":vars", ":children", ":bogus"]))
        lines.append(f"[{group}{kind}]")
        for _ in range(draw(st.integers(0, 4))):
            if kind == ":vars":
                lines.append(f"{draw(_WORD)}={draw(_VALUE)}")
            elif kind == ":children":
                lines.append(draw(st.sampled_from(["g", "h"]) | _WORD))
            else:
                lines.append(draw(_host()))
    return "\n".join(lines) + "\n"


@FUZZ
@given(hosts=ini_inventory())
@surface("Ansible INI inventory")
def test_fuzz_ansible_ini(tmp_path_factory: pytest.TempPathFactory, hosts: str) -> None:
    """Whatever the INI holds: exit 0 or one clear refusal, no hang, no blow-up, nothing written,
    no password copied or quoted."""
    _fuzz_convert(tmp_path_factory.mktemp("ini"), hosts, "hosts.ini")


class _Raw(str):
    """A YAML scalar written as it is (a number of 5,000 digits, a tag), not quoted."""


_YAML_VALUE = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["\x00", "\ud800", "{{ lookup('x') }}", "a b", ""]),
    st.integers(-(10**20), 10**20),
    st.sampled_from(["9" * 5000, "1e400", ".inf", "0", "65536", "-1", "[[[[[[[[[[", "!unsafe x",
                     '!vault "$ANSIBLE_VAULT;1.1;AES256 3132"', "&a x", "*a"]).map(_Raw),
)  # fmt: skip
_HOST_VARS = st.sampled_from(["ansible_host", "ansible_port", "ansible_user", "ansible_become", "root_pw", "ec2_type"])


def _yaml(value: object) -> str:
    """``value`` as YAML flow text: mappings and lists, strings quoted, _Raw as written."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_yaml(k)}: {_yaml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, _Raw):
        return str(value)
    return "null" if value is None else json.dumps(value)


@st.composite
def _group(draw: st.DrawFn, depth: int = 0) -> dict[str, object]:
    body: dict[str, object] = {}
    if draw(st.booleans()):
        hosts = [draw(_host()).split(" ")[0].split(":")[0] for _ in range(draw(st.integers(0, 3)))]
        body["hosts"] = {
            h: draw(st.none() | st.dictionaries(_HOST_VARS | _WORD, _YAML_VALUE, max_size=3)) for h in hosts
        }
    if draw(st.booleans()):
        body["vars"] = draw(st.dictionaries(_HOST_VARS | _WORD, _YAML_VALUE, max_size=3))
    if depth < 3 and draw(st.booleans()):
        names = st.sampled_from(["g", "h", "all"]) | _WORD
        body["children"] = {draw(names): draw(_group(depth + 1)) for _ in range(draw(st.integers(1, 3)))}
    return body


@st.composite
def yaml_inventory(draw: st.DrawFn) -> bytes:
    """A YAML inventory: ``all`` with groups of hosts, vars and children nested a few deep,
    hostile ranges and values, a NUL now and then, and the sentinel password in a variable of
    a host the mapping converts."""
    good = {"db1": {"ansible_host": "192.0.2.11", "repl_ip": "10.1.0.11", "repl_iface": "eth1"},
            "db2": {"ansible_host": "192.0.2.12", "repl_ip": "10.1.0.12", "repl_iface": "eth1"}}  # fmt: skip
    good["db1"][draw(_HOST_VARS | _WORD)] = draw(secret_forms())
    tree = draw(_group())
    children = tree.setdefault("children", {})
    assert isinstance(children, dict)
    if draw(st.booleans()):
        children["g"] = {"hosts": good}
    text = _yaml({"all": tree}) + "\n"
    return text.encode() + (b"# \x00\n" if draw(st.integers(0, 9)) == 0 else b"")


@FUZZ
@given(hosts=yaml_inventory())
@surface("Ansible YAML inventory")
def test_fuzz_ansible_yaml(tmp_path_factory: pytest.TempPathFactory, hosts: bytes) -> None:
    """Whatever the YAML holds: exit 0 or one clear refusal, no hang, no blow-up, nothing written,
    no password copied or quoted."""
    _fuzz_convert(tmp_path_factory.mktemp("yaml"), hosts, "hosts.yaml")
