"""Ansible INI inventories (``hosts.ini``), read as Ansible's ``ini`` inventory plugin reads them.

Most Ansible users keep INI inventories, LINBIT's own linstor-ansible among them.  The text is
turned into the same group structure a YAML inventory has (``{group: {hosts, vars,
children}}``), so one resolver (:func:`harness.inventory.ansible.parse_ansible_inventory`) applies
Ansible's variable precedence to both.  What is read, after Ansible's
``lib/ansible/plugins/inventory/ini.py``:

* ``[group]`` sections list hosts, one per line: ``name[:port] [key=value ...]`` (shell-like
  quoting; the port becomes ``ansible_port``); lines before the first section are hosts of
  ``ungrouped``;
* ``[group:vars]`` holds ``key=value`` lines, ``[group:children]`` group names; a child group
  that is never defined, or vars of a group that is never defined, is an error, as in Ansible;
* values go through Python's literal syntax as Ansible's ``_parse_value`` does (``22`` is a
  number, ``"quoted"`` loses its quotes, ``yes`` stays a string);
* host ranges ``node[1:3]``, ``db[01:10:2]``, ``web[a:c]`` expand as Ansible's
  ``expand_hostname_range`` does (leading zeros keep the width);
* ``#`` and ``;`` start comment lines.
"""

from __future__ import annotations

import ast
import re
import shlex
import string
from typing import Any, Final

from harness.errors import ConfigError

__all__ = ["expand_host_range", "looks_like_ini", "parse_ini_inventory"]

_SECTION: Final = re.compile(r"^\[([^:\]\s]+)(?::(\w+))?\]\s*(?:[#;].*)?$")
_COMMENT: Final = ("#", ";")
_INI_SUFFIXES: Final = (".ini", ".cfg", ".hosts")


def expand_host_range(pattern: str) -> list[str]:
    """``node[1:3]`` → node1, node2, node3 (Ansible's ``expand_hostname_range``)."""
    if "[" not in pattern:
        return [pattern]
    head, rest = pattern.split("[", 1)
    if "]" not in rest:
        raise ConfigError(f"host range {pattern!r} has no closing ']'")
    nrange, tail = rest.split("]", 1)
    bounds = nrange.split(":")
    if len(bounds) not in (2, 3):
        raise ConfigError(f"host range {pattern!r} must be begin:end or begin:end:step")
    beg, end = bounds[0] or "0", bounds[1]
    step = bounds[2] if len(bounds) == 3 else "1"
    if not end:
        raise ConfigError(f"host range {pattern!r} must specify an end value")
    width = len(beg) if beg[0] == "0" and len(beg) > 1 else 0
    if width and len(end) != width:
        raise ConfigError(f"host range {pattern!r} must have equal-length begin and end")
    try:
        stride = int(step)
        if stride < 1:
            raise ValueError
        if beg in string.ascii_letters and end in string.ascii_letters:
            i_beg, i_end = string.ascii_letters.index(beg), string.ascii_letters.index(end)
            if i_beg > i_end:
                raise ConfigError(f"host range {pattern!r} must have begin <= end")
            parts = list(string.ascii_letters[i_beg : i_end + 1 : stride])
        else:
            parts = [str(i).zfill(width) for i in range(int(beg), int(end) + 1, stride)]
    except ValueError:
        raise ConfigError(f"host range {pattern!r}: begin, end and step must be numbers or letters") from None
    return [host for part in parts for host in expand_host_range(f"{head}{part}{tail}")]


def _value(text: str) -> Any:
    # Ansible's _parse_value: a Python literal when it is one, the text otherwise
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


def _host_line(line: str, where: str) -> tuple[list[str], dict[str, Any]]:
    try:
        tokens = shlex.split(line, comments=True)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}: {line!r}") from None
    pattern, variables = tokens[0], {}
    for token in tokens[1:]:
        if "=" not in token:
            raise ConfigError(f"{where}: expected key=value host variable assignment, got {token!r}")
        key, value = token.split("=", 1)
        variables[key] = _value(value)
    port = re.fullmatch(r"(.*[^:]):(\d+)", pattern)  # name:port, not an IPv6 address (ranges have ':' too)
    if port and ":" not in re.sub(r"\[[^\]]*\]", "", port[1]):
        pattern = port[1]
        variables.setdefault("ansible_port", int(port[2]))
    try:
        return expand_host_range(pattern), variables
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _group(groups: dict[str, dict[str, Any]], name: str) -> dict[str, Any]:
    return groups.setdefault(name, {"hosts": {}, "vars": {}, "children": {}})


def parse_ini_inventory(text: str, source: str) -> dict[str, Any]:
    """The inventory as YAML-inventory data: ``{group: {"hosts": {host: vars}, "vars": {...},
    "children": {child: None}}}``, every group at the top level (a child of ``all``)."""
    groups: dict[str, dict[str, Any]] = {}
    defined: set[str] = {"all", "ungrouped"}
    pending_children: dict[str, str] = {}
    pending_vars: dict[str, str] = {}
    name, kind = "ungrouped", "hosts"
    for number, raw in enumerate(text.splitlines(), 1):
        where = f"{source}:{number}"
        line = raw.strip()
        if not line or line.startswith(_COMMENT):
            continue
        if line.startswith("["):
            section = _SECTION.match(line)
            if not section:
                raise ConfigError(f"{where}: not a section header [group], [group:vars] or [group:children]: {line!r}")
            name, kind = section[1], section[2] or "hosts"
            if kind not in ("hosts", "vars", "children"):
                raise ConfigError(f"{where}: section [{name}:{kind}] has unknown type {kind!r}")
            if kind == "vars":
                pending_vars.setdefault(name, where)
            else:
                defined.add(name)
            _group(groups, name)
            continue
        group = _group(groups, name)
        if kind == "hosts":
            hosts, variables = _host_line(line, where)
            for host in hosts:
                group["hosts"].setdefault(host, {}).update(variables)
        elif kind == "vars":
            if "=" not in line:
                raise ConfigError(f"{where}: expected key=value in [{name}:vars], got {line!r}")
            key, value = (part.strip() for part in line.split("=", 1))
            group["vars"][key] = _value(value)
        else:
            child = line.split()[0]
            group["children"][child] = None
            pending_children.setdefault(child, f"{where}: section [{name}:children] includes undefined group {child!r}")
    for child, message in pending_children.items():
        if child not in defined:
            raise ConfigError(message)
    for group_name, where in pending_vars.items():
        if group_name not in defined:
            raise ConfigError(f"{where}: section [{group_name}:vars] is for a group that is never defined")
    # every group at the top level, as a YAML inventory's children of `all` are
    return {group_name: {key: value for key, value in body.items() if value} for group_name, body in groups.items()}


def looks_like_ini(text: str, source: str) -> bool:
    """Whether ``text`` is an INI inventory rather than YAML: an INI file name, or a first line
    that is a ``[section]`` header or a host line (YAML's first line is ``key:``, ``-``, ``{``
    or ``---``)."""
    if source.lower().endswith(_INI_SUFFIXES):
        return True
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(_COMMENT):
            continue
        if _SECTION.match(line):
            return True
        return not (line.endswith(":") or ": " in line or line.startswith(("-", "{", "[", "%", "!")))
    return False
