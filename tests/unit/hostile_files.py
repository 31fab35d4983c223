"""Hostile files for the loader tests: one writer per class of file that must not crash or hang it,
and hypothesis strategies that generate more of each class.

A writer puts the file at the path it is given (a regular file, or a FIFO, a directory or a
symlink to ``/dev/zero`` for the non-regular classes) and returns nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from hypothesis import strategies as st

__all__ = [
    "CATALOG_ONLY",
    "CLASSES",
    "billion_laughs",
    "hostile_yaml",
    "write_bytes",
]

Writer = Callable[[Path], None]


def write_bytes(data: bytes) -> Writer:
    def write(path: Path) -> None:
        path.write_bytes(data)

    return write


def _sparse(size: int) -> Writer:
    def write(path: Path) -> None:
        with path.open("wb") as f:  # a 60 MB file in no time: a hole, then one line
            f.truncate(size)
            f.seek(size)
            f.write(b"\nschema_version: 1\n")

    return write


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _directory(path: Path) -> None:
    path.mkdir()


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def billion_laughs(width: int, levels: int) -> str:
    """``a`` is ``width`` strings; each next anchor is ``width`` aliases of the one before."""
    lines = ["a0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    for level in range(1, levels):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def _nested(depth: int, flow: bool) -> str:
    if flow:
        return "a: " + "[" * depth + "]" * depth + "\n"
    return "".join(f"{'  ' * level}k{level}:\n" for level in range(depth)) + "  " * depth + "v: 1\n"


#: Every class of the issue, with one example each (the catalog's non-finite figure is below).
CLASSES: dict[str, Writer] = {
    "utf-16 with BOM": write_bytes("name: lab\n".encode("utf-16")),
    "utf-16 without BOM": write_bytes("name: lab\n".encode("utf-16-le")),
    "latin-1": write_bytes("name: caf\xe9\n".encode("latin-1")),
    "recursive alias": write_bytes(b"a: &a [*a]\n"),
    "recursive merge key": write_bytes(b"a: &a {<<: *a}\n"),
    "flow nesting 600 deep": write_bytes(_nested(600, flow=True).encode()),
    "block nesting 500 deep": write_bytes(_nested(500, flow=False).encode()),
    "billion laughs": write_bytes(billion_laughs(9, 10).encode()),
    "list key": write_bytes(b"? [a, b]\n: 1\n"),
    "mapping key": write_bytes(b"{a: 1}: 2\n"),
    "number too large for a float": write_bytes(b"schema_version: 1.0e+400\n"),
    "60 MB file": _sparse(60 * 1024 * 1024),
    "/dev/zero": _dev_zero,
    "FIFO": _fifo,
    "directory": _directory,
}

#: Refused by the catalog's loader only: in an inventory ``.inf`` is a string (YAML 1.2 core)
#: and its schema refuses it there.
CATALOG_ONLY: dict[str, Writer] = {
    "catalog latency .inf": write_bytes(
        b"schema_version: 1\nvolume_types:\n  v:\n    description: x\n    model: fixed\n"
        b"    network_attached: false\n    io_unit_kib: 1024\n    iops: 1000\n    mib_s: 40\n"
        b"    latency: {write_ms: .inf, read_ms: 0.2}\n    sources: ['https://example.com']\n"
        b"    as_of: 2026-11-21\n"
    ),
    "catalog placement RTT .nan": write_bytes(
        b"schema_version: 1\nplacements:\n  same-az:\n    rtt_ms: .NaN\n"
        b"    sources: ['https://example.com']\n    as_of: 2026-11-21\n"
    ),
}

_WORD = st.from_regex(r"\A[a-z][a-z0-9_]{0,6}\Z")


@st.composite
def _deep(draw: st.DrawFn) -> bytes:
    depth = draw(st.integers(65, 3000))
    flow = draw(st.booleans())
    text = _nested(depth, flow) if draw(st.booleans()) else ("a: " + "{x: " * depth + "1" + "}" * depth + "\n")
    return text.encode()


@st.composite
def _self_reference(draw: st.DrawFn) -> bytes:
    name = draw(_WORD)
    outer = draw(_WORD)
    body = draw(
        st.sampled_from(
            [f"&{name} [*{name}]", f"&{name} [x, [y, *{name}]]", f"&{name} {{<<: *{name}}}", f"&{name} {{k: *{name}}}"]
        )
    )
    return f"{outer}: {body}\n".encode()


@st.composite
def _laughs(draw: st.DrawFn) -> bytes:
    width = draw(st.integers(4, 12))
    # width ** levels > 100,000 nodes: the expansion limit
    levels = draw(st.integers(len(str(100_000 // width)) + 3, 14))
    return billion_laughs(width, levels).encode()


@st.composite
def _complex_key(draw: st.DrawFn) -> bytes:
    key = draw(st.sampled_from(["[a, b]", "{a: 1}", "[]", "{}", "[[x]]"]))
    explicit = draw(st.booleans())
    text = f"? {key}\n: v\n" if explicit else f"{key}: v\n"
    prefix = draw(st.sampled_from(["", "name: lab\n", "nodes:\n  "]))
    return (prefix + text).encode()


@st.composite
def _not_utf8(draw: st.DrawFn) -> bytes:
    text = draw(st.sampled_from(["name: lab\n", "schema_version: 1\n", "all:\n  hosts: {}\n"]))
    encoding = draw(st.sampled_from(["utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1", "cp1252"]))
    accent = draw(st.sampled_from(["é", "ü", "ß", "£"]))
    return (text + f"note: {accent}\n").encode(encoding)


def hostile_yaml() -> st.SearchStrategy[bytes]:
    """A file of one of the issue's classes that every YAML entry point must refuse in its loader."""
    return st.one_of(_deep(), _self_reference(), _laughs(), _complex_key(), _not_utf8())
