"""JSON in and out, always valid JSON: no ``NaN`` or ``Infinity``.

Python's ``json`` writes ``NaN``/``Infinity`` by default, which no other JSON reader accepts
(``jq``, a browser, a CI dashboard), and reads them back without a word.  Every JSON the
harness writes goes through :func:`dumps`, which turns a non-finite number into ``null``
deliberately — in the harness's files and outputs ``null`` means "no number": a latency fio did
not report, a limit that does not bind, a figure too large for a float — and then refuses
anything non-finite that is left (``allow_nan=False``).  :func:`loads` is the reading side for
the harness's records (samples, series, run.json, baseline metadata, the results database): a
``NaN``/``Infinity`` token, a number that overflows a float, an integer of more than
:data:`~harness.limits.MAX_DIGITS` digits or a string holding half a surrogate pair
(``"\ud800"``, which no UTF-8 file can hold: writing it back would fail) is an error.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from harness.limits import MAX_DIGITS

__all__ = ["dumps", "finite", "loads"]


def finite(value: Any) -> Any:
    """``value`` as plain JSON data: non-finite floats become ``None``, mappings get string
    keys, tuples become lists, anything else that JSON has no type for becomes its ``str``."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def dumps(value: Any, **options: Any) -> str:
    """``json.dumps`` of :func:`finite` ``(value)``, never writing ``NaN`` or ``Infinity``."""
    return json.dumps(finite(value), allow_nan=False, **options)


def _refuse_constant(token: str) -> float:
    raise ValueError(f"{token} is not a finite number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is not a finite number")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"a number of more than {MAX_DIGITS} digits")
    return int(text)


def _refuse_surrogates(value: Any) -> None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii():
                item.encode("utf-8")  # UnicodeEncodeError (a ValueError) on a lone surrogate
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def loads(text: str) -> Any:
    """``json.loads`` that refuses ``NaN``, ``Infinity``, numbers that overflow a float or have
    more than MAX_DIGITS digits, and unpaired surrogates (ValueError)."""
    value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float, parse_int=_bounded_int)
    try:
        _refuse_surrogates(value)
    except UnicodeEncodeError:
        raise ValueError("a string holds an unpaired surrogate (\\ud800...): not text a file can hold") from None
    return value
