"""Azure Premium SSD on-demand bursting: P30 and larger, enabled by the user, billed per burst transaction.

Microsoft's figures (catalog references azure-premium-ssd-sizes-src, includes/disk-storage-premium-
ssd-sizes.md at 1d25717: "Max burst IOPS per disk ... 30,000*", "1,000 MB/s*", "Max burst duration
... Unlimited*", "*Applies only to disks with on-demand bursting enabled"; azure-disk-bursting-src,
managed-disks-bursting-2.md at 2e4af98: the burst transactions of a second are "Max((10,000 - 5,000),
(300 - 200) * 1024 / 256)) * 5 = 25,000 transactions" for five seconds at 10,000 IOPS and 300 MBps on
a P30, and "Max((6,000 - 5,000), (600 - 200) * 1024 / 256)) * 5 = 8,000" at 6,000 IOPS and 600 MBps).
"""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cli.sizing import add_arguments, run
from harness.sizing.catalog.loader import load_builtin_catalog
from harness.sizing.model.ondemand import burst_transactions_s
from harness.sizing.model.predict import predict
from harness.sizing.scenario.question import Scenario, SizedNode, VolumeSpec, Workload

CATALOG = load_builtin_catalog()


@pytest.mark.parametrize(
    ("iops", "mb_s", "seconds", "transactions"),
    [(10000, 300, 5, 25000), (6000, 600, 5, 8000), (6000, 100, 10, 10000), (7000, 100, 60, 120000)],
)
def test_microsoft_s_worked_examples(iops: float, mb_s: float, seconds: float, transactions: float) -> None:
    assert burst_transactions_s(5000, 200, iops, mb_s) * seconds == pytest.approx(transactions)


@given(st.floats(0, 60000), st.floats(0, 2000), st.floats(0, 30000), st.floats(0, 1000))
def test_a_second_s_transactions_are_the_larger_overage_and_none_below_target(
    iops: float, mb_s: float, target_iops: float, target_mb_s: float
) -> None:
    count = burst_transactions_s(target_iops, target_mb_s, iops, mb_s)
    assert count == pytest.approx(max(0.0, iops - target_iops, (mb_s - target_mb_s) * 4))
    if iops <= target_iops and mb_s <= target_mb_s:
        assert count == 0


def _question_6(on_demand: bool) -> Scenario:
    return Scenario(
        primary=SizedNode("Standard_D4s_v5", VolumeSpec("premium-ssd", 1024, on_demand_burst=on_demand)),
        workload=Workload("randwrite", 4096, numjobs=8, iodepth=8),
        placement="cross-az",
        duration_s=3600,
    )


def test_a_p30_bursting_on_demand_is_held_by_the_vm_and_its_transactions_counted() -> None:
    """D4s_v5 + P30, 4 KiB random writes at QD64 across zones for 1 h.  Without on-demand bursting
    the P30's 5,000 IOPS bind.  With it the disk takes 30,000 IOPS and the VM's uncached cap
    binds: its credits fund 6,400 + (20,000 - 6,400) x 1,800 / 3,600 = 13,200 IOPS on average over
    the hour.  Above the P30's 5,000 that is 8,200 burst transactions a second (4 KiB writes are far
    below 200 MB/s), 8,200 x 2,628,000 s = 21.55 billion a month = 2,154,960 units of 10,000."""
    assert predict(_question_6(False), CATALOG).iops == pytest.approx(5000)
    prediction = predict(_question_6(True), CATALOG)
    assert prediction.iops == pytest.approx(13200)
    assert prediction.binding.resource != "volume"
    (note,) = (note for note in prediction.notes if note.startswith("On-demand bursting:"))
    assert "8,200 burst transactions a second, 2,154,960 units of 10,000 a month" in note
    assert prediction.cost is not None and prediction.cost.transfer_priced
    assert any(reason.startswith("on-demand bursting") for reason in prediction.cost.unpriced)


def _sizing(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="harness sizing")
    add_arguments(parser)
    code = run(parser.parse_args(list(argv)))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_the_cost_line_says_the_bursting_fees_are_left_out(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--instance-type", "Standard_D4s_v5", "--volume", "premium-ssd:1024GiB", "--placement", "cross-az"]
    code, out = _sizing(capsys, *argv, "--workload", "randwrite:4k:numjobs=8:iodepth=8", "--on-demand-bursting")
    cost = next(line for line in out.splitlines() if line.startswith("Cost:"))
    assert code == 0
    assert "on-demand bursting (the disks' hourly enablement fee and their burst transactions" in cost
    assert "no stored copy states either price" in cost


@pytest.mark.parametrize(
    ("volume", "message"),
    [
        ("premium-ssd:512GiB", "premium-ssd P20 (512 GiB) cannot burst on demand: Microsoft offers it on Premium SSDs"),
        ("premium-ssd-v2:1024GiB", "premium-ssd-v2 has no on-demand bursting"),
    ],
)
def test_on_demand_bursting_where_azure_offers_none_is_refused_in_one_line(
    volume: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--instance-type", "Standard_D4s_v5", "--volume", volume, "--workload", "randwrite:4k"]
    code, out = _sizing(capsys, *argv, "--on-demand-bursting")
    assert code == 2
    assert out.startswith("harness sizing: error: ") and message in out and out.count("\n") == 1
