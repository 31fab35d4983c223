"""The YAML loader's bounds (harness.userfiles.yamlguard, harness.userfiles.userfile), against models of each bound."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.userfiles.userfile import read_config_text
from harness.userfiles.yamlguard import MAX_DEPTH, MAX_NODES, compose_guarded
from harness.userfiles.yamlsafe import load_yaml_text
from tests.unit.hostile_files import billion_laughs

ROOT = Path(__file__).resolve().parents[2]


def _compose(text: str, *, finite: bool = False) -> yaml.Node | None:
    return compose_guarded(yaml.SafeLoader, text, "f.yaml", finite=finite)[1]


@given(
    depth=st.integers(MAX_DEPTH - 3, MAX_DEPTH + 3) | st.integers(1, 3 * MAX_DEPTH), flow=st.sampled_from(["[]", "{}"])
)
def test_nesting_is_refused_exactly_beyond_the_depth_limit(depth: int, flow: str) -> None:
    # a level is a node: d empty-ended sequences are d deep, d mappings with a scalar inside d + 1
    text = ("[" * depth + "]" * depth) if flow == "[]" else ("{a: " * depth + "1" + "}" * depth)
    levels = depth if flow == "[]" else depth + 1
    if levels <= MAX_DEPTH:
        assert _compose(text) is not None
    else:
        with pytest.raises(ConfigError, match=rf"f\.yaml:1:\d+: nested more than {MAX_DEPTH} levels deep"):
            _compose(text)


@given(links=st.integers(MAX_DEPTH - 4, MAX_DEPTH + 2) | st.integers(1, 3 * MAX_DEPTH))
def test_depth_counts_through_aliases(links: int) -> None:
    """Each anchor holds an alias of the one before: shallow as written, deep once expanded."""
    text = "a0: &a0 [x]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, links))
    expanded = links + 2  # the root mapping, one sequence per link down to a0's, and its scalar
    if expanded <= MAX_DEPTH:
        assert _compose(text) is not None
    else:
        with pytest.raises(ConfigError, match="nested more than"):
            _compose(text)


def _laughs_size(width: int, levels: int) -> int:
    """Nodes of the billion_laughs document once every alias is expanded."""
    size, total = 1 + width, 1  # a0's sequence; the root mapping
    for level in range(levels):
        if level:
            size = 1 + width * size
        total += 1 + size  # the key and its value
    return total


@given(width=st.integers(1, 12), levels=st.integers(1, 9))
def test_alias_expansion_is_refused_exactly_beyond_the_node_limit(width: int, levels: int) -> None:
    text = billion_laughs(width, levels)
    if _laughs_size(width, levels) <= MAX_NODES:
        assert _compose(text) is not None
    else:
        with pytest.raises(ConfigError, match="once its aliases are expanded"):
            _compose(text)


def test_too_many_nodes_as_written_are_refused_before_composing() -> None:
    text = "[" + ", ".join(["1"] * MAX_NODES) + "]\n"
    with pytest.raises(ConfigError, match=f"more than {MAX_NODES} YAML nodes as written"):
        _compose(text)


@pytest.mark.parametrize(
    ("text", "kind"), [("? [a]\n: 1\n", "a list"), ("{x: {a: 1}}: 1\n", "a mapping"), ("? {}\n: 1\n", "a mapping")]
)
def test_complex_keys_are_named(text: str, kind: str) -> None:
    with pytest.raises(ConfigError, match=f"f.yaml:1:\\d+: a mapping key is {kind}; keys must be plain strings"):
        _compose(text)


@pytest.mark.parametrize("spelled", [".inf", "-.Inf", "+.INF", ".nan", ".NaN", "1.0e+400", "-1_0.0e+999"])
def test_non_finite_floats_are_refused_when_asked(spelled: str) -> None:
    text = f"figure: {spelled}\n"
    assert _compose(text, finite=False) is not None
    with pytest.raises(ConfigError, match=rf"f\.yaml:1:9: {re.escape(spelled)} is not a finite number"):
        _compose(text, finite=True)


@given(number=st.floats(allow_nan=False, allow_infinity=False))
def test_finite_floats_pass(number: float) -> None:
    node = _compose(f"figure: {number!r}\n", finite=True)
    assert isinstance(node, yaml.MappingNode)
    # passed through as written: the guard neither refuses nor rewrites a finite number
    [(key, value)] = node.value
    assert (key.value, value.value) == ("figure", repr(number))


def test_core_schema_refuses_a_float_that_overflows() -> None:
    with pytest.raises(ConfigError, match=r"inv\.yaml:2: 1e400 is not a finite number"):
        load_yaml_text("name: x\nbound: 1e400\n", "inv.yaml")


def test_legitimate_anchors_and_merges_still_load() -> None:
    text = "x-ssh: &s {user: root}\nnodes:\n  a: {<<: *s, az: x}\n  b: {<<: *s, az: y}\nlist: &l [1, 2]\nagain: *l\n"
    data = load_yaml_text(text).data
    assert data["nodes"]["b"] == {"az": "y", "user": "root"} and data["again"] == [1, 2]


@given(size=st.integers(0, 300), limit=st.integers(1, 200))
def test_the_size_limit_is_exact(tmp_path_factory: pytest.TempPathFactory, size: int, limit: int) -> None:
    path = tmp_path_factory.mktemp("size") / "f.yaml"
    path.write_bytes(b"a" * size)
    if size <= limit:
        assert read_config_text(path, limit=limit) == "a" * size
    else:
        with pytest.raises(ConfigError, match=f"larger than {limit} bytes"):
            read_config_text(path, limit=limit)


def test_yaml_is_read_only_through_the_bounded_loader() -> None:
    """No module parses YAML with PyYAML directly: yamlguard composes, yamlsafe constructs."""
    direct = re.compile(r"yaml\.(safe_load|load|full_load|unsafe_load|compose|parse|load_all|safe_load_all)\(")
    allowed = {ROOT / "harness/userfiles/yamlguard.py"}
    offenders = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted((ROOT / "harness").rglob("*.py"))
        if path not in allowed
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if direct.search(line) or ".get_single_data(" in line
    ]
    assert offenders == []
