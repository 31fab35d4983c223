"""The tc read-back across iproute2 5.10 (Debian 11), 6.1 (Debian 12) and 6.15 (Debian 13), on
outputs recorded in the lab (tests/data/tc/versions/README.md): u32 printed as text inside the
JSON before 5.18, tbf's peakrate missing from the JSON since 5.11, and a tc without
/proc/net/psched printing kernel ticks as microseconds."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.impair.filters import U32Key, parse_filters
from harness.impair.profile import NetemProfile
from harness.impair.qdiscs import parse_qdiscs
from harness.impair.readback import RootClass, classify_root, verify_applied, verify_cleared

DATA = Path(__file__).resolve().parents[1] / "data" / "tc" / "versions"
VERSIONS = ["5.10", "6.1", "6.15"]
PEER = "10.213.1.12"
# what the recording applied (harness apply_commands, the default link rate and MTU)
APPLIED = NetemProfile("rec", delay_s=0.005, jitter_s=0.001, loss_pct=1.0, rate_bits=100e6)


def _text(name: str) -> str:
    return (DATA / name).read_text()


@pytest.mark.parametrize("version", VERSIONS)
def test_the_harness_impairment_reads_back_clean(version: str) -> None:
    qdiscs = parse_qdiscs(_text(f"iproute2-{version}-qdisc-harness-delay5ms-jitter1ms-loss1-rate100mbit.json"))
    filters = parse_filters(_text(f"iproute2-{version}-filter-harness-u32-peer.json"))
    assert verify_applied(APPLIED, qdiscs, filters, PEER) == []


def test_u32_text_inside_json_reads_as_the_json_form() -> None:
    text = _text("iproute2-5.10-filter-harness-u32-peer.json")
    assert '"options":{fh 800::800' in text  # what made 5.10's read-back fail: "did not print JSON"
    assert parse_filters(text) == parse_filters(_text("iproute2-6.1-filter-harness-u32-peer.json"))
    rule = [f for f in parse_filters(text) if f.is_rule]
    assert [(r.handle, r.keys) for r in rule] == [("800::800", (U32Key(0x0AD5010C, 0xFFFFFFFF, 16),))]


@pytest.mark.parametrize("version", VERSIONS)
def test_a_peakrate_is_seen_whether_or_not_the_json_names_it(version: str) -> None:
    text = _text(f"iproute2-{version}-qdisc-harness-tbf-peakrate.json")
    assert ('"peakrate"' in text) == (version == "5.10")
    assert "peakrate 200Mbit" in _text(f"iproute2-{version}-qdisc-harness-tbf-peakrate.txt")
    problems = verify_applied(
        APPLIED, parse_qdiscs(text), parse_filters(_text(f"iproute2-{version}-filter-harness-u32-peer.json")), PEER
    )
    assert problems == ["tbf has a peakrate the harness never sets"]


@pytest.mark.parametrize("version", VERSIONS)
def test_netem_times_are_seconds_in_every_version(version: str) -> None:
    netem = next(
        q for q in parse_qdiscs(_text(f"iproute2-{version}-qdisc-harness-delay100ms.json")) if q.kind == "netem"
    )
    assert netem.netem().delay_s == 0.1


@pytest.mark.parametrize("version", ["5.10", "6.1"])
def test_ticks_printed_as_microseconds_are_diagnosed(version: str) -> None:
    # 5 ms set with a working tc, read back by a tc that could not open /proc/net/psched
    qdiscs = parse_qdiscs(_text(f"iproute2-{version}-qdisc-delay5ms-rate100mbit-no-psched.json"))
    assert next(q for q in qdiscs if q.kind == "netem").netem().delay_s == 0.078125
    profile = NetemProfile("p", delay_s=0.005, rate_bits=100e6)
    problems = verify_applied(profile, qdiscs, parse_filters(_text("iproute2-6.1-filter-harness-u32-peer.json")), PEER)
    delay = next(p for p in problems if p.startswith("netem delay"))
    burst = next(p for p in problems if p.startswith("tbf burst"))
    for line in (delay, burst):
        assert "15.625 times the value set" in line and "/proc/net/psched" in line
    # the same qdiscs read by a tc that could: no such hint anywhere
    good = verify_applied(
        profile,
        parse_qdiscs(_text("iproute2-6.1-qdisc-delay5ms-rate100mbit.json")),
        parse_filters(_text("iproute2-6.1-filter-harness-u32-peer.json")),
        PEER,
    )
    assert not any("psched" in p for p in good)


@pytest.mark.parametrize("version", VERSIONS)
def test_default_root_and_empty_filter_list(version: str) -> None:
    assert classify_root(parse_qdiscs(_text(f"iproute2-{version}-qdisc-default.json"))) is RootClass.DEFAULT
    assert parse_filters(_text(f"iproute2-{version}-filter-none.json")) == []


_hex32 = st.integers(0, 0xFFFFFFFF)


@given(
    keys=st.lists(st.tuples(_hex32, _hex32, st.integers(-64, 64).map(lambda o: o * 4), st.booleans()), max_size=4),
    flowid=st.tuples(st.integers(1, 0xFFFF), st.integers(1, 0xFFFF)),
    terminal=st.booleans(),
)
def test_text_u32_keys_round_trip(
    keys: list[tuple[int, int, int, bool]], flowid: tuple[int, int], terminal: bool
) -> None:
    # the text u32_print_opt writes before 5.18: "fh %s ", "order %d ", "key ht %x bkt %x ",
    # "%sflowid %s " ("*" unless terminal), then "\n  match %08x/%08x at %s%d" per key
    star = "" if terminal else "*"
    body = f"fh 800::800 order 2048 key ht 800 bkt 0 {star}flowid {flowid[0]:x}:{flowid[1]:x} not_in_hw "
    body += "".join(f"\n  match {v:08x}/{m:08x} at {'nexthdr+' if n else ''}{o}" for v, m, o, n in keys)
    text = '[{"protocol":"ip","pref":1,"kind":"u32","chain":0,"options":{' + body + "}}]"
    (rule,) = parse_filters(text)
    assert rule.keys == tuple(U32Key(v, m, o, nexthdr=n) for v, m, o, n in keys)
    assert rule.flowid == flowid[0] << 16 | flowid[1]
    assert rule.is_rule and rule.extras == ()


def test_public_debian_10_u32_with_an_action_is_read_and_flagged() -> None:
    # iproute2 4.20 (ss190107), pasted in iproute2/iproute2#31 (tests/data/tc/public/SOURCES.md)
    text = (DATA.parent / "public" / "iproute2-ss190107-debian10-u32-mirred-pretty.json").read_text()
    rules = [f for f in parse_filters(text) if f.is_rule]
    assert [(r.handle, r.flowid, r.keys, r.extras) for r in rules] == [
        ("800::800", None, (U32Key(0, 0, 0),), ("actions",))
    ]
    problems = verify_applied(
        APPLIED,
        parse_qdiscs(_text("iproute2-6.1-qdisc-harness-delay5ms-jitter1ms-loss1-rate100mbit.json")),
        parse_filters(text),
        PEER,
    )
    assert problems and "with actions" in problems[0]


@pytest.mark.parametrize("version", ["5.10", "6.15"])
def test_the_harness_commands_applied_and_removed_by_each_version(version: str) -> None:
    qdiscs = parse_qdiscs(_text(f"iproute2-{version}-applied-by-{version}-qdisc.json"))
    filters = parse_filters(_text(f"iproute2-{version}-applied-by-{version}-filter.json"))
    assert verify_applied(APPLIED, qdiscs, filters, PEER) == []
    after = parse_qdiscs(_text(f"iproute2-{version}-after-teardown.json"))
    assert verify_cleared(after) == [] and classify_root(after) is RootClass.DEFAULT
