"""iperf3 3.9/3.12/3.18 JSON (recorded on the lab) (tests/data/iperf3/README.md):
the receiver's rate is read, and anything but a positive measured rate is refused with a message."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import InfraError
from harness.probes.pathrate import _refused, parse_iperf3_bits
from harness.remote import CommandResult

DATA = Path(__file__).resolve().parents[1] / "data" / "iperf3"
RESULTS = sorted(p.name for p in DATA.glob("*.json") if "refused" not in p.name)


@pytest.mark.parametrize("name", RESULTS)
def test_every_recorded_result_gives_the_receivers_rate(name: str) -> None:
    text = (DATA / name).read_text()
    expected = json.loads(text)["end"]["sum_received"]["bits_per_second"]
    assert parse_iperf3_bits(text) == expected > 0


def test_3_18_refused_names_iperfs_error() -> None:
    with pytest.raises(InfraError, match=r"^iperf3 3\.18: unable to connect to server .*Connection refused$"):
        parse_iperf3_bits((DATA / "iperf3-3.18-refused.json").read_text())


def test_3_9_refused_says_there_is_no_result() -> None:
    # 3.9 leaves "error" out of its JSON: the old message was "not understood: 'sum_received'"
    with pytest.raises(InfraError, match=r"^iperf3 3\.9 printed no result \(empty 'end'"):
        parse_iperf3_bits((DATA / "iperf3-3.9-refused.json").read_text())


def test_3_9_refused_shows_iperfs_own_message_from_stderr() -> None:
    stdout = (DATA / "iperf3-3.9-refused-loopback.json").read_text()
    stderr = (DATA / "iperf3-3.9-refused-loopback.stderr").read_text()
    with pytest.raises(InfraError) as caught:
        parse_iperf3_bits(stdout, stderr)
    assert str(caught.value) == "iperf3 3.9: unable to send control message: Bad file descriptor"


def test_no_json_shows_what_iperf3_said() -> None:
    with pytest.raises(InfraError, match=r"^iperf3 printed no JSON \(.*\): unable to send control message"):
        parse_iperf3_bits("", (DATA / "iperf3-3.9-refused-loopback.stderr").read_text())


@pytest.mark.parametrize(
    ("stdout", "stderr"),
    [
        ("iperf3-3.9-refused-loopback.json", "iperf3-3.9-refused-loopback.stderr"),
        ("iperf3-3.18-refused.json", None),
    ],
)
def test_a_refused_client_is_recognised_so_it_retries(stdout: str, stderr: str | None) -> None:
    # the server starts in the background: the client retries while it is not yet listening
    out = CommandResult(
        "a1",
        "iperf3 -c",
        1,
        (DATA / stdout).read_text(),
        "" if stderr is None else (DATA / stderr).read_text(),
        0.1,
    )
    assert _refused(out)
    assert not _refused(dataclasses.replace(out, stdout=(DATA / "iperf3-3.12-a1-a2-2s.json").read_text(), stderr=""))


@pytest.mark.parametrize("name", RESULTS)
@pytest.mark.parametrize("zero", [0, 0.0, -0.0])
def test_zero_bits_per_second_is_refused_at_parse_time(name: str, zero: float) -> None:
    # The recorded result with the receiver's rate set to what iperf3 prints when nothing arrived.
    data = json.loads((DATA / name).read_text())
    data["end"]["sum_received"]["bits_per_second"] = zero
    data["end"]["sum_received"]["bytes"] = 0
    with pytest.raises(InfraError, match=r"measured 0 bit/s \(0 bytes received in .* s\): the replication path"):
        parse_iperf3_bits(json.dumps(data))


@given(st.text(max_size=200))
def test_trailing_text_after_the_json_is_ignored(tail: str) -> None:
    text = (DATA / "iperf3-3.12-a1-a2-2s.json").read_text()
    assert parse_iperf3_bits(text + "\n" + tail) == json.loads(text)["end"]["sum_received"]["bits_per_second"]
