"""Host variables as Ansible itself resolves them: group priority, ``group_vars/`` and
``host_vars/``, in YAML and INI inventories, held against the real ``ansible-inventory --host``
(ansible-core, a dev dependency)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.inventory.ansible import load_ansible_inventory

ANSIBLE_INVENTORY = shutil.which("ansible-inventory") or str(Path(sys.executable).with_name("ansible-inventory"))

YAML = """\
all:
  vars: {drbd_iface: eth0}
  children:
    a_first:
      vars: {drbd_iface: eth9, az: a, ansible_group_priority: 10}
      hosts:
        n1: {}
        n2: {az: own}
    z_last:
      vars: {drbd_iface: eth1, az: z}
      hosts:
        n1: {}
        n2: {}
"""

INI = """\
[a_first]
n1
n2 az=own

[z_last]
n1
n2

[a_first:vars]
drbd_iface=eth9
az=a
ansible_group_priority=10

[z_last:vars]
drbd_iface=eth1
az=z

[all:vars]
drbd_iface=eth0
"""

VARS_FILES = {
    "group_vars/all.yml": "drbd_iface: eth7\nrack: r0\n",
    "group_vars/z_last/10-az.yaml": "az: from-dir\n",
    "group_vars/z_last/20-rack.yml": "rack: r2\n",
    "group_vars/z_last/.hidden.yml": "rack: hidden\n",
    "group_vars/a_first.yml": "instance_type: m5.large\n",
    "group_vars/no_such_group.yml": "rack: never\n",
    "host_vars/n2.json": '{"drbd_iface": "eth5"}\n',
}


def _ansible(path: Path, *args: str) -> dict[str, object]:
    out = subprocess.run(
        [ANSIBLE_INVENTORY, "-i", str(path), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={
            "ANSIBLE_LOCAL_TEMP": str(path.parent / ".ansible-tmp"),
            "PATH": "/usr/bin:/bin",
            "HOME": str(path.parent),
        },
    )
    return dict(json.loads(out.stdout))


def _layout(tmp_path: Path, name: str, text: str, files: dict[str, str]) -> Path:
    for rel, content in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(content)
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("vars_files", [{}, VARS_FILES], ids=["inventory-only", "with-vars-dirs"])
@pytest.mark.parametrize(("name", "text"), [("hosts.yaml", YAML), ("hosts.ini", INI)], ids=["yaml", "ini"])
def test_every_hosts_variables_are_what_ansible_inventory_says(
    tmp_path: Path, name: str, text: str, vars_files: dict[str, str]
) -> None:
    path = _layout(tmp_path, name, text, vars_files)
    inventory = load_ansible_inventory(path)
    for host in ("n1", "n2"):
        assert dict(inventory.hosts[host]) == _ansible(path, "--host", host), host
    # the priority is the group's: a_first (10) wins over z_last (1) though it sorts first
    n1 = dict(inventory.hosts["n1"])
    assert "ansible_group_priority" not in n1
    assert n1["drbd_iface"] == ("eth9" if not vars_files else "eth7")


def test_a_priority_that_is_no_integer_is_refused_naming_the_group(tmp_path: Path) -> None:
    path = _layout(
        tmp_path, "hosts.yaml", YAML.replace("ansible_group_priority: 10", "ansible_group_priority: high"), {}
    )
    with pytest.raises(ConfigError, match=r"group 'a_first': ansible_group_priority must be an integer, got 'high'"):
        load_ansible_inventory(path)


def test_a_vars_file_that_is_no_mapping_is_refused_naming_it(tmp_path: Path) -> None:
    path = _layout(tmp_path, "hosts.yaml", YAML, {"host_vars/n1.yml": "- eth1\n"})
    with pytest.raises(ConfigError, match=r"host_vars/n1.yml: expected a mapping of variables, got list"):
        load_ansible_inventory(path)


def test_an_inventory_directory_is_refused_naming_the_vars_directories(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"a directory; name the inventory file in it \(its group_vars and host_vars"):
        load_ansible_inventory(tmp_path)


def _listed(tmp_path: Path, path: Path, *args: str) -> Path:
    listed = tmp_path / "listed" / "inventory.json"
    listed.parent.mkdir(exist_ok=True)
    listed.write_text(json.dumps(_ansible(path, "--list", *args)))
    return listed


@pytest.mark.parametrize(("name", "text"), [("hosts.yaml", YAML), ("hosts.ini", INI)], ids=["yaml", "ini"])
def test_ansible_inventory_list_output_reads_as_the_inventory_it_came_from(
    tmp_path: Path, name: str, text: str
) -> None:
    path = _layout(tmp_path, name, text, VARS_FILES)
    listed = _listed(tmp_path, path)
    inventory = load_ansible_inventory(listed)
    for host in ("n1", "n2"):
        assert dict(inventory.hosts[host]) == _ansible(path, "--host", host), host
    assert set(inventory.groups["z_last"]) == {"n1", "n2"}


def test_list_export_output_is_refused_saying_why(tmp_path: Path) -> None:
    listed = _listed(tmp_path, _layout(tmp_path, "hosts.yaml", YAML, VARS_FILES), "--export")
    with pytest.raises(ConfigError, match=r"give `ansible-inventory --list` output \(without --export\)"):
        load_ansible_inventory(listed)
