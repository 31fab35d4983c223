"""Hostile JSON records for the targets that read a run's or a baseline's files: a field of a
record set to any JSON text as written (non-finite numbers, 400 digits, lone surrogates, deep
nesting, a password in its secret forms), one line of an NDJSON file broken at a time."""

from __future__ import annotations

import json

from hypothesis import strategies as st

from tests.unit.hostile_inputs import secret_forms

__all__ = ["JSON_VALUES", "RAW_JSON", "SAMPLE_FIELDS", "broken_record", "with_raw"]

#: Any JSON value, small.
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
#: JSON text no writer of the harness makes, and a password where text goes.
RAW_JSON = st.sampled_from(["NaN", "Infinity", "1e400", "1" + "0" * 400, '"\\ud800"', "[" * 50, "-1", '"\\u0000"']) | (
    secret_forms().map(lambda form: json.dumps({"pair": form, "verdict_reason": form}))
)
SAMPLE_FIELDS = ["metric", "value", "unit", "timestamp", "metadata"]


def with_raw(lines: list[str], number: int, field: str, raw: str) -> None:
    """Line ``number`` (modulo their count) of NDJSON ``lines`` with ``field`` set to the JSON
    text ``raw``, as written (after the line's own: JSON readers keep the last of two equal keys)."""
    at = number % len(lines)
    lines[at] = lines[at].rstrip()[:-1] + f', "{field}": {raw}}}'


@st.composite
def broken_record(draw: st.DrawFn) -> tuple[int, str, str]:
    """(line, field, raw JSON text) to put in a samples.ndjson line."""
    raw = draw(RAW_JSON) if draw(st.booleans()) else json.dumps(draw(JSON_VALUES))
    return draw(st.integers(0, 40)), draw(st.sampled_from(SAMPLE_FIELDS)), raw
