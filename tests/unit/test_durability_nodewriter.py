"""The node-side writer run for real, with this machine's sh and dd on a file: the blocks it
writes are the stamped blocks, its output is the acknowledgement log, and the oracle reads the
file back as an intact replica."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.durability.nodewriter import job_stream, parse_acks, writer_script
from harness.durability.oracle import AckLogError, WriterSpec, classify


def _run(spec: WriterSpec, target: Path, upto: int | None = None) -> str:
    script = writer_script(spec, str(target), direct=False)
    feed = b"".join(job_stream(spec, upto=upto))
    done = subprocess.run(["sh", "-c", script], input=feed, capture_output=True, timeout=120, check=True)
    return done.stdout.decode()


@pytest.mark.parametrize("bs", [512, 4096])
def test_the_writer_writes_every_block_and_acknowledges_each_in_order(tmp_path: Path, bs: int) -> None:
    spec = WriterSpec(trial=99, job=0, seed=5, bs=bs, first_block=2, blocks=16, count=40)
    target = tmp_path / "disk.img"
    target.write_bytes(bytes(20 * bs))
    acks = parse_acks(_run(spec, target), spec)
    assert acks == list(range(40))
    with target.open("rb") as device:
        report = classify(spec, acks, device)
    assert report.lost_acked == 0 and report.counts["torn"] == 0
    assert report.counts["acked-present"] == len(spec.targets())
    assert target.stat().st_size == 20 * bs  # conv=notrunc: nothing past the region changed size


def test_a_writer_cut_short_leaves_the_rest_unacknowledged(tmp_path: Path) -> None:
    spec = WriterSpec(trial=1, job=2, seed=7, bs=512, first_block=0, blocks=64, count=30)
    target = tmp_path / "disk.img"
    target.write_bytes(bytes(64 * 512))
    acks = parse_acks(_run(spec, target, upto=12), spec)
    assert acks == list(range(12))
    with target.open("rb") as device:
        report = classify(spec, acks, device)
    assert report.lost_acked == 0
    assert report.counts["unacked-absent"] > 0


def test_the_ack_log_drops_a_line_cut_by_the_crash_and_refuses_garbage() -> None:
    spec = WriterSpec(trial=1, job=0, seed=1, bs=512, first_block=0, blocks=4, count=10)
    assert parse_acks("0\n1\n2\n3", spec) == [0, 1, 2]
    with pytest.raises(AckLogError, match="line 2 is not a sequence number"):
        parse_acks("0\ndd: error\n", spec)
    script = writer_script(spec, "/dev/drbd0", durable=True)
    assert "oflag=direct,dsync" in script and "of=/dev/drbd0" in script
