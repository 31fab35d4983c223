"""iperf3 output → path rate (recorded iperf3 3.12 JSON, tests/data/iperf3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.errors import InfraError
from harness.probes.pathrate import parse_iperf3_bits

DATA = Path(__file__).resolve().parents[1] / "data" / "iperf3"


def test_the_receivers_rate_is_read() -> None:
    text = (DATA / "loopback-1s.json").read_text()
    expected = json.loads(text)["end"]["sum_received"]["bits_per_second"]
    assert parse_iperf3_bits(text) == expected > 1e6


@pytest.mark.parametrize("text", [(DATA / "refused.json").read_text(), "", "{}", "[1]", '{"end": {}}'])
def test_an_error_or_anything_else_is_an_infra_error(text: str) -> None:
    with pytest.raises(InfraError, match="iperf3"):
        parse_iperf3_bits(text)
