"""Pre-sales questions worked by hand from catalog.yaml and the published rules, against the model.

Each test is one of the questions docs/sizing-questions.md answers, where the tool's answer and
the hand-worked one first disagreed; the docstring is the hand-worked figure.
"""

from __future__ import annotations

import pytest

from harness.sizing.catalog.loader import load_builtin_catalog
from harness.sizing.model.predict import predict
from harness.sizing.scenario.question import Scenario, SizedNode, VolumeSpec, Workload

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
