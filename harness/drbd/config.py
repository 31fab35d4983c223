"""DRBD's configuration syntax as a tree: ``drbdsetup show``, ``drbdadm dump`` and drbd.conf.

All three print one grammar: a statement is words ended by ``;`` or followed by
a ``{ ... }`` block of statements; ``#`` starts a comment that runs to the end of the line;
values with spaces or quotes are double-quoted with backslash escapes (drbdsetup's
``double_quote_string``, drbdadm's ``esc``).  A word may touch a quote (``fence-peer"/path";``
is valid drbd.conf), and statements may be bare flags (``allow-two-primaries;``).

Examples of what it reads (8.4 and 9)::

    resource single-az {                      resource "r0" {
        net {                                     options {
            ping-int        1; # seconds              quorum          majority;
        }                                         }
        _this_host {                              connection {
            volume 0 {                                _peer_node_id 0;
                device   minor 0;                     net { _name "peer0"; }
                disk     "/dev/ubda";             }
            }                                 }
        }
    }

This module only builds the tree; what the keys mean is :mod:`harness.drbd.audit`'s business.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from harness.drbd.errors import DrbdOutputError

__all__ = ["ConfigSyntaxError", "Statement", "find_resources", "parse_config", "walk"]

_PUNCTUATION: Final = frozenset("{};")
# DRBD's own output nests five deep at most; a cap keeps garbage input a syntax error, not a
# RecursionError.
_MAX_DEPTH: Final = 32
_WORD_END: Final = frozenset(' \t\r\n{};#"')


class ConfigSyntaxError(DrbdOutputError):
    """The text is not DRBD configuration syntax (message names the line)."""


@dataclass(frozen=True)
class Statement:
    """``words ;`` or ``words { block }``; ``line`` is where its first word stands (1-based)."""

    words: tuple[str, ...]
    block: tuple[Statement, ...] | None = None
    line: int = 0

    @property
    def key(self) -> str:
        return self.words[0]

    @property
    def args(self) -> tuple[str, ...]:
        return self.words[1:]


@dataclass(frozen=True)
class _Token:
    text: str
    line: int
    quoted: bool = False

    @property
    def punctuation(self) -> bool:
        return not self.quoted and self.text in _PUNCTUATION


def _quoted(text: str, start: int, line: int) -> tuple[str, int, int]:
    """The string opening at ``text[start] == '"'``: (value, index after it, line after it)."""
    out: list[str] = []
    opened = line
    i = start + 1
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            line += text[i + 1] == "\n"
            i += 2
            continue
        if char == '"':
            return "".join(out), i + 1, line
        out.append(char)
        line += char == "\n"
        i += 1
    raise ConfigSyntaxError(f"line {opened}: a quoted string is never closed")


def _tokens(text: str) -> Iterator[_Token]:
    i, line = 0, 1
    while i < len(text):
        char = text[i]
        if char == "\n":
            line += 1
            i += 1
        elif char in " \t\r":
            i += 1
        elif char == "#":
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
        elif char in _PUNCTUATION:
            yield _Token(char, line)
            i += 1
        elif char == '"':
            start_line = line
            value, i, line = _quoted(text, i, line)
            yield _Token(value, start_line, quoted=True)
        else:
            start = i
            while i < len(text) and text[i] not in _WORD_END:
                i += 1
            yield _Token(text[start:i], line)


def _block(tokens: Iterator[_Token], opened_at: int | None, depth: int = 0) -> tuple[Statement, ...]:
    """Statements up to the ``}`` closing a block opened on line ``opened_at`` (None: top level)."""
    if depth > _MAX_DEPTH:
        raise ConfigSyntaxError(f"line {opened_at}: blocks nested more than {_MAX_DEPTH} deep")
    statements: list[Statement] = []
    words: list[_Token] = []
    for token in tokens:
        if not token.punctuation:
            words.append(token)
            continue
        first = words[0].line if words else token.line
        if token.text == ";":
            if not words:
                raise ConfigSyntaxError(f"line {token.line}: ';' without a statement before it")
            statements.append(Statement(tuple(w.text for w in words), None, first))
        elif token.text == "{":
            if not words:
                raise ConfigSyntaxError(f"line {token.line}: a block '{{' without a name before it")
            statements.append(Statement(tuple(w.text for w in words), _block(tokens, token.line, depth + 1), first))
        else:  # "}"
            if opened_at is None:
                raise ConfigSyntaxError(f"line {token.line}: '}}' closes no block")
            if words:
                raise ConfigSyntaxError(f"line {first}: statement {words[0].text!r} is missing its ';'")
            return tuple(statements)
        words = []
    if opened_at is not None:
        raise ConfigSyntaxError(f"line {opened_at}: block is never closed (output truncated?)")
    if words:
        raise ConfigSyntaxError(f"line {words[0].line}: statement {words[0].text!r} is missing its ';'")
    return tuple(statements)


def parse_config(text: str) -> tuple[Statement, ...]:
    """The top-level statements of ``text``; :class:`ConfigSyntaxError` if it is not DRBD syntax."""
    return _block(_tokens(text), None)


def find_resources(statements: tuple[Statement, ...], name: str) -> list[Statement]:
    """Top-level ``resource NAME { ... }`` blocks of ``name`` (quoted or not: DRBD 9 quotes it)."""
    return [s for s in statements if s.block is not None and s.words == ("resource", name)]


def walk(statements: tuple[Statement, ...], path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Statement]]:
    """Every statement below ``statements``, depth first, with the keys of its enclosing blocks."""
    for statement in statements:
        yield path, statement
        if statement.block is not None:
            yield from walk(statement.block, (*path, statement.key))
