"""``harness sizing --replication md-nbd|md-nbd-write-behind``: md-nbd rated and priced as a pair.

The figures are catalog.yaml's: m6i.xlarge $0.192/h, EBS baseline 6,000 IOPS, network baseline
1.562 Gbps; gp3 $0.08/GiB-month plus $0.005 per IOPS above 3,000 and $0.04 per MiB/s above 125,
1 ms write latency (an estimate); aws/cross-az RTT 1 ms, $0.01 per GB on each side.
"""

from __future__ import annotations

import json

import pytest

from harness.cli import main

PAIR = ["sizing", "--instance-type", "m6i.xlarge", "--volume", "gp3:500GiB:16000:500"]
QD16 = ["--workload", "randwrite:4k:numjobs=4:iodepth=4"]


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert main([*PAIR, *QD16, *argv, "--json"]) == 0
    payload: dict[str, object] = json.loads(capsys.readouterr().out)
    return payload


def test_synchronous_md_nbd_across_azs_is_held_by_the_local_volume_and_priced(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """By hand: the NBD leg is 1 ms RTT + 4,096 B / 195.25 MB/s (0.021 ms) + 1 ms = 2.021 ms, so 16
    in flight allow 16 x 4,096 B / 2.021 ms = 32.4 MB/s; the local volume (held to the instance's
    6,000 IOPS) allows 6,000 x 4,096 = 24.576 MB/s and binds; a write then waits 16 / 6,000 =
    2.667 ms.  Cost: instances 2 x 0.192 x 730 = $280.32; each gp3 500 x 0.08 + 13,000 x 0.005 +
    375 x 0.04 = $120, the pair $240; transfer $0.02 per GB (both AZs) x 24.576 MB/s x 2,628,000 s
    = 64,585.7 GB = $1,291.71 a month at that rate."""
    payload = _json(capsys, "--placement", "cross-az", "--replication", "md-nbd")
    assert payload["mode"] == "sync"
    assert payload["iops"] == pytest.approx(6000)
    assert payload["bottleneck"] == "local volume"
    assert payload["latency_ms"] == pytest.approx(16 / 6000 * 1000)
    assert payload["remote_write_ms"] == pytest.approx(1 + 4096 / 195.25e6 * 1000 + 1, rel=1e-4)
    cost = payload["cost"]
    assert isinstance(cost, dict)
    assert cost["instances_month"] == pytest.approx(280.32)
    assert cost["volumes_month"] == pytest.approx(240.0)
    assert cost["transfer_month_at_predicted_rate"] == pytest.approx(1291.71, rel=1e-4)


def test_at_30_ms_write_behind_keeps_the_local_rate_and_synchronous_falls(capsys: pytest.CaptureFixture[str]) -> None:
    """Synchronous: 16 x 4,096 B / (30 + 0.021 + 1 ms) = 2.11 MB/s before the bitmap, which at about
    500 writes/s over 1,600 chunks of 64 MiB finds a fifth of them clean and costs each one more
    31 ms round: below 2.11 MB/s.  Write-behind: 256 outstanding / 31.02 ms = 8,253 writes/s, above
    the local 6,000, so the local volume binds at 24.6 MB/s."""
    sync = _json(capsys, "--placement", "rtt=30ms", "--replication", "md-nbd")
    behind = _json(capsys, "--placement", "rtt=30ms", "--replication", "md-nbd-write-behind")
    assert float(str(sync["iops"])) * 4096 < 16 * 4096 / 0.03102
    assert 0.1 < float(str(sync["bitmap_clean_fraction"])) < 0.5
    assert behind["iops"] == pytest.approx(6000)
    assert behind["write_behind"] == 256
    assert behind["bottleneck"] == "local volume"


def test_the_text_answer_names_the_mode_the_binding_limit_and_the_cost(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*PAIR, *QD16, "--placement", "cross-az", "--replication", "md-nbd"]) == 0
    out = capsys.readouterr().out
    assert "md-nbd synchronous" in out
    assert "Binding limit: local volume." in out
    assert "Cost: $520.32/month for the pair" in out
    assert "$0.02 per GB written ($1,292/month" in out


@pytest.mark.parametrize(
    ("extra", "named"),
    [(["--peers", "2"], "--peers"), (["--protocol", "A"], "--protocol"), (["--duration", "2h"], "--duration")],
)
def test_options_only_drbd_reads_are_refused_in_one_line(
    capsys: pytest.CaptureFixture[str], extra: list[str], named: str
) -> None:
    assert main([*PAIR, *QD16, "--replication", "md-nbd", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and named in err[0] and "md-nbd" in err[0]


def test_the_nbd_connection_s_send_buffer_caps_write_behind_across_a_region(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """m6i.2xlarge + gp3 1,000 GiB (6,000 IOPS, 500 MiB/s), 1 MiB writes at QD8, 30 ms away.
    Write-behind lets 256 writes be outstanding, 256 MiB, but one TCP connection keeps at most its
    4 MiB send buffer unacknowledged per round trip: 4,194,304 B / 0.030 s = 139.8 MB/s = 133.3
    MiB/s, below the 298 MiB/s the instance's EBS baseline (2,500 Mbps) allows; DRBD's protocol A
    is held to the same window."""
    argv = ["sizing", "--instance-type", "m6i.2xlarge", "--volume", "gp3:1000GiB:6000:500"]
    argv += ["--workload", "write:1M:iodepth=8", "--placement", "rtt=30ms"]
    assert main([*argv, "--replication", "md-nbd-write-behind", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["bottleneck"] == "TCP send-buffer window"
    assert payload["bw_mib_s"] == pytest.approx(4 * 2**20 / 0.030 / 2**20)
