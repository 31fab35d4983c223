"""The harness's one YAML loader: strict scalars, duplicate keys refused, line numbers kept, and
no file that can crash or hang it.

PyYAML implements YAML 1.1, where ``no``/``on``/``off`` become booleans, ``010`` is octal and
``8.4`` is a float; and it silently keeps the last of two equal keys.  An inventory where
``protocol: on`` turns into ``True`` or where a second ``device:`` line wins is exactly the kind
of mistake that writes to the wrong disk.  So :func:`load_yaml_text` builds plain data from the
node tree itself, resolving plain scalars with the YAML 1.2 core schema only:
``true``/``false``, ``null``/``~``, decimal integers and finite floats; everything else is a
string.  Every mapping value's source line is kept in a side table keyed by its path (a tuple of
keys and list indexes) so validation errors can name ``file:line``.  Files read with PyYAML's
own constructors (Ansible's YAML 1.1 inventories with their ``!vault`` tags, the sizing catalog)
go through :func:`construct_yaml_text`.

Both ways compose through :mod:`harness.userfiles.yamlguard`, which bounds depth, size and alias
expansion and refuses complex keys, and files are read through :mod:`harness.userfiles.userfile`
(regular, bounded, UTF-8): whatever a file holds, the answer is data or one ConfigError line.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.errors import ConfigError
from harness.userfiles.userfile import read_config_text
from harness.userfiles.yamlguard import compose_guarded, yaml_error

__all__ = ["LoadedYaml", "construct_yaml_file", "construct_yaml_text", "load_yaml_file", "load_yaml_text"]

Path_ = tuple[str | int, ...]

_INT = re.compile(r"\A[-+]?(0|[1-9][0-9]*)\Z")
# A float needs a dot or an exponent, and no leading zero ("010" stays a string).
_FLOAT = re.compile(r"\A[-+]?(0|[1-9][0-9]*)?(\.[0-9]+([eE][-+]?[0-9]+)?|(\.[0-9]*)?[eE][-+]?[0-9]+)\Z")
# Tags PyYAML's resolver assigns to untagged nodes; an explicit tag (`!!python/...`, `!foo`)
# is anything else and is refused.
_PLAIN_TAGS = {
    f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "timestamp", "seq", "map", "merge")
}
_NULL = {"null", "Null", "NULL", "~", ""}
_TRUE = {"true", "True", "TRUE"}
_FALSE = {"false", "False", "FALSE"}


@dataclass(frozen=True)
class LoadedYaml:
    """The plain data of a YAML document and the line (1-based) of every path in it."""

    data: Any
    source: str
    lines: dict[Path_, int] = field(default_factory=dict)

    def line_of(self, path: Path_) -> int | None:
        """Line of the deepest known prefix of ``path`` (pydantic locs can go deeper)."""
        for n in range(len(path), -1, -1):
            line = self.lines.get(tuple(path[:n]))
            if line is not None:
                return line
        return None


def _scalar(node: yaml.ScalarNode, source: str) -> Any:
    value = node.value
    if node.style is not None and node.style != "":
        return value  # quoted or block scalar: always a string
    if value in _NULL:
        return None
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    if _INT.match(value):
        return int(value)
    if _FLOAT.match(value) and any(c.isdigit() for c in value):
        # "8.4" stays a float here; schemas that want strings (DRBD versions) say so and
        # pydantic's strict mode rejects the float instead of guessing.
        number = float(value)
        if not math.isfinite(number):  # 1e400: too large for a float, it would be infinity
            raise ConfigError(f"{source}:{node.start_mark.line + 1}: {value} is not a finite number")
        return number
    return value


def _build(node: yaml.Node, path: Path_, lines: dict[Path_, int], source: str) -> Any:
    lines[path] = node.start_mark.line + 1
    if node.tag not in _PLAIN_TAGS:
        raise ConfigError(f"{source}:{node.start_mark.line + 1}: YAML tag {node.tag!r} is not allowed")
    if isinstance(node, yaml.ScalarNode):
        return _scalar(node, source)
    if isinstance(node, yaml.SequenceNode):
        return [_build(child, (*path, i), lines, source) for i, child in enumerate(node.value)]
    if isinstance(node, yaml.MappingNode):
        result: dict[str, Any] = {}
        for key_node, value_node in _merged_pairs(node, source):
            key = key_node.value  # a scalar: the guard refused list and mapping keys
            if key in result:
                raise ConfigError(
                    f"{source}:{key_node.start_mark.line + 1}: duplicate key {key!r} "
                    f"(first at line {lines[(*path, key)]})"
                )
            lines[(*path, key)] = key_node.start_mark.line + 1
            result[key] = _build(value_node, (*path, key), lines, source)
            lines[(*path, key)] = key_node.start_mark.line + 1
        return result
    raise ConfigError(f"{source}:{node.start_mark.line + 1}: unsupported YAML node")


def _merged_pairs(node: yaml.MappingNode, source: str) -> list[tuple[yaml.Node, yaml.Node]]:
    """Mapping pairs with ``<<: *anchor`` merge keys expanded; explicit keys win over merged."""
    explicit: list[tuple[yaml.Node, yaml.Node]] = []
    merged: list[tuple[yaml.Node, yaml.Node]] = []
    for key_node, value_node in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for src in sources:
                if not isinstance(src, yaml.MappingNode):
                    raise ConfigError(f"{source}:{src.start_mark.line + 1}: '<<' must merge a mapping")
                merged.extend(_merged_pairs(src, source))
        else:
            explicit.append((key_node, value_node))
    names = {k.value for k, _ in explicit}
    return explicit + [(k, v) for k, v in merged if k.value not in names]


def load_yaml_text(text: str, source: str = "<string>") -> LoadedYaml:
    """Parse one YAML document strictly (see module docstring)."""
    _, root = compose_guarded(yaml.SafeLoader, text, source, finite=False)
    lines: dict[Path_, int] = {}
    data = {} if root is None else _build(root, (), lines, source)
    return LoadedYaml(data=data, source=source, lines=lines)


def load_yaml_file(path: Path, what: str = "file") -> LoadedYaml:
    """Read and parse ``path``; a missing, unreadable or hostile file is a ConfigError."""
    return load_yaml_text(read_config_text(path, what), str(path))


def construct_yaml_text(text: str, source: str, loader: type[yaml.SafeLoader], *, finite: bool = True) -> Any:
    """The document built by ``loader``'s own constructors (a SafeLoader subclass: Ansible's
    tags, the catalog's duplicate-key check), composed through the same guard.  ``finite``:
    refuse ``.inf``, ``.nan`` and floats that overflow (where every number is a figure)."""
    instance, root = compose_guarded(loader, text, source, finite=finite)
    try:
        return None if root is None else instance.construct_document(root)
    except yaml.YAMLError as exc:
        raise yaml_error(exc, source, text) from None
    finally:
        instance.dispose()


def construct_yaml_file(path: Path, loader: type[yaml.SafeLoader], *, what: str, finite: bool = True) -> Any:
    """:func:`construct_yaml_text` of the file ``path`` (read through :mod:`harness.userfiles.userfile`)."""
    return construct_yaml_text(read_config_text(path, what), str(path), loader, finite=finite)
