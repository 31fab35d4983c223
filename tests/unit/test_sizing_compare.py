"""``harness sizing compare``: DRBD, md-nbd and the zone-redundant volumes in one table."""

from __future__ import annotations

import pytest

from harness.cli import main

M6I = ["sizing", "compare", "--instance-type", "m6i.xlarge", "--volume", "gp3:500GiB:16000:500"]
WORKLOAD = ["--workload", "randwrite:4k:numjobs=4:iodepth=4"]


def _table(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, str]:
    assert main([*argv]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    return {line.split("  ")[0].strip(): line for line in lines}


def test_same_az_every_mirror_is_held_by_the_instance_s_ebs_iops(capsys: pytest.CaptureFixture[str]) -> None:
    # m6i.xlarge's EBS baseline is 6,000 IOPS: 6,000 x 4096 B = 24.6 MB/s, whatever replicates
    table = _table(capsys, *M6I, *WORKLOAD)
    assert "primary m6i.xlarge EBS IOPS" in table["DRBD protocol C"]
    for row in ("DRBD protocol C", "md-nbd synchronous", "md-nbd write-behind (256)"):
        assert " 24.6 " in table[row], row


def test_at_30_ms_write_behind_keeps_the_local_rate_and_sync_does_not(capsys: pytest.CaptureFixture[str]) -> None:
    # 16 writes in flight over a 30 ms round trip: about 16 x 4096 B / 31 ms = 2.1 MB/s for DRBD C;
    # write-behind's 256 remote writes carry 256 x 4096 B / 30.5 ms = 34 MB/s, above the local 24.6
    table = _table(capsys, *M6I, *WORKLOAD, "--placement", "rtt=30ms")
    assert "    2.1 " in table["DRBD protocol C"]
    assert " 24.6 " in table["md-nbd write-behind (256)"]
    assert "bitmap" in table["md-nbd synchronous"]


def test_on_n2_hyperdisk_ha_is_refused_and_regional_pd_is_rated_and_priced(capsys: pytest.CaptureFixture[str]) -> None:
    """n2-standard-4 + pd-ssd 500 GiB, 4 KiB random writes at QD32, across zones.  N2 attaches no
    Hyperdisk (Balanced High Availability is for C3, C4, N4 and later).  Regional pd-ssd on one VM:
    6,000 + 30 x 500 = 21,000 IOPS, the VM's 15,000 binds, as it does DRBD's pair (61.4 MB/s);
    egress 10 Gbps / 2.32 = 538.8 MB/s is far off.  Price: n2-standard-4 0.194236 x 730 = $141.79,
    regional pd-ssd 500 x 0.34 = $170: $312 a month, against DRBD's two VMs and two zonal disks."""
    argv = ["sizing", "compare", "--instance-type", "n2-standard-4", "--volume", "pd-ssd:500GiB"]
    table = _table(capsys, *argv, "--workload", "randwrite:4k:numjobs=8:iodepth=4", "--placement", "cross-zone")
    assert "refused: not offered on N2" in table["gcp/hyperdisk-balanced-high-availability"]
    regional = table["regional-pd-ssd (Google replicates)"]
    assert " 61.4 " in regional and "VM disk cap IOPS" in regional and "$312/month" in regional
    assert " 61.4 " in table["DRBD protocol C"]


def test_on_c4_hyperdisk_ha_meets_and_regional_pd_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["sizing", "compare", "--instance-type", "c4-standard-8", "--volume", "hyperdisk-balanced:500GiB:20000:400"]
    table = _table(capsys, *argv, "--workload", "randwrite:4k:numjobs=8:iodepth=4", "--placement", "cross-zone")
    assert "meets: within 100,000 IOPS" in table["gcp/hyperdisk-balanced-high-availability"]
    assert "(unverified)" in table["gcp/hyperdisk-balanced-high-availability"]
    assert "refused: not offered on C4" in table["gcp/regional-pd"]


def test_a_bad_working_set_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*M6I, *WORKLOAD, "--working-set", "lots"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("harness sizing: error: --working-set 'lots': not a size")
    assert len(err.splitlines()) == 1
