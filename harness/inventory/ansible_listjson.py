"""``ansible-inventory --list`` output as an inventory: whatever Ansible itself resolved.

A dynamic inventory (a cloud plugin, a script), vars plugins or anything else the harness does
not read are rendered by Ansible into one JSON document: ``{"_meta": {"hostvars": {host:
vars}}, group: {"hosts": [...], "children": [...]}}``, each host's variables final (its groups'
already merged in, ``group_vars/`` and ``host_vars/`` included).  The document is turned into
the group structure a YAML inventory has, and resolving it again gives the variables Ansible
gave.  ``--list --export`` output is refused: there each group's vars hold its inventory vars
and its ``group_vars/`` files merged into one, and Ansible's order between the two (a
``group_vars/all`` file outranks any group's inventory vars) cannot be told from it.
"""

from __future__ import annotations

from typing import Any, Final

from harness.errors import ConfigError

__all__ = ["META_KEY", "from_list_output", "is_list_output"]

#: The key that marks ``ansible-inventory --list`` output (no group may be named so).
META_KEY: Final = "_meta"


def is_list_output(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get(META_KEY), dict)


def _names(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of names")
    return list(value)


def from_list_output(data: dict[str, Any], source: str) -> dict[str, Any]:
    """The ``{group: {hosts, vars, children}}`` structure of a ``--list`` document."""
    hostvars = data[META_KEY].get("hostvars") or {}
    if not isinstance(hostvars, dict):
        raise ConfigError(f"{source}: {META_KEY}.hostvars: expected a mapping of hosts")
    out: dict[str, Any] = {}
    for name, body in data.items():
        if name == META_KEY:
            continue
        where = f"{source}: group {name!r}"
        if not isinstance(body, dict):
            raise ConfigError(f"{where}: expected a mapping")
        group: dict[str, Any] = {}
        hosts = _names(body.get("hosts"), f"{where} hosts")
        if hosts:
            group["hosts"] = {h: dict(hostvars.get(h) or {}) for h in hosts}
        children = _names(body.get("children"), f"{where} children")
        if children:
            group["children"] = dict.fromkeys(children)
        if body.get("vars"):
            raise ConfigError(
                f"{where}: has vars, as `ansible-inventory --list --export` writes them; their order against "
                "group_vars/ files is lost there: give `ansible-inventory --list` output (without --export)"
            )
        out[name] = group
    return out
