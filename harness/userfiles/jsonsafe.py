"""JSON in and out, always valid JSON: no ``NaN`` or ``Infinity``.

Python's ``json`` writes ``NaN``/``Infinity`` by default, which no other JSON reader accepts
(``jq``, a browser, a CI dashboard), and reads them back without a word.  Every JSON the
harness writes goes through :func:`dumps`, which turns a non-finite number into ``null``
deliberately — in the harness's files and outputs ``null`` means "no number": a latency fio did
not report, a limit that does not bind, a figure too large for a float — and then refuses
anything non-finite that is left (``allow_nan=False``).  :func:`loads` is the reading side for
measurements: a ``NaN``/``Infinity`` token or a number that overflows a float is an error.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

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


def loads(text: str) -> Any:
    """``json.loads`` that refuses ``NaN``, ``Infinity`` and numbers that overflow a float."""
    return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
