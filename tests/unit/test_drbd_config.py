"""DRBD configuration syntax (harness.drbd.config): recorded and constructed outputs, and properties."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.drbd.config import ConfigSyntaxError, Statement, find_resources, parse_config, walk

DATA = Path(__file__).resolve().parent.parent / "data" / "drbd"


def read(name: str) -> str:
    return (DATA / name).read_text()


def test_recorded_84_show_becomes_a_tree() -> None:
    """`drbdsetup show single-az` recorded on the lab's a1 (tests/data/drbd/README.md)."""
    (resource,) = find_resources(parse_config(read("84-drbdsetup-show.txt")), "single-az")
    assert resource.block is not None
    leaves = {(path, s.words) for path, s in walk(resource.block) if s.block is None}
    assert leaves == {
        (("net",), ("ping-int", "1")),
        (("net",), ("ping-timeout", "10")),
        (("_remote_host",), ("address", "ipv4", "10.213.1.12:7789")),
        (("_this_host",), ("address", "ipv4", "10.213.1.11:7789")),
        (("_this_host", "volume"), ("device", "minor", "0")),
        (("_this_host", "volume"), ("disk", "/dev/ubda")),  # the quotes are gone
        (("_this_host", "volume"), ("meta-disk", "internal")),
    }
    # `disk {` (the per-volume options) is a block, `disk "/dev/ubda";` a statement: both kept
    volume = next(s for _, s in walk(resource.block) if s.key == "volume")
    assert volume.args == ("0",) and volume.line == 13
    assert [s.block for s in volume.block or () if s.key == "disk"] == [None, ()]


def test_show_defaults_keeps_every_value_and_drops_the_comments() -> None:
    (resource,) = find_resources(parse_config(read("84-drbdsetup-show-defaults-constructed.txt")), "single-az")
    values = {s.key: s.args for _, s in walk((resource,)) if s.block is None}
    assert values["protocol"] == ("C",) and values["ping-timeout"] == ("10",)
    assert values["cram-hmac-alg"] == ("",)  # "" is an empty value, not a missing one
    assert values["fencing"] == ("dont-care",) and values["congestion-fill"] == ("0s",)


def test_drbd9_quoted_resource_names_and_statements_at_column_one() -> None:
    parsed = parse_config(read("9-drbdsetup-show-quorum-constructed.txt"))
    (resource,) = find_resources(parsed, "r0")
    assert [s.words for _, s in walk((resource,)) if s.key in {"quorum", "_cstate", "_name"}] == [
        ("quorum", "majority"),
        ("_cstate", "Connected"),
        ("_name", "peer0"),
    ]
    assert find_resources(parsed, "r1") == []


def test_drbd_conf_spellings() -> None:
    """What drbd.conf accepts and drbdadm dump prints: a word touching a quote, bare flags,
    escapes, comments anywhere."""
    text = (
        'handlers { fence-peer"/usr/lib/drbd/crm-fence-peer.sh"; }  # trailing\n'
        'net { allow-two-primaries; shared-secret "a \\"b\\" c"; }\n'
    )
    handlers, net = parse_config(text)
    assert handlers.block == (Statement(("fence-peer", "/usr/lib/drbd/crm-fence-peer.sh"), None, 1),)
    assert net.block == (
        Statement(("allow-two-primaries",), None, 2),
        Statement(("shared-secret", 'a "b" c'), None, 2),
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("resource r0 {\n  net {\n", "line 2: block is never closed"),
        ("resource r0 {\n  protocol C\n}\n", "line 2: statement 'protocol' is missing its ';'"),
        ("}\n", "line 1: '}' closes no block"),
        ("net {\n  ;\n}\n", "line 2: ';' without a statement"),
        ("{ protocol C; }", "line 1: a block '{' without a name"),
        ('disk "/dev/ubda;\n', "line 1: a quoted string is never closed"),
        ("a { " * 40, "nested more than 32 deep"),
    ],
)
def test_syntax_errors_name_the_line(text: str, message: str) -> None:
    with pytest.raises(ConfigSyntaxError, match=message):
        parse_config(text)


# -- properties: any tree DRBD could print survives the trip through text -----------------------
_words = st.one_of(
    st.from_regex(r"\A[A-Za-z0-9_./:-]{1,12}\Z"),
    st.text(st.characters(codec="utf-8"), max_size=12),  # quoted (utf-8: no lone surrogates)
)


def _render(statements: tuple[Statement, ...], indent: int = 0) -> str:
    pad = "    " * indent
    out = []
    for s in statements:
        words = " ".join(w if w and not set(w) & set(' \t\r\n{};#"\\') else _quote(w) for w in s.words)
        if s.block is None:
            out.append(f"{pad}{words}; # comment {{ ; }}\n")
        else:
            out.append(f"{pad}{words} {{\n{_render(s.block, indent + 1)}{pad}}}\n")
    return "".join(out)


def _quote(word: str) -> str:
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _without_lines(statements: tuple[Statement, ...]) -> tuple[Statement, ...]:
    return tuple(Statement(s.words, None if s.block is None else _without_lines(s.block)) for s in statements)


_trees: st.SearchStrategy[tuple[Statement, ...]] = st.recursive(
    st.lists(st.builds(Statement, st.lists(_words, min_size=1, max_size=3).map(tuple)), max_size=3).map(tuple),
    lambda inner: st.lists(
        st.builds(Statement, st.lists(_words, min_size=1, max_size=2).map(tuple), inner), max_size=3
    ).map(tuple),
    max_leaves=12,
)


@given(_trees)
def test_rendered_trees_parse_back_to_themselves(tree: tuple[Statement, ...]) -> None:
    assert _without_lines(parse_config(_render(tree))) == tree


@given(st.text(max_size=200))
def test_any_text_is_a_tree_or_a_syntax_error(text: str) -> None:
    try:
        parse_config(text)
    except ConfigSyntaxError as exc:
        assert str(exc).startswith("line ")
