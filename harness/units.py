"""Parsing and formatting of the units people write in inventories and on command lines.

One place for sizes ("4k", "1M", "200GiB"), rates ("128mbit", "40MB/s") and durations
("2ms", "1.5s", "60m"), so fio, tc, the sizing model and the inventory agree on what a
suffix means.  Conventions follow the tools they feed:

* sizes: fio's convention, ``k``/``m``/``g``/``t`` are powers of 1024 (fio's default
  ``kb_base=1024``); explicit ``KiB``/``MiB`` are 1024-based and ``kB``/``MB`` with a capital
  ``B`` are 1000-based only when spelled with ``B`` *and* no ``i``.  Bare numbers are bytes.
* rates: tc's convention, ``kbit``/``mbit``/``gbit`` are 1000-based bits per second;
  ``MB/s``/``MiB/s`` are bytes per second (1000- and 1024-based respectively).
* durations: ``us``, ``ms``, ``s``, ``m``, ``h``; bare numbers are seconds.

A number of more than :data:`~harness.limits.MAX_DIGITS` digits is refused before it
is converted (``400`` nines is no size, and as a float it would be infinity).
"""

from __future__ import annotations

import math
import re
from typing import Final

from harness.limits import MAX_DIGITS

__all__ = [
    "GIB",
    "KIB",
    "MIB",
    "TIB",
    "UnitError",
    "format_bytes",
    "format_duration",
    "format_rate_bits",
    "parse_duration",
    "parse_rate_bits",
    "parse_size",
]


#: the binary multiples, fio's ``k``/``m``/``g``/``t`` and ``KiB``/``MiB``/``GiB``/``TiB``
KIB: Final = 1024
MIB: Final = 1024**2
GIB: Final = 1024**3
TIB: Final = 1024**4


class UnitError(ValueError):
    """A value could not be parsed; the message says what was expected."""


_NUMBER = r"(?P<num>\d+(?:\.\d+)?)"


def _number(match: re.Match[str], text: str) -> float:
    """The match's number, refused when it has more than MAX_DIGITS digits."""
    digits = match["num"]
    if len(digits.replace(".", "")) > MAX_DIGITS:
        shown = text if len(text) <= 2 * MAX_DIGITS else f"{text[:MAX_DIGITS]}… ({len(text)} characters)"
        raise UnitError(f"{shown!r} has more than {MAX_DIGITS} digits")
    return float(digits)


_SIZE_FACTORS: dict[str, int] = {
    "": 1,
    "b": 1,
    "k": KIB,
    "kib": KIB,
    "m": MIB,
    "mib": MIB,
    "g": GIB,
    "gib": GIB,
    "t": TIB,
    "tib": TIB,
    # Decimal spellings, as cloud vendors publish volume sizes and throughput.
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
}

_SIZE_RE = re.compile(rf"\A\s*{_NUMBER}\s*(?P<unit>[a-zA-Z]*)\s*\Z")


def parse_size(text: str | int) -> int:
    """Bytes for a size such as ``4k``, ``1M``, ``200GiB`` or ``1g``.

    Lower-case single letters follow fio (1024-based).  ``kB``/``MB``/``GB`` are decimal.

    >>> parse_size("4k"), parse_size("1M"), parse_size("2GB")
    (4096, 1048576, 2000000000)
    """
    if isinstance(text, bool):
        raise UnitError(f"size must be a number with an optional unit, got {text!r}")
    if isinstance(text, int):
        if text < 0:
            raise UnitError(f"size must not be negative, got {text}")
        if text >= 10**MAX_DIGITS:
            raise UnitError(f"size has more than {MAX_DIGITS} digits")
        return text
    match = _SIZE_RE.match(text)
    if not match:
        raise UnitError(f"not a size: {text!r} (expected e.g. 4k, 1M, 200GiB)")
    unit = match["unit"]
    key = unit.lower()
    # A capital-B decimal unit ("MB") is 1000-based; a bare letter ("M", "m") is fio's 1024.
    if key in {"kb", "mb", "gb", "tb"} and not unit.endswith("B"):
        key = key[0]
    if key not in _SIZE_FACTORS:
        raise UnitError(f"unknown size unit {unit!r} in {text!r} (use k, M, G, T, KiB, MiB, GiB, MB, GB)")
    value = _number(match, text) * _SIZE_FACTORS[key]
    if value != math.floor(value):
        raise UnitError(f"size {text!r} is not a whole number of bytes")
    return int(value)


_RATE_BIT_FACTORS: dict[str, float] = {
    "bit": 1.0,
    "bps": 8.0,  # tc: "bps" means bytes per second
    "kbit": 1e3,
    "mbit": 1e6,
    "gbit": 1e9,
    "tbit": 1e12,
    "kbps": 8e3,
    "mbps": 8e6,
    "gbps": 8e9,
    "b/s": 8.0,
    "kb/s": 8e3,
    "mb/s": 8e6,
    "gb/s": 8e9,
    "kib/s": 8 * 1024.0,
    "mib/s": 8 * 1024.0**2,
    "gib/s": 8 * 1024.0**3,
}

_RATE_RE = re.compile(rf"\A\s*{_NUMBER}\s*(?P<unit>[a-zA-Z/]+)\s*\Z")


def parse_rate_bits(text: str) -> float:
    """Bits per second for a rate such as ``128mbit``, ``1gbit``, ``40MB/s`` or ``100MiB/s``.

    ``mbit``-style units are tc's decimal bits; ``MB/s``/``MiB/s`` are bytes per second
    (``mbps`` follows tc, where it means megabytes per second).

    >>> parse_rate_bits("128mbit"), parse_rate_bits("40MB/s")
    (128000000.0, 320000000.0)
    """
    match = _RATE_RE.match(text)
    if not match:
        raise UnitError(f"not a rate: {text!r} (expected e.g. 128mbit, 1gbit, 40MB/s)")
    key = match["unit"].lower()
    if key not in _RATE_BIT_FACTORS:
        raise UnitError(f"unknown rate unit {match['unit']!r} in {text!r} (use kbit, mbit, gbit, MB/s, MiB/s)")
    return _number(match, text) * _RATE_BIT_FACTORS[key]


_DURATION_FACTORS: dict[str, float] = {
    "": 1.0,
    "us": 1e-6,
    "usec": 1e-6,
    "ms": 1e-3,
    "msec": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "m": 60.0,
    "min": 60.0,
    "h": 3600.0,
}

_DURATION_RE = re.compile(rf"\A\s*{_NUMBER}\s*(?P<unit>[a-zA-Z]*)\s*\Z")


def parse_duration(text: str | float) -> float:
    """Seconds for a duration such as ``2ms``, ``1.5s``, ``60m`` or a bare number of seconds.

    >>> parse_duration("2ms"), parse_duration("60m")
    (0.002, 3600.0)
    """
    if isinstance(text, bool):
        raise UnitError(f"duration must be a number with an optional unit, got {text!r}")
    if isinstance(text, int | float):
        if text < 0 or not math.isfinite(text):
            raise UnitError(f"duration must be a finite number >= 0, got {text}")
        return float(text)
    match = _DURATION_RE.match(text)
    if not match:
        raise UnitError(f"not a duration: {text!r} (expected e.g. 500us, 2ms, 1.5s, 60m)")
    key = match["unit"].lower()
    if key not in _DURATION_FACTORS:
        raise UnitError(f"unknown duration unit {match['unit']!r} in {text!r} (use us, ms, s, m, h)")
    return _number(match, text) * _DURATION_FACTORS[key]


def format_bytes(n: float) -> str:
    """Human-readable binary size: ``format_bytes(1536) == '1.5KiB'``."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f}{unit}" if unit == "B" else f"{n:.3g}{unit}"
        n /= 1024
    raise AssertionError("unreachable")


def format_rate_bits(bits_per_s: float) -> str:
    """tc-style rate text: ``format_rate_bits(128e6) == '128mbit'``."""
    for unit, factor in (("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3)):
        if bits_per_s >= factor:
            return f"{bits_per_s / factor:g}{unit}"
    return f"{bits_per_s:g}bit"


def format_duration(seconds: float) -> str:
    """tc-style duration text: ``format_duration(0.002) == '2ms'``."""
    if seconds >= 1:
        return f"{seconds:g}s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:g}ms"
    return f"{seconds * 1e6:g}us"
