"""NetemProfile: validation, delay/RTT semantics, derived queue sizes and the DRBD lint."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.impair.lint import LintFinding, lint_profile
from harness.impair.profile import (
    BDP_HEADROOM,
    DEFAULT_LINK_RATE_BITS,
    MIN_LOSS_PCT,
    NETEM_DEFAULT_LIMIT,
    Direction,
    NetemProfile,
)

DIRECTIONS: tuple[Direction, ...] = ("both", "primary", "secondary")


def test_fields_are_normalised_and_frozen() -> None:
    profile = NetemProfile("wan", delay_s=1, loss_pct=0, rate_bits=128_000_000)
    assert profile == NetemProfile("wan", delay_s=1.0, loss_pct=0.0, rate_bits=128e6)
    assert isinstance(profile.delay_s, float)
    assert isinstance(profile.rate_bits, float)
    with pytest.raises(AttributeError):
        profile.delay_s = 2.0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("direction", "rtt"),
    [("both", 0.004), ("primary", 0.002), ("secondary", 0.002)],
)
def test_delay_is_one_way_per_impaired_egress(direction: Direction, rtt: float) -> None:
    profile = NetemProfile("wan", delay_s=0.002, direction=direction)
    assert profile.added_rtt_s == pytest.approx(rtt)


def test_applies_to_follows_direction() -> None:
    both = NetemProfile("a", delay_s=0.001)
    primary = NetemProfile("b", delay_s=0.001, direction="primary")
    secondary = NetemProfile("c", delay_s=0.001, direction="secondary")
    assert both.applies_to("primary") and both.applies_to("secondary")
    assert primary.applies_to("primary") and not primary.applies_to("secondary")
    assert secondary.applies_to("secondary") and not secondary.applies_to("primary")


@given(
    rtt_us=st.integers(min_value=0, max_value=4_000_000),
    direction=st.sampled_from(DIRECTIONS),
)
def test_from_rtt_adds_exactly_that_rtt(rtt_us: int, direction: Direction) -> None:
    rtt = rtt_us / 1e6
    if direction == "both" and 0 < rtt / 2 < 1e-6:
        with pytest.raises(ConfigError, match=r"impairment 'x': delay \S+s is below tc's resolution of 1us"):
            NetemProfile.from_rtt("x", rtt, direction=direction)
        return
    profile = NetemProfile.from_rtt("x", rtt, direction=direction)
    assert profile.added_rtt_s == pytest.approx(rtt)
    assert profile.delay_s == pytest.approx(rtt / 2 if direction == "both" else rtt)


def test_from_text_uses_the_shared_units() -> None:
    profile = NetemProfile.from_text("wan", delay="20ms", jitter="2ms", loss="0.1%", rate="128mbit")
    assert profile.delay_s == pytest.approx(0.02)
    assert profile.jitter_s == pytest.approx(0.002)
    assert profile.loss_pct == pytest.approx(0.1)
    assert profile.rate_bits == pytest.approx(128e6)
    assert NetemProfile.from_text("x", loss=0.5).loss_pct == 0.5


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"delay": "20 parsecs"}, "unknown duration unit 'parsecs' in '20 parsecs'"),
        ({"rate": "fast"}, "not a rate: 'fast'"),
        ({"loss": "lots"}, "not a loss percentage: 'lots'"),
        ({"delay": "-5ms"}, "not a duration: '-5ms'"),
    ],
)
def test_from_text_rejects_bad_units_as_config_errors(kwargs: dict[str, str], message: str) -> None:
    # the impairment is named first, then what was wrong with which text
    with pytest.raises(ConfigError, match="^impairment 'wan': " + re.escape(message)):
        NetemProfile.from_text("wan", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"delay_s": -0.001}, "negative"),
        ({"delay_s": 0.001, "jitter_s": -0.001}, "negative"),
        ({"delay_s": 0.001, "jitter_s": 0.002}, "must not exceed"),
        ({"loss_pct": 101}, "between 0 and 100"),
        ({"loss_pct": -1}, "between 0 and 100"),
        ({"loss_pct": 1e-9}, "resolution"),
        ({"delay_s": math.nan}, "finite"),
        ({"delay_s": math.inf}, "finite"),
        ({"delay_s": True}, "number"),
        ({"delay_s": "1ms"}, "number"),
        ({"delay_s": 5e-7}, "resolution"),
        ({"delay_s": 0.01, "distribution": "normal"}, "jitter"),
        ({"delay_s": 0.01, "jitter_s": 0.001, "distribution": "gaussian"}, "distribution"),
        ({"direction": "up"}, "direction"),
        ({"rate_bits": 0}, "rate"),
        ({"rate_bits": 1e12}, "rate"),
        ({"delay_s": 61}, "beyond"),
        ({"rate_bits": 100e9, "delay_s": 30}, "32-bit"),
    ],
)
def test_invalid_profiles_raise_config_error(kwargs: dict[str, object], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        NetemProfile("wan", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["", "-x", "has space", "a/b", "x" * 65, "semi;colon"])
def test_invalid_names_are_rejected(name: str) -> None:
    with pytest.raises(ConfigError, match="name"):
        NetemProfile(name)


@st.composite
def delays(draw: st.DrawFn) -> tuple[float, float]:
    delay_us = draw(st.integers(min_value=0, max_value=2_000_000))
    jitter_us = draw(st.integers(min_value=0, max_value=delay_us))
    return delay_us / 1e6, jitter_us / 1e6


@given(
    times=delays(),
    rate=st.one_of(st.none(), st.floats(min_value=8e3, max_value=10e9)),
    link=st.floats(min_value=1e6, max_value=400e9),
    mtu=st.integers(min_value=68, max_value=65535),
)
def test_limit_covers_the_bandwidth_delay_product(
    times: tuple[float, float], rate: float | None, link: float, mtu: int
) -> None:
    delay, jitter = times
    profile = NetemProfile("p", delay_s=delay, jitter_s=jitter)
    bdp_packets = link * (delay + jitter) / (8 * mtu)
    if math.ceil(BDP_HEADROOM * bdp_packets) > 2**32 - 1:
        # tc's limit is a u32: a queue that long is refused, never wrapped
        with pytest.raises(ConfigError, match="does not fit in 32 bits"):
            profile.limit_packets(link, mtu)
        return
    limit = profile.limit_packets(link, mtu)
    assert limit >= NETEM_DEFAULT_LIMIT
    assert limit >= BDP_HEADROOM * bdp_packets
    # ...and not absurdly more than asked for: the floor or the rounded-up headroom.
    assert limit <= max(NETEM_DEFAULT_LIMIT, math.ceil(BDP_HEADROOM * bdp_packets) + 1)
    if rate is not None and delay < 0.5:
        with_rate = NetemProfile("p", delay_s=delay, jitter_s=jitter, rate_bits=rate)
        capped = with_rate.limit_packets(link, mtu)
        assert capped >= BDP_HEADROOM * max(rate, link) * (delay + jitter) / (8 * mtu)


def test_limit_examples() -> None:
    # 1 ms at the assumed 10 Gbit/s: 1.5 * 1.25e9 B/s * 1e-3 s / 1500 B = 1250 packets.
    assert NetemProfile("a", delay_s=0.001).limit_packets() == 1250
    assert NetemProfile("a", delay_s=0.0001).limit_packets() == NETEM_DEFAULT_LIMIT
    # 20 ms at 1 Gbit/s: a BDP of 1.25e8 B/s * 0.02 s / 1500 B, about 1667 packets -> 2500 with headroom.
    assert NetemProfile("a", delay_s=0.02).limit_packets(1e9) == 2500
    assert DEFAULT_LINK_RATE_BITS == 10e9


@pytest.mark.parametrize("bad", [0, -1, math.nan])
def test_limit_rejects_bad_link_rate(bad: float) -> None:
    with pytest.raises(ConfigError, match=r"^link_rate_bits must be (positive|finite), got "):
        NetemProfile("a", delay_s=0.001).limit_packets(bad)


@pytest.mark.parametrize("mtu", [0, 67, 65536, 1500.0, True])
def test_limit_rejects_bad_mtu(mtu: object) -> None:
    with pytest.raises(ConfigError, match="mtu"):
        NetemProfile("a", delay_s=0.001).limit_packets(DEFAULT_LINK_RATE_BITS, mtu)  # type: ignore[arg-type]


@given(
    rate=st.floats(min_value=8e3, max_value=100e9),
    hz=st.sampled_from([100, 250, 300, 1000]),
    mtu=st.integers(min_value=68, max_value=9000),
)
def test_tbf_burst_is_at_least_one_tick_and_two_packets(rate: float, hz: int, mtu: int) -> None:
    profile = NetemProfile("p", rate_bits=rate)
    burst = profile.tbf_burst_bytes(hz, mtu)
    assert burst is not None
    assert burst >= rate / 8 / hz
    assert burst >= 2 * mtu


def test_tbf_sizes_without_rate_are_none() -> None:
    profile = NetemProfile("p", delay_s=0.01)
    assert profile.tbf_burst_bytes() is None
    assert profile.tbf_latency_s is None
    assert profile.tbf_limit_bytes() is None


def test_tbf_queue_is_one_rtt_with_a_floor() -> None:
    assert NetemProfile("p", delay_s=0.001, rate_bits=128e6).tbf_latency_s == pytest.approx(0.02)
    wan = NetemProfile("p", delay_s=0.05, jitter_s=0.01, rate_bits=128e6)
    assert wan.tbf_latency_s == pytest.approx(0.12)
    # t2.small example: 128 Mbit/s, one tick at HZ=100 is 160000 bytes.
    assert NetemProfile("p", rate_bits=128e6).tbf_burst_bytes() == 160_000


def _codes(findings: list[LintFinding]) -> dict[str, str]:
    return {f.code: f.level for f in findings}


@pytest.mark.parametrize(
    ("kwargs", "lint_kwargs", "expected"),
    [
        ({"delay_s": 0.001}, {}, {}),
        # 2 x 150 ms = 300 ms >= 50 % of ping-timeout 0.5 s
        ({"delay_s": 0.15}, {}, {"drbd-ping-timeout": "warning"}),
        # 2 x 300 ms = 600 ms >= ping-timeout
        ({"delay_s": 0.3}, {}, {"drbd-ping-timeout": "error"}),
        # one direction only: 300 ms added RTT, still a warning
        ({"delay_s": 0.3, "direction": "primary"}, {}, {"drbd-ping-timeout": "warning"}),
        # a resource with ping-timeout 2 s is fine with 600 ms
        ({"delay_s": 0.3}, {"ping_timeout_s": 2.0}, {}),
        ({"delay_s": 3.0}, {}, {"drbd-ping-timeout": "error", "drbd-timeout": "error"}),
        ({"delay_s": 1.6}, {}, {"drbd-ping-timeout": "error", "drbd-timeout": "warning"}),
        # jitter counts at its maximum on both legs: 2 x (100 + 100) ms = 400 ms
        (
            {"delay_s": 0.1, "jitter_s": 0.1},
            {},
            {"drbd-ping-timeout": "warning", "netem-jitter-reorders": "warning"},
        ),
        # without a cap 2 x 100 ms is under 250 ms; a full tbf queue (one RTT) adds 200 ms
        ({"delay_s": 0.1}, {}, {}),
        ({"delay_s": 0.1, "rate_bits": 5e6}, {}, {"drbd-ping-timeout": "warning"}),
        ({"rate_bits": 128e6}, {}, {"rate-burstiness": "note"}),
        ({"rate_bits": 10e6}, {}, {}),
    ],
)
def test_lint_table(kwargs: dict[str, object], lint_kwargs: dict[str, float], expected: dict[str, str]) -> None:
    profile = NetemProfile("wan", **kwargs)  # type: ignore[arg-type]
    findings = lint_profile(profile, **lint_kwargs)  # type: ignore[arg-type]
    assert _codes(findings) == expected
    assert all(f.message.startswith("wan:") for f in findings)


@pytest.mark.parametrize(
    "lint_kwargs",
    [{"ping_timeout_s": 0}, {"timeout_s": -1}, {"margin": 0}, {"margin": 1.5}],
)
def test_lint_rejects_bad_parameters(lint_kwargs: dict[str, float]) -> None:
    message = "ping_timeout_s and timeout_s must be positive and margin within (0, 1]"
    with pytest.raises(ConfigError, match=re.escape(message)):
        lint_profile(NetemProfile("wan"), **lint_kwargs)  # type: ignore[arg-type]


def test_describe_and_metadata() -> None:
    profile = NetemProfile("t2small", delay_s=0.001, rate_bits=128e6)
    assert profile.describe() == "t2small: delay 1ms loss 0% rate 128mbit on both (added RTT 2ms)"
    jittery = NetemProfile("j", delay_s=0.01, jitter_s=0.002, distribution="pareto", direction="primary")
    assert "jitter 2ms pareto" in jittery.describe()
    meta = profile.as_metadata()
    assert meta["added_rtt_s"] == pytest.approx(0.002)
    assert meta["rate_bits"] == 128e6
    assert meta["direction"] == "both"


def test_min_loss_constant_is_accepted() -> None:
    assert NetemProfile("l", loss_pct=MIN_LOSS_PCT).loss_pct == MIN_LOSS_PCT
