"""bonnie++'s CSV line (``-q`` prints it on stdout), normalised into :class:`BonnieResult`.

The layout is format version 2 of ``bon_csv2html(1)`` (first field ``1.97`` or ``1.98``): the
run's parameters, then for each phase its rate and %CPU, then each phase's maximum latency.
Rates of the sequential phases are KiB/s in the file and bytes/s here; seeks and the file
phases are operations per second.  bonnie++ writes ``+++++`` where a phase ended in under
half a second (too fast to time; most often the create/stat/delete phases with few files) and
leaves a field empty for a phase it did not run (``-f`` skips the per-character ones): both
come out as a rate of ``None``, told apart by :attr:`BonniePhase.too_fast`.

Every figure is a finite, non-negative decimal of at most
:data:`~harness.limits.MAX_DIGITS` digits (``inf``, ``nan``, ``-1`` or a 400-digit
rate is an error naming the field), and the output is at most
:data:`~harness.limits.MAX_BONNIE_BYTES`: what the parser accepts, the samples and
every later reader of the run accept too.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from typing import Final, Literal

from harness.errors import HarnessError
from harness.limits import MAX_BONNIE_BYTES, MAX_DIGITS
from harness.redact import redact_head

__all__ = ["PHASES", "BonnieOutputError", "BonniePhase", "BonnieResult", "parse_bonnie_csv"]

FORMAT_VERSIONS: Final = ("1.97", "1.98")
_FIELD_COUNT: Final = 50
_LATENCY_BASE: Final = 38
_TOO_FAST: Final = "+++++"
_DECIMAL: Final = rf"[0-9]{{1,{MAX_DIGITS}}}(?:\.[0-9]{{1,{MAX_DIGITS}}})?"
_NUMBER_RE: Final = re.compile(rf"\A{_DECIMAL}\Z")
_LATENCY_RE: Final = re.compile(rf"\A({_DECIMAL})(us|ms|s)\Z")
_LATENCY_UNIT: Final = {"us": 1e-6, "ms": 1e-3, "s": 1.0}

PhaseKind = Literal["throughput", "ops"]

#: Every phase bonnie++ reports, in the CSV's order: (name, kind, field of its rate).  The
#: latency of the i-th phase is field 38 + i.
PHASES: Final[tuple[tuple[str, PhaseKind, int], ...]] = (
    ("seq-output-char", "throughput", 9),
    ("seq-output-block", "throughput", 11),
    ("seq-rewrite", "throughput", 13),
    ("seq-input-char", "throughput", 15),
    ("seq-input-block", "throughput", 17),
    ("random-seeks", "ops", 19),
    ("seq-create", "ops", 26),
    ("seq-stat", "ops", 28),
    ("seq-delete", "ops", 30),
    ("random-create", "ops", 32),
    ("random-stat", "ops", 34),
    ("random-delete", "ops", 36),
)


class BonnieOutputError(HarnessError):
    """bonnie++'s output could not be read: no CSV line, a format this parser does not know,
    or a field that is not what the format says."""


@dataclass(frozen=True)
class BonniePhase:
    """One phase: its rate (bytes/s for ``throughput``, operations/s for ``ops``), %CPU and
    the longest single operation, in seconds.  ``rate`` is ``None`` when not measured."""

    name: str
    kind: PhaseKind
    rate: float | None
    cpu_pct: float | None
    latency_s: float | None
    too_fast: bool = False


@dataclass(frozen=True)
class BonnieResult:
    """One bonnie++ run (one CSV line)."""

    format_version: str
    version: str
    name: str
    concurrency: int
    #: the I/O tests' file size as bonnie++ wrote it (``512M``, ``4G``); empty when skipped
    file_size: str
    #: number of files of the create/stat/delete tests, in units of 1024; ``None`` when skipped
    num_files_k: int | None
    phases: tuple[BonniePhase, ...]

    def phase(self, name: str) -> BonniePhase:
        for p in self.phases:
            if p.name == name:
                return p
        raise KeyError(name)


def _number(text: str, what: str) -> float | None:
    if text == "" or set(text) == {"+"}:  # "+++++" rate, "+++" %CPU: too fast to time
        return None
    if not _NUMBER_RE.match(text):  # no sign, no exponent, no inf or nan: bonnie++ writes none of them
        raise BonnieOutputError(f"bonnie++ CSV: {what} is {redact_head(text, 40)!r}, not a non-negative number")
    return float(text)


def _latency(text: str, what: str) -> float | None:
    if text == "":
        return None
    match = _LATENCY_RE.match(text)
    if not match:
        raise BonnieOutputError(f"bonnie++ CSV: {what} latency {redact_head(text, 40)!r} is not <number>us|ms|s")
    return float(match[1]) * _LATENCY_UNIT[match[2]]


def _int_or_none(text: str, what: str) -> int | None:
    value = _number(text, what)
    return None if value is None else int(value)


def _parse_row(row: list[str]) -> BonnieResult:
    if row[0] not in FORMAT_VERSIONS:
        raise BonnieOutputError(
            f"bonnie++ CSV format {row[0]!r} is not supported (expected {' or '.join(FORMAT_VERSIONS)}: bonnie++ 1.97+)"
        )
    if len(row) != _FIELD_COUNT:
        raise BonnieOutputError(f"bonnie++ CSV line has {len(row)} fields, format {row[0]} has {_FIELD_COUNT}")
    phases = []
    for i, (name, kind, at) in enumerate(PHASES):
        rate = _number(row[at], name)
        phases.append(
            BonniePhase(
                name,
                kind,
                None if rate is None else rate * 1024.0 if kind == "throughput" else rate,
                _number(row[at + 1], f"{name} %CPU"),
                _latency(row[_LATENCY_BASE + i], name),
                too_fast=row[at] == _TOO_FAST,
            )
        )
    concurrency = _int_or_none(row[3], "concurrency")
    return BonnieResult(
        format_version=row[0],
        version=row[1],
        name=row[2],
        concurrency=1 if concurrency is None else concurrency,
        file_size=row[5],
        num_files_k=_int_or_none(row[21], "number of files"),
        phases=tuple(phases),
    )


def parse_bonnie_csv(text: str) -> list[BonnieResult]:
    """Every result line of bonnie++'s CSV output (one per ``-x`` repetition).

    Comment lines (``#``), blank lines and ``bon_csv2html`` heading lines are skipped; no
    result line at all is an error, since a bonnie++ that ran must have printed one.
    """
    if len(text) > MAX_BONNIE_BYTES:
        raise BonnieOutputError(f"bonnie++ printed more than {MAX_BONNIE_BYTES} bytes; not its CSV output")
    results = []
    try:
        for row in csv.reader(io.StringIO(text)):
            if not row or not row[0].strip() or row[0].lstrip().startswith("#") or row[0] == "format_version":
                continue
            results.append(_parse_row([field.strip() for field in row]))
    except csv.Error as exc:  # a field past csv's size limit, a stray quote at the end
        raise BonnieOutputError(f"bonnie++ CSV is not CSV: {exc}") from None
    if not results:
        raise BonnieOutputError("bonnie++ printed no CSV result line (was it run with -q, and did it finish?)")
    return results
