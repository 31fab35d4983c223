"""What the fuzz targets tried, counted per surface: inputs, and of them how many gave an internal
error, a hang, a memory blow-up, a write nobody asked for or a leaked secret.

A fuzz target's example is wrapped in :func:`surface` (below hypothesis' ``@given``); the checks
of tests/unit/hostile_inputs.py note into it what they looked for and what they found, so a kind
a target never looks for reads ``n/a`` in the table, not a reassuring 0.  Each target still
asserts 0 of every kind; the counts say how much that 0 is worth.

``HARNESS_FUZZ_TALLY=FILE`` appends one JSON line per example to FILE (every xdist worker to
the same file, one ``O_APPEND`` write each); ``python -m tests.unit.fuzz_tally FILE`` prints
the table.
"""

from __future__ import annotations

import contextvars
import functools
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, ParamSpec, TypeVar

__all__ = ["KINDS", "Example", "note", "surface", "table"]

#: What a check can find, in the table's order.
KINDS: Final = ("internal", "hang", "memory", "write", "leak")
_HEADERS: Final = ("internal errors", "hangs", "memory blow-ups", "unflagged writes", "leaks")

P = ParamSpec("P")
R = TypeVar("R")


@dataclass
class Example:
    """One input a target tried: which kinds were looked for and which were found."""

    surface: str
    checked: set[str] = field(default_factory=set)
    found: set[str] = field(default_factory=set)
    peak_mib: float = 0.0
    seconds: float = 0.0


_CURRENT: contextvars.ContextVar[Example | None] = contextvars.ContextVar("fuzz_example", default=None)


def note(checked: Iterable[str], found: Iterable[str] = (), peak_mib: float = 0.0) -> None:
    """Record into the example being tried (if any) what a check looked for and found."""
    example = _CURRENT.get()
    if example is None:
        return
    example.checked.update(checked)
    example.found.update(found)
    example.peak_mib = max(example.peak_mib, peak_mib)


def _save(example: Example) -> None:
    target = os.environ.get("HARNESS_FUZZ_TALLY")
    if not target:
        return
    record = {
        "surface": example.surface,
        "checked": sorted(example.checked),
        "found": sorted(example.found),
        "peak_mib": round(example.peak_mib, 1),
        "seconds": round(example.seconds, 3),
    }
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, (json.dumps(record) + "\n").encode())
    finally:
        os.close(fd)


def surface(name: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Count every call of the decorated example as one input tried on surface ``name``."""

    def wrap(test: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(test)
        def example(*args: P.args, **kwargs: P.kwargs) -> R:
            record = Example(name)
            token = _CURRENT.set(record)
            started = time.monotonic()
            try:
                return test(*args, **kwargs)
            finally:
                _CURRENT.reset(token)
                record.seconds = time.monotonic() - started
                _save(record)

        return example

    return wrap


def _read(line: str) -> Example:
    record = json.loads(line)
    return Example(
        record["surface"], set(record["checked"]), set(record["found"]), record["peak_mib"], record["seconds"]
    )


def table(lines: Sequence[str]) -> str:
    """The Markdown table of the JSON lines :func:`surface` saved."""
    rows: dict[str, list[Example]] = {}
    for example in (_read(line) for line in lines if line.strip()):
        rows.setdefault(example.surface, []).append(example)
    head = ["surface", "inputs tried", *_HEADERS, "slowest input (s)", "largest peak (MiB)"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, examples in sorted(rows.items()):
        cells = [name, str(len(examples))]
        for kind in KINDS:
            looked = any(kind in e.checked for e in examples)
            cells.append(str(sum(kind in e.found for e in examples)) if looked else "n/a")
        cells.append(f"{max(e.seconds for e in examples):.2f}")
        cells.append(f"{max(e.peak_mib for e in examples):.0f}")
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    print(table(Path(sys.argv[1]).read_text().splitlines()))
