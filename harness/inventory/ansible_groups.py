"""An Ansible inventory's group tree: its groups and hosts, each host's variables resolved with
Ansible's precedence, and each group's members, worked out only for what is asked.

Variables are resolved as Ansible does: ``all``'s vars, then each group's from the shallowest
to the deepest, groups of one depth by ``ansible_group_priority`` (default 1, the higher one
wins), then by name; then the files of ``group_vars/`` beside the inventory in the same order
(``all`` first), then the host's own vars, then its ``host_vars/`` file.  The priority is the
group's, not a variable: it never reaches a host's variables.  A group's members are
its own hosts, then its children's, breadth first, each host once.

Everything is linear in the file or computed on demand: host lists are ordered sets, a group's
depth is its longest path from ``all`` found in one topological pass, and a host's variables
or a group's members are resolved when first read (the conversion reads only the hosts its
pairs name), so a file of thousands of groups over thousands of hosts never builds every
group's member list.  Groups nested deeper than :data:`~harness.limits.MAX_DEPTH`
and more than :data:`~harness.limits.MAX_HOSTS` hosts are refused.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from harness.errors import ConfigError
from harness.inventory.ansible_ini import expand_host_range
from harness.limits import MAX_DEPTH, MAX_HOSTS

__all__ = ["PRIORITY", "GroupTree", "Resolved"]

#: The group variable Ansible reads as the group's priority (and keeps out of its vars).
PRIORITY: Final = "ansible_group_priority"

_GROUP_KEYS: Final = frozenset({"hosts", "vars", "children"})
V = TypeVar("V")


class Resolved(Mapping[str, V]):
    """A mapping whose keys are known and whose values are computed (once) when read."""

    def __init__(self, keys: Iterable[str], make: Callable[[str], V]) -> None:
        self._keys = dict.fromkeys(keys)
        self._make = make
        self._cache: dict[str, V] = {}

    def __getitem__(self, key: str) -> V:
        if key not in self._keys:
            raise KeyError(key)
        if key not in self._cache:
            self._cache[key] = self._make(key)
        return self._cache[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __repr__(self) -> str:
        return f"Resolved({list(self._keys)!r})"


@dataclass
class _Group:
    vars: dict[str, Any] = field(default_factory=dict)
    hosts: dict[str, None] = field(default_factory=dict)  # an ordered set
    children: dict[str, None] = field(default_factory=dict)
    parents: dict[str, None] = field(default_factory=dict)
    #: ``ansible_group_priority``: among groups of one depth, a higher one's vars win
    priority: int = 1


def _as_mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a mapping, got {type(value).__name__}")
    return value


def _priority(value: Any, where: str) -> int:
    """Ansible's ``int(value)`` of ``ansible_group_priority``."""
    try:
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ValueError
        return int(value)
    except ValueError:
        raise ConfigError(f"{where}: {PRIORITY} must be an integer, got {value!r}") from None


class GroupTree:
    """Groups as the YAML structure gives them (``{group: {hosts, vars, children}}``)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.groups: dict[str, _Group] = {"all": _Group()}
        self.host_vars: dict[str, dict[str, Any]] = {}
        self.host_groups: dict[str, dict[str, None]] = {}
        self._depth: dict[str, int] = {}
        #: ``group_vars/<group>`` and ``host_vars/<host>`` files beside the inventory, when read
        self.group_files: dict[str, dict[str, Any]] = {}
        self.host_files: dict[str, dict[str, Any]] = {}

    def add(self, name: str, body: Any, parent: str | None) -> None:
        """Group ``name`` (a child of ``parent``) and, recursively, its children."""
        where = f"{self.source}: group {name!r}"
        data = _as_mapping(body, where)
        unknown = set(data) - _GROUP_KEYS
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}; a group has hosts, vars and children")
        group = self.groups.setdefault(name, _Group())
        if parent is not None and name != parent:
            self.groups[parent].children[name] = None
            group.parents[parent] = None
        group.vars.update(_as_mapping(data.get("vars"), f"{where} vars"))
        if PRIORITY in group.vars:
            group.priority = _priority(group.vars.pop(PRIORITY), where)
        for key, host_vars in _as_mapping(data.get("hosts"), f"{where} hosts").items():
            own = _as_mapping(host_vars, f"{where} host {key!r}")
            for host in self._expanded(str(key), f"{where} hosts"):
                group.hosts[host] = None
                self.host_vars.setdefault(host, {}).update(own)
                self.host_groups.setdefault(host, {})[name] = None
            if len(self.host_vars) > MAX_HOSTS:
                raise ConfigError(f"{where}: more than {MAX_HOSTS} hosts in the file; the harness refuses it")
        for child, child_body in _as_mapping(data.get("children"), f"{where} children").items():
            self.add(str(child), child_body, name)

    def _expanded(self, key: str, where: str) -> list[str]:
        """The hosts a key stands for (``node[1:3]``, as Ansible), refused naming the file and group."""
        try:
            return expand_host_range(key, MAX_HOSTS - len(self.host_vars))
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None

    def _cycle(self, left: set[str]) -> str:
        # every group left over has a parent left over: walking up from one closes a cycle
        path: list[str] = [min(left)]
        at: dict[str, int] = {}
        while path[-1] not in at:
            at[path[-1]] = len(path) - 1
            path.append(next(p for p in self.groups[path[-1]].parents if p in left))
        return " → ".join(reversed(path[at[path[-1]] :]))

    def check(self) -> None:
        """Each group's depth (its longest path from ``all``); a cycle or a tree deeper than
        MAX_DEPTH is refused."""
        waiting = {name: len(group.parents) for name, group in self.groups.items()}
        depth = dict.fromkeys(self.groups, 0)
        ready = deque(name for name, n in waiting.items() if n == 0)
        while ready:
            name = ready.popleft()
            self._depth[name] = depth[name]
            if depth[name] > MAX_DEPTH:
                raise ConfigError(f"{self.source}: groups nested more than {MAX_DEPTH} deep (at {name!r})")
            for child in self.groups[name].children:
                depth[child] = max(depth[child], depth[name] + 1)
                waiting[child] -= 1
                if waiting[child] == 0:
                    ready.append(child)
        left = {name for name in self.groups if name not in self._depth}
        if left:
            raise ConfigError(f"{self.source}: groups form a cycle: {self._cycle(left)}")

    def members(self, name: str) -> tuple[str, ...]:
        """The group's hosts, then its descendants', breadth first, each once."""
        out: dict[str, None] = {}
        queue, seen = deque([name]), {name}
        while queue:
            group = self.groups[queue.popleft()]
            out.update(group.hosts)
            for child in group.children:
                if child not in seen:
                    seen.add(child)
                    queue.append(child)
        return tuple(out)

    def _ancestry(self, host: str) -> set[str]:
        found = {"all"}
        queue = deque(self.host_groups.get(host, ()))
        while queue:
            name = queue.popleft()
            if name not in found:
                found.add(name)
                queue.extend(self.groups[name].parents)
        return found

    def resolved(self, host: str) -> dict[str, Any]:
        """``host``'s variables, in Ansible's order (the module's docstring)."""
        ordered = sorted(self._ancestry(host) - {"all"}, key=self._order)
        merged: dict[str, Any] = dict(self.groups["all"].vars)
        for name in ordered:
            merged.update(self.groups[name].vars)
        for name in ["all", *ordered]:
            merged.update(self.group_files.get(name, {}))
        merged.update(self.host_vars[host])
        merged.update(self.host_files.get(host, {}))
        return merged

    def _order(self, name: str) -> tuple[int, int, str]:
        return self._depth.get(name, 0), self.groups[name].priority, name
