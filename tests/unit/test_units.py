"""Units: sizes follow fio (1024-based letters), rates follow tc (decimal bits)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.units import (
    UnitError,
    format_duration,
    format_rate_bits,
    parse_duration,
    parse_rate_bits,
    parse_size,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4k", 4096),
        ("1M", 1024**2),
        ("1m", 1024**2),
        ("2GiB", 2 * 1024**3),
        ("2GB", 2 * 10**9),
        ("512", 512),
        (7, 7),
    ],
)
def test_parse_size(text: str | int, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("bad", ["", "k", "4q", "-1k", "1.5", "1.1k", "4 kilo"])
def test_parse_size_rejects(bad: str) -> None:
    with pytest.raises(UnitError):
        parse_size(bad)


@pytest.mark.parametrize(
    ("text", "bits"),
    [("128mbit", 128e6), ("1gbit", 1e9), ("40MB/s", 320e6), ("100MiB/s", 100 * 8 * 1024**2), ("10kbit", 1e4)],
)
def test_parse_rate(text: str, bits: float) -> None:
    assert parse_rate_bits(text) == pytest.approx(bits)


@pytest.mark.parametrize(
    ("text", "seconds"), [("2ms", 0.002), ("1.5s", 1.5), ("60m", 3600.0), ("500us", 5e-4), ("3", 3.0)]
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@given(st.integers(min_value=1, max_value=10**6))
def test_duration_format_round_trip(micros: int) -> None:
    seconds = micros / 1e6
    assert parse_duration(format_duration(seconds)) == pytest.approx(seconds, rel=1e-6)


@given(st.integers(min_value=1, max_value=10**6))
def test_rate_format_round_trip(kbit: int) -> None:
    bits = kbit * 1000.0
    assert parse_rate_bits(format_rate_bits(bits)) == pytest.approx(bits, rel=1e-6)
