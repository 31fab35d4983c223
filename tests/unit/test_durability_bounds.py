"""The loss bound of asynchronous modes: the docstring's worked examples, zero for synchronous
modes and a surviving primary, and a bound that never shrinks as the path slows or buffers grow."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.durability.bounds import LossBound, PathFigures, ResourceConfig, loss_bound
from harness.durability.plan import FAULTS, Fault

GBIT = PathFigures(rtt_s=0.010, bandwidth_bytes_s=125_000_000, tcp_wmem_max=4 * 1024 * 1024)


def test_the_worked_examples() -> None:
    a = loss_bound(ResourceConfig("drbd", "A"), GBIT, "primary-crash", 4096)
    assert a.writes == 1330 and a.binding == "send buffer"
    assert dict(a.terms) == {"send buffer": 4_194_304, "wire": pytest.approx(1_250_000)}
    b = loss_bound(ResourceConfig("drbd", "B"), GBIT, "power-cut", 65536)
    assert (b.writes, b.binding) == (128, "peer receive buffers")
    md = loss_bound(ResourceConfig("md-nbd", "write-behind", write_behind=256), GBIT, "primary-crash", 4096)
    assert (md.writes, md.binding) == (256, "write-behind backlog")
    assert "1,330 writes, bound by the send buffer" in a.describe()


def test_a_slow_wide_path_makes_the_wire_the_binding_term() -> None:
    far = PathFigures(rtt_s=0.010, bandwidth_bytes_s=1.25e9, tcp_wmem_max=4 * 1024 * 1024)
    bound = loss_bound(ResourceConfig("drbd", "A", sndbuf_size=1024 * 1024), far, "heal-crash", 4096)
    assert bound.binding == "wire"
    assert bound.writes == -(-(1024 * 1024 + 12_500_000) // 4096)


@pytest.mark.parametrize("fault", FAULTS)
def test_synchronous_modes_and_protocol_b_on_a_single_crash_lose_nothing(fault: Fault) -> None:
    for config in (ResourceConfig("drbd", "C"), ResourceConfig("md-nbd", "sync")):
        assert loss_bound(config, GBIT, fault, 4096).writes == 0
    if fault != "power-cut":
        assert loss_bound(ResourceConfig("drbd", "B"), GBIT, fault, 4096).writes == 0


def test_a_crash_of_the_peer_loses_nothing_in_any_mode() -> None:
    for config in (ResourceConfig("drbd", "A"), ResourceConfig("md-nbd", "write-behind")):
        assert loss_bound(config, GBIT, "peer-crash", 4096) == LossBound(0, "surviving primary")


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="md-nbd has no mode 'A'"):
        loss_bound(ResourceConfig("md-nbd", "A"), GBIT, "primary-crash", 4096)
    with pytest.raises(ValueError, match="drbd has no protocol 'sync'"):
        loss_bound(ResourceConfig("drbd", "sync"), GBIT, "primary-crash", 4096)
    with pytest.raises(ValueError, match="path figures must not be negative"):
        PathFigures(rtt_s=-1, bandwidth_bytes_s=1, tcp_wmem_max=1)


sizes = st.integers(min_value=0, max_value=64 * 1024 * 1024)
rtts = st.floats(min_value=0, max_value=0.1)
rates = st.floats(min_value=0, max_value=5e9)


@settings(max_examples=200, deadline=None)
@given(
    # an explicit sndbuf-size (0 is the autotuned one, tested apart)
    st.tuples(st.integers(1, 64 << 20), sizes, st.integers(1, 8192)),
    st.tuples(rtts, rtts, rates),
    st.tuples(st.sampled_from(["A", "B"]), st.sampled_from(FAULTS), st.sampled_from([512, 4096, 65536, 1 << 20])),
)
def test_the_bound_never_shrinks_as_buffers_grow_or_the_path_lengthens(
    buffering: tuple[int, int, int], path: tuple[float, float, float], mode: tuple[str, Fault, int]
) -> None:
    (sndbuf, more, buffers), (rtt, extra, rate), (protocol, fault, bs) = buffering, path, mode
    small = loss_bound(
        ResourceConfig("drbd", protocol, sndbuf_size=sndbuf, max_buffers=buffers),
        PathFigures(rtt, rate, 4 << 20),
        fault,
        bs,
    )
    large = loss_bound(
        ResourceConfig("drbd", protocol, sndbuf_size=sndbuf + more, max_buffers=buffers + 1),
        PathFigures(rtt + extra, rate * 2, 4 << 20),
        fault,
        bs,
    )
    assert large.writes >= small.writes >= 0
    autotuned = ResourceConfig("drbd", protocol, sndbuf_size=0, max_buffers=buffers)
    explicit = ResourceConfig("drbd", protocol, sndbuf_size=sndbuf, max_buffers=buffers)
    assert loss_bound(autotuned, PathFigures(rtt, rate, sndbuf), fault, bs) == loss_bound(
        explicit, PathFigures(rtt, rate, 4 << 20), fault, bs
    )
    # a larger write fills the same bytes with fewer writes
    config = ResourceConfig("drbd", protocol, sndbuf_size=sndbuf, max_buffers=buffers)
    assert loss_bound(config, PathFigures(rtt, rate, 4 << 20), fault, bs * 2).writes <= small.writes


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 100_000), st.integers(0, 100_000))
def test_md_write_behind_bound_is_its_backlog_count(n: int, m: int) -> None:
    low = loss_bound(ResourceConfig("md-nbd", "write-behind", write_behind=n), GBIT, "new-primary-crash", 4096)
    high = loss_bound(ResourceConfig("md-nbd", "write-behind", write_behind=n + m), GBIT, "new-primary-crash", 4096)
    assert low.writes == n <= high.writes == n + m
