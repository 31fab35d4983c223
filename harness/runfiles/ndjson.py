"""Append-only NDJSON files of a run (samples, series): one JSON record per line, written by
concurrent processes on one host, read back with errors that name file and line."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from filelock import FileLock

from harness.errors import ConfigError
from harness.limits import MAX_NDJSON_BYTES
from harness.userfiles.userfile import read_config_text

__all__ = ["NdjsonFile", "read_ndjson"]

T = TypeVar("T")


class NdjsonFile:
    """Appends whole lines under a file lock, so concurrent writers never interleave."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = FileLock(str(path) + ".lock")

    def append(self, lines: Iterable[str]) -> None:
        text = "".join(line + "\n" for line in lines)
        if not text:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write(text)


def read_ndjson(path: Path, parse: Callable[[str], T], *, what: str, missing: str) -> list[T]:
    """Every record of ``path``; a missing file or a malformed line is a ConfigError."""
    if not path.exists():
        raise ConfigError(f"{path}: {missing}")
    out: list[T] = []
    # regular and UTF-8 like any file a user can point at; records of long runs add up, hence the limit
    text = read_config_text(path, f"{what} file", limit=MAX_NDJSON_BYTES)
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(parse(line))
        except (ValueError, KeyError, TypeError, ArithmeticError, RecursionError) as exc:
            raise ConfigError(f"{path}:{n}: not a {what} record: {exc}") from None
    return out
