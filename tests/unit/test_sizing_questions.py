"""Pre-sales questions worked by hand from catalog.yaml and the published rules, against the model.

Each test is one of the questions docs/sizing-questions.md answers, where the tool's answer and
the hand-worked one first disagreed; the docstring is the hand-worked figure.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.sizing.catalog.loader import load_builtin_catalog
from harness.sizing.model.predict import predict
from harness.sizing.scenario.question import Scenario, SizedNode, VolumeSpec, Workload
from harness.sizing.scenario.topology import parse_topology

CATALOG = load_builtin_catalog()


def test_over_two_hours_a_credit_limit_allows_what_its_credits_fund() -> None:
    """t3.medium + gp3 (500 GiB, 3,000 IOPS, 200 MiB/s) across AZs, 1 MiB writes at QD8, for 2 h.

    Network: 0.256 Gbps baseline, 5 Gbps burst, the credits 5 min at full burst: (5 - 0.256) x
    300 s = 1,423.2 Gb.  Over 7,200 s that funds 0.256 + 1,423.2 / 7,200 = 0.4537 Gbps =
    56.71 MB/s on the wire, / (1,500 / 1,448 for IP and TCP headers) = 54.74 MB/s = 52.21 MiB/s of
    writes: the run's mean, so the network binds with no headroom.  EBS: 347 Mbps baseline, 2,085
    Mbps for 30 min: 347 + 1,738 x 1,800 / 7,200 = 781.5 Mbps = 93.16 MiB/s over the run, not the
    2,085 Mbps (248.6 MiB/s) of its burst, which lasts 42 min at 200 MiB/s.
    """
    scenario = Scenario(
        primary=SizedNode("t3.medium", VolumeSpec("gp3", 500, 3000, 200)),
        workload=Workload("write", 2**20, numjobs=1, iodepth=8),
        placement="cross-az",
        duration_s=7200,
    )
    prediction = predict(scenario, CATALOG)
    network = prediction.limit("primary.network.out")
    assert network.iops == pytest.approx(52.21, abs=0.01)
    assert network.iops == pytest.approx(prediction.iops)
    assert prediction.limit("primary.ebs.throughput").iops == pytest.approx(93.16, abs=0.01)
    assert prediction.sustained_iops == pytest.approx(0.256e9 / 8 * 1448 / 1500 / 2**20)


def _three_nodes(dr: str) -> Scenario:
    return Scenario(
        primary=SizedNode("m6i.xlarge", VolumeSpec("gp3", 500, 6000, 250)),
        workload=Workload("randwrite", 16384, numjobs=1, iodepth=16),
        topology=parse_topology(f"cross-az,{dr}"),
    )


def test_a_dr_replica_under_protocol_a_is_not_waited_for_but_its_window_binds() -> None:
    """Three-node DRBD 9: m6i.xlarge + gp3 (6,000 IOPS), a protocol C peer in the next AZ (1 ms)
    and a DR peer across a region at 60 ms under protocol A; 16 KiB random writes at QD16.

    A write waits for the local gp3 (1 ms) and the cross-AZ peer: 1 ms + 16,384 B x 1,500/1,448 x
    8 / 5 Gbps (0.027 ms on the single flow) + 1 ms = 2.027 ms, so 16 in flight allow 7,893 IOPS,
    above gp3's 6,000.  The DR connection is not waited for, but it keeps at most its 4 MiB send
    buffer in flight per 60 ms round trip: 4,194,304 / 0.060 = 69.9 MB/s = 4,267 writes of 16 KiB
    a second, which binds.  Under protocol C everywhere a write would wait 61 ms: 16 / 61.03 ms =
    262 IOPS.  What a crash can lose on the DR side: the send buffer, 4 MiB = 256 writes.
    """
    mixed = predict(_three_nodes("rtt=60ms:A"), CATALOG)
    assert mixed.binding.key == "replication.window"
    assert mixed.iops == pytest.approx(4 * 2**20 / 0.060 / 16384)
    assert mixed.rtt_s == pytest.approx(0.001)
    assert mixed.lag_bytes == 4 * 2**20
    assert predict(_three_nodes("rtt=60ms"), CATALOG).iops == pytest.approx(16 / 0.06103, rel=0.01)


@given(st.floats(min_value=5, max_value=150))
@settings(max_examples=25, deadline=None)
def test_putting_the_far_replica_under_a_never_slows_the_resource(rtt_ms: float) -> None:
    far_c = predict(_three_nodes(f"rtt={rtt_ms}ms"), CATALOG).iops
    far_a = predict(_three_nodes(f"rtt={rtt_ms}ms:A"), CATALOG).iops
    assert far_a >= far_c * (1 - 1e-9)


def test_a_peer_s_own_protocol_is_read_and_shown() -> None:
    slots = parse_topology("same-az:C,rtt=30ms:A,cross-az:diskless")
    assert [(s.protocol, s.diskless) for s in slots] == [("C", False), ("A", False), (None, True)]
    assert [s.describe() for s in slots] == ["same-az:C", "rtt=30ms:A", "cross-az:diskless"]
