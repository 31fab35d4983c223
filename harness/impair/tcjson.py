"""Reading the JSON that ``tc -j`` prints: loading it, typed access to its fields, tc ids.

The shapes follow iproute2 6.1.0 (Debian 12, the lab guests' userland); what each qdisc and
filter prints is described with its parser, :mod:`harness.impair.qdiscs` and
:mod:`harness.impair.filters`.  One oddity is handled here for both: u32 repeats the key
``"match"`` once per match key *in the same JSON object*, so keys that appear more than once
are kept as a :class:`Repeated` list (a plain ``json.loads`` would silently keep only the last
one).  Before iproute2 5.18, ``tc -j filter show`` printed u32's options as *text* inside the
JSON (``"options":{fh 800::800 order 2048 key ht 800 bkt 0 flowid 4842:2 not_in_hw
  match 0ad5010c/ffffffff at 16}}``, recorded with Debian 11's iproute2 5.10 in
tests/data/tc/versions/); :func:`load_objects` keeps such text as a string under
:data:`TEXT_OPTIONS` for the filter parser.  Nothing here runs a command.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping

from harness.errors import InfraError

__all__ = [
    "TC_H_ROOT",
    "TEXT_OPTIONS",
    "Repeated",
    "TcParseError",
    "as_float",
    "as_hex",
    "as_int",
    "as_obj",
    "as_str",
    "every",
    "format_tc_id",
    "load_objects",
    "one",
    "parse_tc_id",
]

TC_H_ROOT = 0xFFFFFFFF
#: key under which :func:`load_objects` keeps options that tc printed as text, not JSON
TEXT_OPTIONS = "_text"
# `"options":{<text>}}` where <text> does not start a JSON member: a filter's print_opt that
# still used fprintf in JSON mode.  The text ends where the filter object closes.
_TEXT_OPTIONS_RE = re.compile(r'"options":\s*\{(?!\s*["}])(.*?)\}(?=\s*\}\s*(?:,\s*\{|\]))', re.DOTALL)


class TcParseError(InfraError):
    """tc printed something that is not the JSON the harness understands."""


class Repeated(list[object]):
    """Values of a key that appeared more than once in one JSON object (u32's "match")."""


def _keep_repeats(pairs: list[tuple[str, object]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in pairs:
        if key not in out:
            out[key] = value
        elif isinstance(out[key], Repeated):
            existing = out[key]
            assert isinstance(existing, Repeated)
            existing.append(value)
        else:
            out[key] = Repeated([out[key], value])
    return out


def load_objects(text: str, what: str) -> list[Mapping[str, object]]:
    if not isinstance(text, str) or not text.strip():
        # An empty read-back is a failed read, never "nothing there": a fault silently absent must not pass.
        raise TcParseError(f"empty output from {what}")
    try:
        data = json.loads(text, object_pairs_hook=_keep_repeats)
    except json.JSONDecodeError as exc:
        quoted = _quote_text_options(text)
        try:
            data = json.loads(quoted, object_pairs_hook=_keep_repeats) if quoted != text else None
        except json.JSONDecodeError:
            data = None
        if data is None:
            raise TcParseError(f"{what} did not print JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise TcParseError(f"{what} printed JSON that is not a list of objects")
    return data


def _quote_text_options(text: str) -> str:
    """Text options (iproute2 < 5.18 u32) as ``{"_text": "..."}`` so the whole output loads."""
    return _TEXT_OPTIONS_RE.sub(lambda m: '"options":{' + json.dumps(TEXT_OPTIONS) + ":" + json.dumps(m[1]) + "}", text)


def one(obj: Mapping[str, object], key: str, what: str) -> object:
    value = obj.get(key)
    if isinstance(value, Repeated):
        raise TcParseError(f"{what}: key {key!r} appears {len(value)} times")
    return value


def every(obj: Mapping[str, object], key: str) -> list[object]:
    value = obj.get(key)
    if value is None:
        return []
    return list(value) if isinstance(value, Repeated) else [value]


def as_int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TcParseError(f"{what}: expected an integer, got {value!r}")
    return value


def as_float(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TcParseError(f"{what}: expected a number, got {value!r}")
    return float(value)


def as_str(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise TcParseError(f"{what}: expected a string, got {value!r}")
    return value


def as_obj(value: object, what: str) -> Mapping[str, object]:
    if not isinstance(value, dict):
        raise TcParseError(f"{what}: expected an object, got {value!r}")
    return value


def as_hex(value: object, what: str) -> int:
    # iproute2 6.1 prints print_hex() values as unpadded hex strings; accept ints too in
    # case a later version switches to numbers.
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = as_str(value, what).lower().removeprefix("0x")
    if not re.fullmatch(r"[0-9a-f]{1,8}", text):
        raise TcParseError(f"{what}: expected hex digits, got {value!r}")
    return int(text, 16)


_ID_RE = re.compile(r"\A([0-9a-f]{0,4}):([0-9a-f]{0,4})\Z")


def parse_tc_id(text: str) -> int:
    """A handle/class id as printed by tc (``"4842:"``, ``"4842:2"``, ``":1"``, ``"root"``,
    ``"none"``) as the kernel's 32-bit ``major << 16 | minor``."""
    if text == "root":
        return TC_H_ROOT
    if text == "none":
        return 0
    match = _ID_RE.match(text.lower()) if isinstance(text, str) else None
    if not match:
        raise TcParseError(f"not a tc handle or class id: {text!r}")
    major, minor = (int(part, 16) if part else 0 for part in match.groups())
    return major << 16 | minor


def format_tc_id(value: int) -> str:
    if value == TC_H_ROOT:
        return "root"
    major, minor = value >> 16, value & 0xFFFF
    return f"{major:x}:{minor:x}" if minor else f"{major:x}:"
