"""Composing a YAML document within bounds, whatever the file holds.

PyYAML composes recursively and expands aliases without limit, so a hostile or broken file
ends in ``RecursionError`` (flow nesting 500 deep, ``&a [*a]``, ``&a {<<: *a}``), in minutes
of CPU and all the memory (a "billion laughs": nine aliases of nine aliases of ...), or in
``TypeError: unhashable type`` (a list or mapping as a key).  :func:`compose_guarded` composes
one document with any PyYAML loader and refuses, as a :class:`ConfigError` naming the place:

* more than :data:`MAX_DEPTH` levels of nesting, counted through aliases and merge keys;
* more than :data:`MAX_NODES` nodes, counted as written and again as aliases expand them;
* more than :data:`~harness.limits.MAX_EXPANDED_CHARS` characters of scalars once
  aliases expand them (one long string aliased thousands of times);
* an alias or merge key that contains itself;
* a key that is a list or a mapping (keys are strings);
* an integer of more than :data:`~harness.limits.MAX_DIGITS` digits (Python refuses
  to convert one of thousands, and no setting needs more);
* with ``finite``: a float that is ``.inf``, ``.nan`` or too large for a float.

A first pass over libyaml's event stream (C, about 1 µs an event) refuses a file too deep or
too large before PyYAML's pure-Python composer (about 50 µs a node) starts; the composer is
bounded again by itself, so the limits hold where libyaml is missing or reads the file otherwise.
"""

from __future__ import annotations

import math
from typing import Any, Final

import yaml

from harness.errors import ConfigError
from harness.limits import MAX_DEPTH, MAX_DIGITS, MAX_EXPANDED_CHARS, MAX_NODES

__all__ = ["MAX_DEPTH", "MAX_NODES", "compose_guarded", "yaml_error"]

_FLOAT_TAG: Final = "tag:yaml.org,2002:float"
_INT_TAG: Final = "tag:yaml.org,2002:int"
_OPEN: Final = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSE: Final = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
_NODES: Final = (*_OPEN, yaml.ScalarEvent, yaml.AliasEvent)


def _where(source: str, mark: Any) -> str:
    return f"{source}:{mark.line + 1}:{mark.column + 1}" if mark is not None else source


def _too_deep(source: str, mark: Any) -> ConfigError:
    return ConfigError(f"{_where(source, mark)}: nested more than {MAX_DEPTH} levels deep; the harness refuses it")


def _too_many(source: str, mark: Any, how: str) -> ConfigError:
    return ConfigError(f"{_where(source, mark)}: more than {MAX_NODES} YAML nodes {how}; the harness refuses it")


def yaml_error(exc: yaml.YAMLError, source: str, text: str) -> ConfigError:
    """One line for PyYAML's error: where it noticed the problem and what it is."""
    if isinstance(exc, yaml.reader.ReaderError):  # a control character (NUL, ESC) in the text
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - text.rfind("\n", 0, exc.position)
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        return ConfigError(f"{source}:{line}:{column}: control character U+{code:04X} is not allowed in YAML")
    if isinstance(exc, yaml.MarkedYAMLError):
        where = _where(source, exc.problem_mark)
        if isinstance(exc, yaml.constructor.ConstructorError):
            return ConfigError(f"{where}: {exc.problem}")
        return ConfigError(f"{where}: YAML syntax error: {exc.problem}")
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return ConfigError(f"{source}: YAML error: {first}")


def _prescan(text: str, source: str) -> None:
    """Refuse a document too deep or too large from libyaml's events, before composing."""
    if not getattr(yaml, "__with_libyaml__", False):
        return
    depth = nodes = 0
    try:
        for event in yaml.parse(text, Loader=yaml.CSafeLoader):
            if isinstance(event, _CLOSE):
                depth -= 1
                continue
            if isinstance(event, _OPEN):
                depth += 1
                if depth > MAX_DEPTH:
                    raise _too_deep(source, event.start_mark)
            if isinstance(event, _NODES):
                if not isinstance(event, _OPEN) and depth + 1 > MAX_DEPTH:  # a leaf is a level too
                    raise _too_deep(source, event.start_mark)
                nodes += 1
                if nodes > MAX_NODES:
                    raise _too_many(source, event.start_mark, "as written")
    except yaml.YAMLError:
        return  # the composer reports it, in PyYAML's words


class _Bounded:
    """Counts depth and nodes while a PyYAML loader composes (the composer recurses per level)."""

    def __init__(self, loader: yaml.SafeLoader, source: str) -> None:
        self.loader, self.source = loader, source
        self.depth = self.nodes = 0
        self.inner = loader.compose_node

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        mark = self.loader.peek_event().start_mark  # type: ignore[no-untyped-call]
        self.depth += 1
        self.nodes += 1
        if self.depth > MAX_DEPTH:
            raise _too_deep(self.source, mark)
        if self.nodes > MAX_NODES:
            raise _too_many(self.source, mark, "as written")
        try:
            return self.inner(parent, index)
        finally:
            self.depth -= 1


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _refuse_key(key: yaml.Node, source: str) -> None:
    if not isinstance(key, yaml.ScalarNode):
        kind = "a list" if isinstance(key, yaml.SequenceNode) else "a mapping"
        raise ConfigError(f"{_where(source, key.start_mark)}: a mapping key is {kind}; keys must be plain strings")


def _refuse_non_finite(node: yaml.ScalarNode, source: str) -> None:
    spelled = node.value.lower().replace("_", "")
    if ":" in spelled:  # YAML 1.1 sexagesimal (1:30.5): finite by construction
        return
    try:
        finite = spelled not in {".inf", "+.inf", "-.inf", ".nan"} and math.isfinite(float(spelled))
    except ValueError:
        return  # not a number after all: the constructor says so
    if not finite:
        raise ConfigError(f"{_where(source, node.start_mark)}: {node.value} is not a finite number")


def _refuse_long_int(node: yaml.ScalarNode, source: str) -> None:
    if sum(c.isalnum() for c in node.value) > MAX_DIGITS:
        raise ConfigError(f"{_where(source, node.start_mark)}: a number of more than {MAX_DIGITS} digits")


def _check_graph(root: yaml.Node, source: str, *, finite: bool) -> None:
    """Cycles, expanded size, text and depth, complex keys and non-finite floats, without recursion."""
    size: dict[int, int] = {}
    chars: dict[int, int] = {}
    depth: dict[int, int] = {}
    open_path: set[int] = set()  # the nodes from the root to the one in hand (DFS, LIFO)
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            children = _children(node)
            size[key] = 1 + sum(size[id(c)] for c in children)
            own = len(node.value) if isinstance(node, yaml.ScalarNode) else 0
            chars[key] = own + sum(chars[id(c)] for c in children)
            depth[key] = 1 + max((depth[id(c)] for c in children), default=0)
            open_path.discard(key)
            if size[key] > MAX_NODES:
                raise _too_many(source, node.start_mark, "once its aliases are expanded (a 'billion laughs'?)")
            if chars[key] > MAX_EXPANDED_CHARS:
                raise ConfigError(
                    f"{_where(source, node.start_mark)}: more than {MAX_EXPANDED_CHARS} characters of text once "
                    "its aliases are expanded (one long value aliased many times?); the harness refuses it"
                )
            if depth[key] > MAX_DEPTH:
                raise _too_deep(source, node.start_mark)
            continue
        if key in size:
            continue
        if key in open_path:
            raise ConfigError(
                f"{_where(source, node.start_mark)}: an alias or merge key (<<) refers to a node that contains "
                "it: the document would be infinite"
            )
        if isinstance(node, yaml.MappingNode):
            for key_node, _ in node.value:
                _refuse_key(key_node, source)
        elif isinstance(node, yaml.ScalarNode) and node.tag == _INT_TAG:
            _refuse_long_int(node, source)
        elif finite and isinstance(node, yaml.ScalarNode) and node.tag == _FLOAT_TAG:
            _refuse_non_finite(node, source)
        open_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(_children(node)))


def compose_guarded(
    loader: type[yaml.SafeLoader], text: str, source: str, *, finite: bool
) -> tuple[yaml.SafeLoader, yaml.Node | None]:
    """A ``loader`` on ``text`` and the single document it composes within the bounds above
    (None if the document is empty); the loader then constructs it with its own constructors.
    PyYAML's errors become ConfigErrors naming ``source``, line and column."""
    try:
        _prescan(text, source)
        instance = loader(text)  # PyYAML refuses control characters here already
        instance.name = source
        bounded = _Bounded(instance, source)
        instance.compose_node = bounded.compose_node  # type: ignore[method-assign]
        root: yaml.Node | None = instance.get_single_node()
    except yaml.YAMLError as exc:
        raise yaml_error(exc, source, text) from None
    if root is not None:
        _check_graph(root, source, finite=finite)
    return instance, root
