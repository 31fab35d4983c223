"""``ping`` parsing across iputils 20210202/20221126/20240905 and BusyBox 1.30/1.37, on outputs
recorded in the lab (tests/data/ping/README.md), and the duplicate/unreachable defects."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.probes.rtt import parse_ping, ping_argv

DATA = Path(__file__).resolve().parents[1] / "data" / "ping"
VERSIONS = ["iputils-20210202", "iputils-20221126", "iputils-20240905", "busybox-1.30.1", "busybox-1.37.0"]


def _read(name: str) -> str:
    return (DATA / name).read_text()


def _times(text: str) -> list[float]:
    return [float(t) for t in re.findall(r"time=([0-9.]+) ms", text)]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_reply_is_one_sample(version: str) -> None:
    text = _read(f"{version}-reply.txt")
    stats = parse_ping(text)
    assert list(stats.samples) == _times(text)
    assert (stats.sent, stats.received, stats.duplicates) == (5, 5, 0)


@pytest.mark.parametrize("version", VERSIONS)
def test_duplicate_replies_are_not_samples(version: str) -> None:
    # Three probes to a broadcast address that two hosts answer: five reply lines, three samples.
    text = _read(f"{version}-broadcast-dup.txt")
    assert len(_times(text)) == 5
    stats = parse_ping(text)
    assert (len(stats.samples), stats.sent, stats.received, stats.duplicates) == (3, 3, 3, 2)
    # the first reply to each sequence number is the sample
    first: dict[str, float] = {}
    for line in text.splitlines():
        m = re.search(r"\b(?:icmp_)?seq=(\d+) .*time=([0-9.]+) ms", line)
        if m:
            first.setdefault(m[1], float(m[2]))
    assert list(stats.samples) == list(first.values())


@pytest.mark.parametrize("version", VERSIONS)
def test_no_replies_names_the_destination_not_the_last_line(version: str) -> None:
    text = _read(f"{version}-unreachable.txt")
    with pytest.raises(ValueError) as info:
        parse_ping(text)
    message = str(info.value)
    assert message.startswith("no replies from 10.213.1.99 (")
    assert "pipe" not in message


def test_no_replies_carries_icmp_errors() -> None:
    text = _read("iputils-20221126-unreachable.txt")
    assert text.rstrip().endswith("pipe 10")
    with pytest.raises(ValueError, match=r"10 sent, 0 replies, 10 errors: Destination Host Unreachable\)$"):
        parse_ping(text)


def test_busybox_accepts_the_harness_interval() -> None:
    for version in ("busybox-1.30.1", "busybox-1.37.0"):
        assert len(parse_ping(_read(f"{version}-interval.txt")).samples) == 3


@given(st.lists(st.tuples(st.integers(0, 50), st.floats(0.001, 999.0).map(lambda x: round(x, 3))), min_size=1))
def test_one_sample_per_sequence_number(replies: list[tuple[int, float]]) -> None:
    # lines in iputils' unicast form, a repeated sequence number marked as iputils marks it
    seen: set[int] = set()
    lines = []
    for seq, ms in replies:
        mark = " (DUP!)" if seq in seen else ""
        seen.add(seq)
        lines.append(f"64 bytes from 10.0.0.2: icmp_seq={seq} ttl=64 time={ms} ms{mark}")
    stats = parse_ping("\n".join(lines))
    firsts: dict[int, float] = {}
    for seq, ms in replies:
        firsts.setdefault(seq, ms)
    assert list(stats.samples) == list(firsts.values())
    assert stats.duplicates == len(replies) - len(firsts)


def test_busybox_runs_the_harness_argv() -> None:
    text = _read("busybox-1.30.1-harness-argv.txt")
    assert ping_argv("10.213.1.12", count=5, source="10.213.1.11")[1:] == [
        "-n", "-c", "5", "-i", "0.02", "-W", "2", "-I", "10.213.1.11", "10.213.1.12",
    ]  # fmt: skip
    stats = parse_ping(text)
    assert (len(stats.samples), stats.sent, stats.received) == (5, 5, 5)
