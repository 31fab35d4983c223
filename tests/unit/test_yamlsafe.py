"""Strict YAML: duplicate keys, YAML 1.1 coercions and tags are caught with line numbers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.userfiles.yamlsafe import load_yaml_text


def test_duplicate_key_names_both_lines() -> None:
    with pytest.raises(ConfigError, match=r"inv.yaml:3: duplicate key 'device' \(first at line 2\)"):
        load_yaml_text("pair:\n  device: /dev/drbd0\n  device: /dev/vda\n", "inv.yaml")


@pytest.mark.parametrize("word", ["no", "on", "off", "yes", "y", "n"])
def test_yaml11_booleans_stay_strings(word: str) -> None:
    assert load_yaml_text(f"host: {word}\n").data == {"host": word}


def test_leading_zero_is_not_octal() -> None:
    assert load_yaml_text("port: 010\n").data == {"port": "010"}


def test_core_schema_scalars() -> None:
    data = load_yaml_text("a: true\nb: null\nc: 12\nd: 1.5\ne: '12'\nf: ~\n").data
    assert data == {"a": True, "b": None, "c": 12, "d": 1.5, "e": "12", "f": None}


def test_syntax_error_has_line_and_column() -> None:
    with pytest.raises(ConfigError, match=r"f.yaml:2:\d+: YAML syntax error"):
        load_yaml_text("a: [1, 2\nb: 3\n", "f.yaml")


def test_custom_tags_rejected() -> None:
    with pytest.raises(ConfigError, match="tag"):
        load_yaml_text("a: !!python/object:os.system echo\n")


def test_merge_keys_expand_and_explicit_wins() -> None:
    text = "base: &b {user: root, port: 22}\nnode: {<<: *b, port: 2222}\n"
    assert load_yaml_text(text).data["node"] == {"user": "root", "port": 2222}


def test_line_of_nested_path() -> None:
    loaded = load_yaml_text("nodes:\n  a1:\n    az: x\n")
    assert loaded.line_of(("nodes", "a1", "az")) == 3
    assert loaded.line_of(("nodes", "a1", "az", "deeper")) == 3


@given(st.dictionaries(st.from_regex(r"\A[a-z][a-z0-9_]{0,10}\Z"), st.integers(-(10**6), 10**6), max_size=8))
def test_round_trip_of_simple_mappings(mapping: dict[str, int]) -> None:
    text = "".join(f"{k}: {v}\n" for k, v in mapping.items())
    assert load_yaml_text(text).data == mapping
