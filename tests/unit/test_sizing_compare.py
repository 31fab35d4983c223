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


def test_gcp_lists_its_zone_redundant_volumes_with_their_verdicts(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["sizing", "compare", "--instance-type", "n2-standard-4", "--volume", "pd-balanced:500GiB"]
    table = _table(capsys, *argv, "--workload", "randwrite:4k:numjobs=8", "--placement", "cross-zone")
    assert "meets: within 100,000 IOPS" in table["gcp/hyperdisk-balanced-high-availability"]
    assert "(unverified)" in table["gcp/hyperdisk-balanced-high-availability"]
    assert "second-generation and earlier" in table["gcp/regional-pd"]


def test_a_bad_working_set_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*M6I, *WORKLOAD, "--working-set", "lots"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("harness sizing: error: --working-set 'lots': not a size")
    assert len(err.splitlines()) == 1
