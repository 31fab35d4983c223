"""Strict YAML loading: YAML 1.2 core scalars, duplicate keys rejected, line numbers kept.

PyYAML implements YAML 1.1, where ``no``/``on``/``off`` become booleans, ``010`` is octal and
``8.4`` is a float (PyYAML issues #613, #744); and it silently keeps the last of two equal
keys (#165).  An inventory where ``protocol: on`` turns into ``True`` or where a second
``device:`` line wins is exactly the kind of mistake that writes to the wrong disk.  So we
compose the node tree ourselves and resolve plain scalars with the YAML 1.2 core schema only:
``true``/``false``, ``null``/``~``, decimal integers and floats; everything else is a string.

Every mapping value's source line is kept in a side table keyed by its path (a tuple of keys
and list indexes) so validation errors can name ``file:line``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.errors import ConfigError

__all__ = ["LoadedYaml", "load_yaml_file", "load_yaml_text", "read_config_text"]

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


def _scalar(node: yaml.ScalarNode) -> Any:
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
        return float(value)
    return value


def _build(node: yaml.Node, path: Path_, lines: dict[Path_, int], source: str) -> Any:
    lines[path] = node.start_mark.line + 1
    if node.tag not in _PLAIN_TAGS:
        raise ConfigError(f"{source}:{node.start_mark.line + 1}: YAML tag {node.tag!r} is not allowed")
    if isinstance(node, yaml.ScalarNode):
        return _scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return [_build(child, (*path, i), lines, source) for i, child in enumerate(node.value)]
    if isinstance(node, yaml.MappingNode):
        result: dict[str, Any] = {}
        for key_node, value_node in _merged_pairs(node, source):
            if not isinstance(key_node, yaml.ScalarNode):
                raise ConfigError(f"{source}:{key_node.start_mark.line + 1}: mapping keys must be plain strings")
            key = key_node.value
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
    names = {k.value for k, _ in explicit if isinstance(k, yaml.ScalarNode)}
    return explicit + [(k, v) for k, v in merged if not (isinstance(k, yaml.ScalarNode) and k.value in names)]


def load_yaml_text(text: str, source: str = "<string>") -> LoadedYaml:
    """Parse one YAML document strictly (see module docstring)."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise ConfigError(f"{where}: YAML syntax error: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: YAML error: {exc}") from None
    lines: dict[Path_, int] = {}
    data = {} if root is None else _build(root, (), lines, source)
    return LoadedYaml(data=data, source=source, lines=lines)


def read_config_text(path: Path, what: str = "file") -> str:
    """The text of a file the user named; missing or unreadable is a ConfigError saying so."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: {what} not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        bom = (
            " (it starts with a UTF-16 byte-order mark: save it as UTF-8)"
            if exc.object[:2] in (b"\xff\xfe", b"\xfe\xff")
            else ""
        )
        raise ConfigError(
            f"{path}:{line}: not UTF-8: byte 0x{exc.object[exc.start]:02x} at offset {exc.start}{bom}; "
            "the harness reads its files as UTF-8"
        ) from None


def load_yaml_file(path: Path) -> LoadedYaml:
    """Read and parse ``path``; a missing or unreadable file is a ConfigError."""
    return load_yaml_text(read_config_text(path), str(path))
