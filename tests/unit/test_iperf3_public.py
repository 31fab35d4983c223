"""iperf3 3.7 and 3.16 ``-J`` client output from public sources (tests/data/iperf3/public/SOURCES.md):
the receiver's rate is read as from the lab's 3.9-3.18, and 3.7's errors are named without its
"error - " prefix doubling the word."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import InfraError
from harness.probes.pathrate import parse_iperf3_bits
from harness.probes.toolversions import parse_tool_version

DATA = Path(__file__).resolve().parents[1] / "data" / "iperf3" / "public"
RESULTS = {
    "iperf3-3.7-ubuntu-20.04-robotframework.json": "iperf 3.7",
    "iperf3-3.16-ubuntu-24.04-statuspage.json": "iperf 3.16",
}


@pytest.mark.parametrize(("name", "version"), sorted(RESULTS.items()))
def test_public_results_give_the_receivers_rate(name: str, version: str) -> None:
    text = (DATA / name).read_text()
    doc = json.loads(text)
    assert doc["start"]["version"] == version
    assert parse_iperf3_bits(text) == doc["end"]["sum_received"]["bits_per_second"] > 0


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_the_version_in_the_json_is_read_like_iperf3_version(name: str) -> None:
    # the same "iperf X.Y" spelling as `iperf3 --version`'s first line
    version = json.loads((DATA / name).read_text())["start"]["version"]
    found = parse_tool_version("iperf3", version + "\n")
    assert found.version is not None and found.describe() == "iperf3 " + version.removeprefix("iperf ")


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("iperf3-3.7-openwrt-refused-openwisp.json", "unable to connect to server: Connection refused"),
        ("iperf3-3.7-openwrt-auth-failed-openwisp.json", "test authorization failed"),
    ],
)
def test_3_7_errors_are_named_once(name: str, said: str) -> None:
    with pytest.raises(InfraError) as info:
        parse_iperf3_bits((DATA / name).read_text())
    assert str(info.value) == f"iperf3 3.7: {said}"


@given(st.text(min_size=1, max_size=60).filter(lambda s: not s.startswith("error - ")))
def test_an_error_is_kept_whole_apart_from_37s_prefix(said: str) -> None:
    doc = json.loads((DATA / "iperf3-3.7-openwrt-refused-openwisp.json").read_text())
    for text, shown in ((said, said), ("error - " + said, said)):
        doc["error"] = text
        with pytest.raises(InfraError) as info:
            parse_iperf3_bits(json.dumps(doc))
        assert str(info.value) == f"iperf3 3.7: {shown}"
