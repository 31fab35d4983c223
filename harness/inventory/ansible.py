"""Ansible inventories (YAML; INI, :mod:`harness.inventory.ansible_ini`; or what
``ansible-inventory --list`` prints, :mod:`harness.inventory.ansible_listjson`) → harness inventories,
through a small mapping file.

Many teams already describe their DRBD nodes in an Ansible inventory (``all`` → ``hosts`` /
``children`` / ``vars``, with ``ansible_host``, ``ansible_port``, ``ansible_user``,
``ansible_ssh_private_key_file``).  Rather than keeping a second copy of those addresses, a
mapping file (:mod:`harness.inventory.ansible_mapping`) says what the harness needs that
Ansible does not know.

Variables are resolved as Ansible does (:mod:`harness.inventory.ansible_groups`).  Only hosts
named by a pair become nodes.  The ``group_vars/`` and ``host_vars/`` directories beside the
inventory file are read (:mod:`harness.inventory.ansible_varsdirs`); dynamic inventories are not.

Secrets are never copied: connection and become passwords, vault-encrypted values and anything
that looks like a key or token are left out with a note naming the variable (never its value);
a variable the conversion *needs* that is vault-encrypted or templated is refused, because the
harness cannot decrypt or render it, and so is a harness field mapped to a secret variable.
The result is a plain harness inventory dict; callers validate it like any other
(:func:`harness.inventory.loader.load_ansible_mapping`).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from harness.errors import ConfigError
from harness.inventory.ansible_groups import GroupTree, Resolved
from harness.inventory.ansible_ini import host_port, looks_like_ini, parse_ini_inventory
from harness.inventory.ansible_listjson import from_list_output, is_list_output
from harness.inventory.ansible_mapping import MAPPING_KEY, AnsibleMapping, MappedPair, SshDefaults, is_ansible_mapping
from harness.inventory.ansible_secrets import VaultValue, is_secret_value
from harness.inventory.ansible_varsdirs import VARS_DIRS, read_vars_dir
from harness.inventory.models import NAME_PATTERN
from harness.redact import looks_secret
from harness.userfiles.userfile import read_config_text
from harness.userfiles.yamlsafe import construct_yaml_text

__all__ = [
    "MAPPING_KEY",
    "AnsibleInventory",
    "AnsibleMapping",
    "Conversion",
    "VaultValue",
    "convert",
    "is_ansible_mapping",
    "load_ansible_inventory",
    "parse_ansible_inventory",
]

_KEY_FILE_VARS: Final = ("ansible_ssh_private_key_file", "ansible_private_key_file")
_NAME: Final = re.compile(NAME_PATTERN)


class _AnsibleLoader(yaml.SafeLoader):
    """PyYAML's safe loader (Ansible reads inventories as YAML 1.1 too) plus Ansible's tags."""


def _vault(loader: yaml.SafeLoader, node: yaml.Node) -> VaultValue:
    return VaultValue()


def _unsafe(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    # `!unsafe` only tells Ansible not to template the value; the value itself is plain.
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    raise yaml.constructor.ConstructorError(None, None, "!unsafe on a collection", node.start_mark)


def _no_duplicates(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    # Ansible keeps the last of two equal keys with a warning; for addresses that is how the
    # wrong node gets written to, so refuse instead.
    loader.flatten_mapping(node)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=True)


_AnsibleLoader.add_constructor("!vault", _vault)
_AnsibleLoader.add_constructor("!unsafe", _unsafe)
_AnsibleLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)


@dataclass(frozen=True)
class AnsibleInventory:
    """The hosts and groups of an Ansible inventory (YAML or INI), with each host's resolved variables."""

    source: str
    #: Host → variables, resolved with Ansible's precedence (all < groups by depth < host).
    hosts: Mapping[str, Mapping[str, Any]]
    #: Group → its hosts, its descendants' included, in the order the file lists them.
    groups: Mapping[str, tuple[str, ...]]


def load_ansible_inventory(path: Path) -> AnsibleInventory:
    """Read an Ansible YAML or INI inventory file and the ``group_vars/`` and ``host_vars/``
    beside it (see :func:`parse_ansible_inventory`)."""
    if path.is_dir():
        raise ConfigError(
            f"{path}: a directory; name the inventory file in it (its {' and '.join(VARS_DIRS)} beside it are read)"
        )
    return parse_ansible_inventory(read_config_text(path, "Ansible inventory"), str(path), vars_dirs=path.parent)


def _parse_vars_file(text: str, source: str) -> Any:
    return construct_yaml_text(text, source, _AnsibleLoader, finite=False)


def parse_ansible_inventory(text: str, source: str = "<string>", *, vars_dirs: Path | None = None) -> AnsibleInventory:
    """Parse an Ansible YAML or INI inventory, with the ``group_vars/`` and ``host_vars/`` of
    ``vars_dirs`` when given; ConfigError for what it cannot represent faithfully."""
    # YAML: a SafeLoader subclass (no arbitrary objects), through the harness's bounded loader;
    # Ansible variables that are not numbers the harness reads may be anything, .inf included.
    if looks_like_ini(text, source):
        data: Any = parse_ini_inventory(text, source)
    else:
        data = construct_yaml_text(text, source, _AnsibleLoader, finite=False)
    listed = is_list_output(data)
    if listed:  # `ansible-inventory --list` JSON: what Ansible resolved, its vars files included
        data = from_list_output(data, source)
    if not isinstance(data, dict):
        raise ConfigError(
            f"{source}: neither a YAML inventory (groups such as `all:`), an INI one ([group]) "
            "nor `ansible-inventory --list` JSON"
        )
    tree = GroupTree(source)
    for name, body in data.items():
        tree.add(str(name), body, None if name == "all" else "all")
    tree.check()
    if vars_dirs is not None and not listed:
        tree.group_files = read_vars_dir(vars_dirs / "group_vars", tree.groups, _parse_vars_file)
        tree.host_files = read_vars_dir(vars_dirs / "host_vars", tree.host_vars, _parse_vars_file)
    hosts = Resolved(tree.host_vars, tree.resolved)
    groups = Resolved(tree.groups, tree.members)
    return AnsibleInventory(source, hosts, groups)


# ------------------------------------------------------------------------------------------
# Conversion


@dataclass(frozen=True)
class Conversion:
    """A harness inventory as plain data, and what the conversion left out or assumed."""

    data: dict[str, Any]
    notes: tuple[str, ...]
    ansible_source: str

    def to_yaml(self, mapping_source: str) -> str:
        header = (
            f"# Generated by `harness inventory from-ansible` from {self.ansible_source}\n"
            f"# with the mapping {mapping_source}. Regenerate it rather than editing it;\n"
            "# secrets (passwords, vault values) are never copied.\n"
        )
        return header + yaml.safe_dump(self.data, sort_keys=False, default_flow_style=False, allow_unicode=True)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _node_name(host: str, explicit: Mapping[str, str]) -> str:
    if host in explicit:
        return explicit[host]
    # `db-a1.prod.example.com` → `db-a1`; an address has no name to derive.
    base = host if _is_ip(host) else host.split(".", 1)[0].lower().replace("_", "-")
    if not _NAME.match(base):
        raise ConfigError(
            f"Ansible host {host!r} gives no valid node name ({base!r} must match {NAME_PATTERN}); "
            f"name it in the mapping: node_names: {{{host}: db-1}}"
        )
    return base


class _Host:
    """One Ansible host's variables, read with checks (vault, templates) on every use."""

    def __init__(self, name: str, variables: Mapping[str, Any]) -> None:
        self.name = name
        self.vars = variables

    def get(self, var: str) -> Any:
        value = self.vars.get(var)
        if value is None:
            return None
        if isinstance(value, VaultValue):
            raise ConfigError(
                f"host {self.name!r}: {var} is vault-encrypted; the harness does not decrypt secrets — "
                "give this value in plain text (it is an address or a name, not a secret)"
            )
        if isinstance(value, str) and ("{{" in value or "{%" in value):
            raise ConfigError(
                f"host {self.name!r}: {var} is a Jinja template ({value!r}); the conversion needs the literal value"
            )
        if isinstance(value, str) and looks_secret(f"{var}={value}"):
            raise ConfigError(f"host {self.name!r}: {var} looks like a secret; refusing to copy it")
        return value


def _bool(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("yes", "true", "1", "on"):
        return True
    if text in ("no", "false", "0", "off"):
        return False
    raise ConfigError(f"{where}: expected a boolean, got {value!r}")


def _ssh(host: _Host, defaults: SshDefaults) -> dict[str, Any]:
    d = defaults
    # `is None`, not falsy: `ansible_port: 0` or an empty `ansible_host` is refused, never replaced
    address, port, user = (host.get(v) for v in ("ansible_host", "ansible_port", "ansible_user"))
    ssh: dict[str, Any] = {"host": host.name if address is None else address}
    port = d.port if port is None else host_port(port, f"host {host.name!r}: ansible_port")
    user = d.user if user is None else user
    if port is not None:
        ssh["port"] = port
    if user is not None:
        ssh["user"] = user
    key = next((host.get(v) for v in _KEY_FILE_VARS if host.get(v) is not None), None)
    if key is not None:
        try:
            key_path = Path(str(key)).expanduser()
        except RuntimeError:  # `~nosuchuser/...`: Path.expanduser cannot find that home
            raise ConfigError(f"host {host.name!r}: {key!r}: no such user's home directory to expand") from None
        if not key_path.is_absolute():
            raise ConfigError(f"host {host.name!r}: {key!r} is a relative key path; the harness needs an absolute one")
        ssh["key"] = str(key_path)
    elif d.key is not None:
        ssh["key"] = d.key
    elif d.key_env is not None:
        ssh["key_env"] = d.key_env
    ssh["known_hosts"] = d.known_hosts
    become = host.get("ansible_become")
    sudo = _bool(become, f"host {host.name!r}: ansible_become") if become is not None else d.sudo
    if sudo is not None:
        ssh["sudo"] = sudo
    if d.connect_timeout is not None:
        ssh["connect_timeout"] = d.connect_timeout
    return ssh


def _node(host: _Host, mapping: AnsibleMapping) -> dict[str, Any]:
    names, d = mapping.host_vars, mapping.defaults

    def field(var: str, default: Any, what: str, required: bool = False) -> Any:
        value = host.get(var)
        if value is None:
            value = default
        if value is None and required:
            raise ConfigError(
                f"host {host.name!r}: no {what} — set host variable {var!r} (mapping host_vars) "
                f"or a default in the mapping's defaults:"
            )
        return value

    node: dict[str, Any] = {"az": field(names.az, d.az, "availability zone", required=True)}
    for key, var, default in (
        ("instance_type", names.instance_type, d.instance_type),
        ("volume", names.volume, d.volume),
        ("hostname", names.hostname, None),
    ):
        value = field(var, default, key)
        if value is not None:
            node[key] = value
    node["ssh"] = _ssh(host, d.ssh)
    node["replication"] = {
        "ip": field(names.replication_ip, None, "replication ip", required=True),
        "iface": field(names.replication_iface, d.replication_iface, "replication interface", required=True),
    }
    scratch = field(names.scratch_devices, list(d.scratch_devices) or None, "scratch devices")
    if scratch is not None:
        node["scratch_devices"] = [scratch] if isinstance(scratch, str) else list(scratch)
    return node


def _pair_hosts(name: str, pair: MappedPair, inventory: AnsibleInventory) -> tuple[str, str]:
    if pair.hosts is not None:
        for host in pair.hosts:
            if host not in inventory.hosts:
                raise ConfigError(f"pair {name!r}: host {host!r} is not in {inventory.source}")
        return pair.hosts
    assert pair.group is not None
    if pair.group not in inventory.groups:
        raise ConfigError(f"pair {name!r}: group {pair.group!r} is not in {inventory.source}")
    members = inventory.groups[pair.group]
    if len(members) != 2:
        raise ConfigError(
            f"pair {name!r}: group {pair.group!r} has {len(members)} hosts ({', '.join(members) or 'none'}); "
            "a pair needs exactly two (primary first), or list them with hosts: [primary, secondary]"
        )
    return members[0], members[1]


def convert(mapping: AnsibleMapping, inventory: AnsibleInventory) -> Conversion:
    """The harness inventory ``mapping`` describes over ``inventory`` (not yet validated)."""
    notes: list[str] = []
    node_of: dict[str, str] = {}
    nodes: dict[str, dict[str, Any]] = {}
    pairs: dict[str, dict[str, Any]] = {}
    for pair_name, pair in mapping.pairs.items():
        ends = _pair_hosts(pair_name, pair, inventory)
        for host in ends:
            if host in node_of:
                continue
            node = _node_name(host, mapping.node_names)
            if node in nodes:
                other = next(h for h, n in node_of.items() if n == node)
                raise ConfigError(
                    f"Ansible hosts {other!r} and {host!r} both become node {node!r}; name them under node_names:"
                )
            variables = inventory.hosts[host]
            dropped = sorted(v for v, value in variables.items() if is_secret_value(v, value))
            if dropped:
                notes.append(f"{host}: not copied (secrets stay in Ansible): {', '.join(dropped)}")
            if any(v in variables for v in ("ansible_become_password", "ansible_become_pass", "ansible_sudo_pass")):
                notes.append(f"{host}: has a become password; the harness needs passwordless sudo (sudo -n)")
            node_of[host] = node
            nodes[node] = _node(_Host(host, variables), mapping)
        spec: dict[str, Any] = {"primary": node_of[ends[0]], "secondary": node_of[ends[1]]}
        spec.update(pair.model_dump(exclude={"hosts", "group"}, exclude_none=True))
        pairs[pair_name] = spec
    data: dict[str, Any] = {"name": mapping.name, "nodes": nodes, "pairs": pairs, **mapping.harness}
    return Conversion(data, tuple(notes), inventory.source)
