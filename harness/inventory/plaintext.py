"""Every string of an inventory is plain text and no secret.

Inventories hold references (key paths, environment variable names), never secret values: a
pasted key, password or token is refused, naming where it is.  And text only: a NUL (a path or
command argument the kernel would cut at it) or half a UTF-16 surrogate pair (``\\ud800``: text
no file or terminal can hold), both of which a YAML escape can write, is refused too.
"""

from __future__ import annotations

from typing import Any

from harness.redact import looks_secret

__all__ = ["check_plain_text"]

Path_ = tuple[str | int, ...]


def _strings(value: Any, path: Path_) -> list[tuple[Path_, str]]:
    if isinstance(value, str):
        return [(path, value)]
    if isinstance(value, dict):
        return [item for k, v in value.items() for item in _strings(v, (*path, str(k)))]
    if isinstance(value, list):
        return [item for i, v in enumerate(value) for item in _strings(v, (*path, i))]
    return []


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_plain_text(data: Any) -> None:
    """ValueError naming the first string of ``data`` that is a secret or not plain text."""
    seen: set[str] = set()  # a value aliased many times is scanned once
    for path, text in _strings(data, ()):
        if text in seen:
            continue
        seen.add(text)
        where = ".".join(str(p) for p in path)
        if "\0" in text or (not text.isascii() and not _encodable(text)):
            raise ValueError(f"{where} holds a NUL or an unpaired surrogate (\\0, \\ud800); write plain text")
        if looks_secret(text):
            raise ValueError(
                f"{where} looks like a secret (a key, password or token); put it in a file or an "
                "environment variable and reference that instead"
            )
