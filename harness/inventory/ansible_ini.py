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
  ``expand_hostname_range`` does (leading zeros keep the width); a range's hosts are counted
  before it expands, so ``h[0:30000000]`` or ranges nested into millions are refused, not
  built: at most :data:`~harness.limits.MAX_HOSTS` hosts in the file, bounds of at
  most :data:`~harness.limits.MAX_DIGITS` digits;
* ``#`` and ``;`` start comment lines.
"""

from __future__ import annotations

import ast
import math
import re
import shlex
import string
from collections.abc import Sequence
from typing import Any, Final

from harness.errors import ConfigError
from harness.limits import MAX_DIGITS, MAX_HOSTS
from harness.redact import redact_head

__all__ = ["expand_host_range", "host_port", "looks_like_ini", "parse_ini_inventory"]

_SECTION: Final = re.compile(r"^\[([^:\]\s]+)(?::(\w+))?\]\s*(?:[#;].*)?$")
_COMMENT: Final = ("#", ";")
_INI_SUFFIXES: Final = (".ini", ".cfg", ".hosts")
_KINDS: Final = ("hosts", "vars", "children")
_MAX_PORT: Final = 65535


def host_port(value: object, where: str) -> int:
    """A TCP port from a host line (``name:2222``) or ``ansible_port``: 1-65535, or ConfigError."""
    text = str(value).strip()
    if isinstance(value, bool) or not (text.isascii() and text.isdigit()) or len(text) > 5:
        raise ConfigError(f"{where}: port {redact_head(text, MAX_DIGITS)!r} is not a whole number in 1-{_MAX_PORT}")
    port = int(text)
    if not 1 <= port <= _MAX_PORT:
        raise ConfigError(f"{where}: port {port} is outside 1-{_MAX_PORT}")
    return port


def _choices(pattern: str, nrange: str) -> tuple[Sequence[str] | range, int]:
    """What one ``[begin:end(:step)]`` stands for (letters, or numbers and their zero-padded
    width), checked but not expanded."""
    bounds = nrange.split(":")
    if len(bounds) not in (2, 3):
        raise ConfigError(f"host range {pattern!r} must be begin:end or begin:end:step")
    beg, end = bounds[0] or "0", bounds[1]
    step = bounds[2] if len(bounds) == 3 else "1"
    if not end:
        raise ConfigError(f"host range {pattern!r} must specify an end value")
    if max(len(beg), len(end), len(step)) > MAX_DIGITS:
        raise ConfigError(f"host range {pattern!r}: a bound has more than {MAX_DIGITS} digits")
    width = len(beg) if beg[0] == "0" and len(beg) > 1 else 0
    if width and len(end) != width:
        raise ConfigError(f"host range {pattern!r} must have equal-length begin and end")
    numbers = re.compile(r"\A[0-9]+\Z")
    if not numbers.match(step) or int(step) < 1:
        raise ConfigError(f"host range {pattern!r}: begin, end and step must be numbers or letters")
    if beg in string.ascii_letters and end in string.ascii_letters:
        i_beg, i_end = string.ascii_letters.index(beg), string.ascii_letters.index(end)
        if i_beg > i_end:
            raise ConfigError(f"host range {pattern!r} must have begin <= end")
        return string.ascii_letters[i_beg : i_end + 1 : int(step)], 0
    if not (numbers.match(beg) and numbers.match(end)):
        raise ConfigError(f"host range {pattern!r}: begin, end and step must be numbers or letters")
    first, last, stride = int(beg), int(end), int(step)
    return range(first, last + 1, stride) if last >= first else range(0), width


def _count(values: Sequence[str] | range) -> int:
    # len() of a range beyond sys.maxsize raises; arithmetic does not
    if isinstance(values, range):
        return max(0, (values.stop - values.start + values.step - 1) // values.step)
    return len(values)


def expand_host_range(pattern: str, limit: int = MAX_HOSTS) -> list[str]:
    """``node[1:3]`` → node1, node2, node3 (Ansible's ``expand_hostname_range``); several ranges
    multiply.  More than ``limit`` hosts is refused before any is made."""
    pieces: list[str] = []
    ranges: list[tuple[Sequence[str] | range, int]] = []
    rest = pattern
    while "[" in rest:
        head, rest = rest.split("[", 1)
        if "]" not in rest:
            raise ConfigError(f"host range {pattern!r} has no closing ']'")
        nrange, rest = rest.split("]", 1)
        pieces.append(head)
        ranges.append(_choices(pattern, nrange))
    total = math.prod(_count(values) for values, _ in ranges)
    if total > MAX_HOSTS:
        raise ConfigError(f"host range {pattern!r} names {total} hosts; the harness reads at most {MAX_HOSTS}")
    if total > limit:
        raise ConfigError(f"{pattern!r}: more than {MAX_HOSTS} hosts in the file; the harness refuses it")
    if not ranges:
        return [pattern]
    hosts = [pieces[0]]
    for (values, width), piece in zip(ranges, [*pieces[1:], rest], strict=True):
        texts = [v if isinstance(v, str) else str(v).zfill(width) for v in values]
        hosts = [f"{host}{text}{piece}" for host in hosts for text in texts]
    return hosts


def _value(text: str) -> Any:
    # Ansible's _parse_value: a Python literal when it is one, the text otherwise
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


def _host_line(line: str, where: str, limit: int) -> tuple[list[str], dict[str, Any]]:
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
        variables.setdefault("ansible_port", host_port(port[2], where))
    try:
        return expand_host_range(pattern, limit), variables
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


class _IniReader:
    """The groups of an INI inventory, read one line at a time."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.groups: dict[str, dict[str, Any]] = {}
        self.defined: set[str] = {"all", "ungrouped"}
        self.pending_children: dict[str, str] = {}
        self.pending_vars: dict[str, str] = {}
        self.hosts: set[str] = set()
        self.name, self.kind = "ungrouped", "hosts"

    def group(self, name: str) -> dict[str, Any]:
        return self.groups.setdefault(name, {"hosts": {}, "vars": {}, "children": {}})

    def section(self, line: str, where: str) -> None:
        section = _SECTION.match(line)
        if not section:
            raise ConfigError(f"{where}: not a section header [group], [group:vars] or [group:children]: {line!r}")
        self.name, self.kind = section[1], section[2] or "hosts"
        if self.kind not in _KINDS:
            raise ConfigError(f"{where}: section [{self.name}:{self.kind}] has unknown type {self.kind!r}")
        if self.kind == "vars":
            self.pending_vars.setdefault(self.name, where)
        else:
            self.defined.add(self.name)
        self.group(self.name)

    def hosts_line(self, line: str, where: str) -> None:
        hosts, variables = _host_line(line, where, MAX_HOSTS - len(self.hosts))
        group = self.group(self.name)["hosts"]
        for host in hosts:
            group.setdefault(host, {}).update(variables)
        self.hosts.update(hosts)
        if len(self.hosts) > MAX_HOSTS:
            raise ConfigError(f"{where}: more than {MAX_HOSTS} hosts in the file; the harness refuses it")

    def vars_line(self, line: str, where: str) -> None:
        if "=" not in line:
            raise ConfigError(f"{where}: expected key=value in [{self.name}:vars], got {line!r}")
        key, value = (part.strip() for part in line.split("=", 1))
        self.group(self.name)["vars"][key] = _value(value)

    def children_line(self, line: str, where: str) -> None:
        child = line.split(maxsplit=1)[0]
        self.group(self.name)["children"][child] = None
        message = f"{where}: section [{self.name}:children] includes undefined group {child!r}"
        self.pending_children.setdefault(child, message)

    def line(self, line: str, where: str) -> None:
        if line.startswith("["):
            self.section(line, where)
        elif self.kind == "hosts":
            self.hosts_line(line, where)
        elif self.kind == "vars":
            self.vars_line(line, where)
        else:
            self.children_line(line, where)

    def result(self) -> dict[str, Any]:
        for child, message in self.pending_children.items():
            if child not in self.defined:
                raise ConfigError(message)
        for group_name, where in self.pending_vars.items():
            if group_name not in self.defined:
                raise ConfigError(f"{where}: section [{group_name}:vars] is for a group that is never defined")
        # every group at the top level, as a YAML inventory's children of `all` are
        return {name: {key: value for key, value in body.items() if value} for name, body in self.groups.items()}


def parse_ini_inventory(text: str, source: str) -> dict[str, Any]:
    """The inventory as YAML-inventory data: ``{group: {"hosts": {host: vars}, "vars": {...},
    "children": {child: None}}}``, every group at the top level (a child of ``all``)."""
    reader = _IniReader(source)
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line and not line.startswith(_COMMENT):
            reader.line(line, f"{source}:{number}")
    return reader.result()


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
