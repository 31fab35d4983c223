"""TCP window, header overhead, DRBD 9 peers and protocol A's lag in the sizing model."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.fields import ReplicationProtocol
from harness.sizing.catalog.loader import load_builtin_catalog
from harness.sizing.limits.transport import SEGMENT_BYTES, protocol_a_lag, window_loop_rate, wire_factor
from harness.sizing.model.predict import predict
from harness.sizing.model.prediction import Prediction
from harness.sizing.scenario.question import Scenario, SizedNode, VolumeSpec, Workload
from harness.units import MIB

CATALOG = load_builtin_catalog()
FAST = VolumeSpec("gp3", 1000, 16000, 1000)


def run(
    rtt_s: float,
    *,
    sndbuf: float | None = None,
    peers: int = 1,
    protocol: ReplicationProtocol = "C",
    mtu: float | None = None,
    workload: Workload | None = None,
) -> Prediction:
    return predict(
        Scenario(
            primary=SizedNode("m5.8xlarge", FAST),
            workload=workload or Workload("write", MIB, iodepth=32),
            rtt_s=rtt_s,
            placement="custom",
            sndbuf_bytes=sndbuf,
            peers=peers,
            protocol=protocol,
            mtu_bytes=mtu,
        ),
        CATALOG,
    )


def test_a_4_mib_window_at_10_ms_rtt_carries_400_mib_s() -> None:
    # Linux's tcp_wmem maximum is between 64K and 4 MB depending on RAM: at 10 ms RTT one
    # connection carries 4 MiB per round trip = 400 MiB/s (tests/data/sizing/README.md cites it).
    assert CATALOG.defaults.tcp_sndbuf_bytes.value == 4 * MIB
    window = run(0.010).limit("replication.window")
    assert window.bw == 400 * MIB
    assert run(0.010).bottleneck == "replication.window"


@given(
    rtt_ms=st.floats(min_value=0.05, max_value=200),
    sndbuf_kib=st.integers(min_value=64, max_value=64 * 1024),
)
@settings(max_examples=40, deadline=None)
def test_window_is_the_bandwidth_delay_product(rtt_ms: float, sndbuf_kib: int) -> None:
    prediction = run(rtt_ms / 1000, sndbuf=sndbuf_kib * 1024.0)
    assert prediction.limit("replication.window").bw == pytest.approx(sndbuf_kib * 1024 / (rtt_ms / 1000))
    assert prediction.bw <= prediction.limit("replication.window").bw * (1 + 1e-9)


def test_header_overhead_at_mtu_1500_and_jumbo() -> None:
    assert wire_factor(CATALOG, 1500) == pytest.approx(1500 / 1448)
    assert wire_factor(CATALOG, 1500) - 1 == pytest.approx(0.0359, abs=1e-4)
    assert wire_factor(CATALOG, 9001) < wire_factor(CATALOG, 1500)
    flow_1500 = run(0.0005, mtu=1500).limit("replication.flow").bw
    flow_9001 = run(0.0005, mtu=9001).limit("replication.flow").bw
    assert flow_9001 / flow_1500 == pytest.approx(wire_factor(CATALOG, 1500) / wire_factor(CATALOG, 9001), rel=1e-5)
    with pytest.raises(ConfigError, match="MTU"):
        wire_factor(CATALOG, 40)


@given(peers=st.integers(min_value=1, max_value=8))
@settings(max_examples=8, deadline=None)
def test_primary_egress_carries_every_write_once_per_peer(peers: int) -> None:
    one = run(0.0005).limit("primary.network.out").iops
    many = run(0.0005, peers=peers).limit("primary.network.out").iops
    assert many == pytest.approx(one / peers)
    # each peer has its own connection: the per-connection window and flow cap do not divide
    assert run(0.0005, peers=peers).limit("replication.flow").iops == pytest.approx(
        run(0.0005).limit("replication.flow").iops
    )


def test_protocol_a_lag_is_the_send_buffer() -> None:
    workload = Workload("randwrite", 4096, numjobs=8)
    prediction = run(0.001, protocol="A", workload=workload)
    assert prediction.lag_bytes == 4 * MIB
    assert prediction.lag_s == pytest.approx(4 * MIB / prediction.bw)
    assert any("crash of the primary can lose" in note for note in prediction.notes)
    assert run(0.001, protocol="C", workload=workload).lag_bytes is None


@given(
    sndbuf=st.floats(min_value=1024, max_value=1e9),
    bs=st.integers(min_value=512, max_value=4 * 2**20),
    rate=st.floats(min_value=1.0, max_value=1e11),
)
def test_lag_bounds(sndbuf: float, bs: int, rate: float) -> None:
    lag = protocol_a_lag(sndbuf, bs, rate)
    assert lag.writes * bs == pytest.approx(sndbuf)
    assert lag.seconds * rate == pytest.approx(sndbuf)


def test_window_loop_by_hand() -> None:
    # two 64 KiB segments, 1 ms of processing each, 1 ms round trip.  MVA: one segment cycles in
    # 2 ms (500/s, the processing half busy, half a segment queued); the second finds that
    # queue and waits 1.5 ms, so two cycle in 2.5 ms: 800 segments/s
    window, service, rtt = 2.0 * SEGMENT_BYTES, 0.001, 0.001
    rate = window_loop_rate(window, rtt, SEGMENT_BYTES / service)
    assert rate == pytest.approx(800 * SEGMENT_BYTES)
    # below both bounds alone, above the two in series
    assert rate < min(SEGMENT_BYTES / service, window / rtt)
    assert rate > 1 / (service / SEGMENT_BYTES + rtt / window)


@given(
    window_kib=st.integers(min_value=64, max_value=16 * 1024),
    processing_mib=st.floats(min_value=1.0, max_value=5000.0),
    rtt0_ms=st.floats(min_value=0.01, max_value=2.0),
    extra_ms=st.floats(min_value=0.0, max_value=100.0),
)
@settings(max_examples=60, deadline=None)
def test_window_loop_between_series_and_min(
    window_kib: int, processing_mib: float, rtt0_ms: float, extra_ms: float
) -> None:
    window, processing = window_kib * 1024.0, processing_mib * MIB
    rtt0, rtt = rtt0_ms / 1000, (rtt0_ms + extra_ms) / 1000
    rate = window_loop_rate(window, rtt, processing, rtt0)
    assert rate <= min(processing, window / rtt) * (1 + 1e-9)
    assert rate >= 1 / (1 / processing + rtt / window) * (1 - 1e-9)
    # a longer round trip never moves more
    assert window_loop_rate(window, rtt + 0.001, processing, rtt0) <= rate * (1 + 1e-9)


@given(processing_mib=st.floats(min_value=1.0, max_value=900.0), rtt0_ms=st.floats(min_value=0.01, max_value=2.0))
@settings(max_examples=40, deadline=None)
def test_window_loop_gives_back_the_measured_rate_at_its_own_round_trip(processing_mib: float, rtt0_ms: float) -> None:
    # 4 MiB of window, at least twice the processing's rate per round trip: at the measurement's
    # own round trip the loop gives back the measured processing
    window, processing, rtt0 = 4.0 * MIB, processing_mib * MIB, rtt0_ms / 1000
    assert window_loop_rate(window, rtt0, processing, rtt0) == pytest.approx(processing, rel=1e-3)
