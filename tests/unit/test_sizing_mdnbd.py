"""md-nbd (md RAID1 over a local disk and an NBD device on the peer): the model's own relations.

The architecture is SIOS DataKeeper for Linux's ("a local disk or partition and a Network Block
Device ... The nbd-client process executes on the primary server and connects to the nbd-server
process running on the backup server"; its intent log is md's bitmap); mdadm(8) gives the
defaults: an internal bitmap's chunk "defaults to 64Meg", --write-behind's "default value is 256".
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.sizing.model.mdnbd import MdNbd, clean_chunk_fraction, predict_mdnbd

SAME_AZ = MdNbd(
    bs=4096,
    outstanding=8,
    local_write_s=0.5e-3,
    remote_write_s=0.5e-3,
    rtt_s=0.2e-3,
    local_bps=1e9,
    path_bps=1.25e9,
    single_flow_bps=625e6,
    working_set_bytes=2**40,
)

mirrors = st.builds(
    MdNbd,
    bs=st.sampled_from([4096, 16384, 65536, 2**20]),
    outstanding=st.integers(1, 256),
    local_write_s=st.floats(1e-5, 0.02),
    remote_write_s=st.floats(1e-5, 0.02),
    rtt_s=st.floats(0, 0.1),
    local_bps=st.floats(1e6, 4e9),
    path_bps=st.floats(1e6, 1e10),
    single_flow_bps=st.floats(1e6, 1e10),
    working_set_bytes=st.floats(2**26, 2**44),
    dirty_s=st.floats(0, 30),
    sequential=st.booleans(),
)


def test_the_worked_example() -> None:
    answer = predict_mdnbd(SAME_AZ)
    assert answer.remote_write_s == pytest.approx(0.2e-3 + 4096 / 625e6 + 0.5e-3)
    assert answer.clean_fraction == pytest.approx(0.0355, abs=5e-4)
    assert answer.write_latency_s == pytest.approx(0.731e-3, rel=1e-3)
    assert answer.throughput_bps == pytest.approx(44.8e6, rel=2e-3)


def test_write_behind_across_a_wan_is_held_by_the_bitmap() -> None:
    wan = predict_mdnbd(dataclasses.replace(SAME_AZ, mode="write-behind", rtt_s=30e-3))
    assert wan.clean_fraction > 0.9
    assert wan.throughput_bps == pytest.approx(1.15e6, rel=0.01)
    sequential = predict_mdnbd(dataclasses.replace(SAME_AZ, mode="write-behind", rtt_s=30e-3, sequential=True))
    # sequential writes set one bit per 64 MiB, so the 256 writes md lets run behind bind:
    # 256 x 4096 B / 30.5 ms = 34.4 MB/s
    assert sequential.binding == "write-behind depth over remote write"
    assert sequential.throughput_bps == pytest.approx(256 * 4096 / 30.5066e-3, rel=1e-3)


def test_a_single_nbd_flow_caps_large_writes() -> None:
    big = dataclasses.replace(SAME_AZ, bs=2**20, outstanding=64, local_bps=4e9, path_bps=3.125e9, sequential=True)
    answer = predict_mdnbd(big)
    assert answer.binding == "NBD single flow"
    assert answer.throughput_bps == pytest.approx(625e6)
    two = predict_mdnbd(dataclasses.replace(big, connections=2))
    assert two.throughput_bps > answer.throughput_bps


@given(mirrors)
def test_the_answer_is_the_fixed_point_and_within_every_limit(mirror: MdNbd) -> None:
    answer = predict_mdnbd(mirror)
    assert 0 < answer.throughput_bps <= min(mirror.local_bps, mirror.path_bps, mirror.single_flow_bps) * (1 + 1e-9)
    assert answer.clean_fraction == pytest.approx(
        clean_chunk_fraction(answer.throughput_bps / mirror.bs, mirror), rel=1e-6, abs=1e-9
    )
    assert answer.throughput_bps <= mirror.outstanding * mirror.bs / answer.write_latency_s * (1 + 1e-9)


@given(mirrors)
def test_synchronous_writes_wait_for_the_peer(mirror: MdNbd) -> None:
    answer = predict_mdnbd(dataclasses.replace(mirror, mode="sync"))
    assert answer.write_latency_s >= mirror.rtt_s + mirror.remote_write_s


@given(mirrors)
def test_write_behind_deeper_than_the_queue_is_never_slower(mirror: MdNbd) -> None:
    sync = predict_mdnbd(dataclasses.replace(mirror, mode="sync"))
    behind = predict_mdnbd(dataclasses.replace(mirror, mode="write-behind", write_behind=max(256, mirror.outstanding)))
    assert behind.throughput_bps >= sync.throughput_bps * (1 - 1e-6)


@given(st.floats(0, 1e6), st.floats(0, 1e6), mirrors)
def test_more_writes_leave_fewer_chunks_clean(low: float, high: float, mirror: MdNbd) -> None:
    low, high = sorted((low, high))
    assert 0 <= clean_chunk_fraction(high, mirror) <= clean_chunk_fraction(low, mirror) <= 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"bs": 0}, "md-nbd: bs must be a positive finite number, got 0"),
        ({"rtt_s": -1.0}, "md-nbd: rtt_s and dirty_s must not be negative"),
        ({"mode": "async"}, "md-nbd: mode 'async' is neither 'sync' nor 'write-behind'"),
        ({"local_write_s": 0.0}, "md-nbd: local_write_s must be above 0 s, got 0.0"),
    ],
)
def test_bad_input_is_one_line(change: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        dataclasses.replace(SAME_AZ, **change)  # type: ignore[arg-type]
    assert str(caught.value) == message
