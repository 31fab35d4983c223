"""Power cuts replayed from dm-log-writes logs: built ones (whose order and flushes the test
chooses, including a stack that writes an old copy over a flushed write), and the logs recorded
on the lab's kernel in tests/data/durability (each with a .json of the job that wrote it)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.durability.logwrites import FLUSH, FUA, used_bytes
from harness.durability.oracle import WriterSpec
from harness.durability.replaycheck import durable_index, replay_check, replay_points
from harness.durability.stamp import block_bytes
from tests.unit.test_durability_logwrites import RECORDED, Op, build_log, unpacked

SPEC = WriterSpec(trial=7, job=0, seed=3, bs=1024, first_block=0, blocks=6, count=24)


def _write_op(spec: WriterSpec, seq: int, flags: int) -> Op:
    offset = spec.offset(seq)
    return (offset // 512, block_bytes(spec.trial, seq, offset, spec.bs), flags, "")


def _log(tmp_path: Path, ops: list[Op]) -> Path:
    path = tmp_path / "built.log"
    path.write_bytes(build_log(ops))
    return path


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([0, FUA, FLUSH]), min_size=SPEC.count, max_size=SPEC.count), st.integers(0, 99))
def test_a_log_of_writes_in_order_loses_nothing_at_any_point(flags: list[int], seed: int) -> None:
    ops: list[Op] = []
    for seq, flag in enumerate(flags):
        if flag == FLUSH:
            ops.append((0, b"", FLUSH, ""))
        ops.append(_write_op(SPEC, seq, FUA if flag == FUA else 0))
    with tempfile.TemporaryDirectory() as where:
        log = _log(Path(where), ops)
        check = replay_check(log, SPEC, between=30, seed=seed)
        index = durable_index(log, SPEC)
    assert check.failures == () and check.blind == ()
    assert check.at_flushes == len(index.flush_points) == sum(1 for f in flags if f)
    # every write made durable is durable from the flush after it or its own FUA
    for seq, at in index.durable_at.items():
        assert ops[at - 1][2] & (FLUSH | FUA)
        assert flags[seq] == FUA or any(f == FLUSH for f in flags[seq + 1 :])
    assert check.controls > 0


def test_an_old_copy_written_over_a_flushed_write_is_caught(tmp_path: Path) -> None:
    spec = WriterSpec(trial=9, job=0, seed=1, bs=512, first_block=0, blocks=1, count=3)
    ops = [_write_op(spec, 0, 0), _write_op(spec, 1, 0), (0, b"", FLUSH, ""), _write_op(spec, 0, 0)]
    check = replay_check(_log(tmp_path, ops), spec, between=0, seed=0)
    assert check.points == 1 and check.failures == ()  # the flush point: write 1 is there
    later = replay_check(_log(tmp_path, [*ops, (0, b"", FLUSH, "")]), spec, between=0, seed=0)
    assert [f.point for f in later.failures] == [5] and later.failures[0].lost == 1


def test_replay_points_hold_every_flush_and_draw_the_rest_by_seed(tmp_path: Path) -> None:
    ops = [_write_op(SPEC, s, FUA if s % 5 == 0 else 0) for s in range(SPEC.count)]
    index = durable_index(_log(tmp_path, ops), SPEC)
    points = replay_points(index, 10, seed=4)
    assert set(index.flush_points) <= set(points) and points == sorted(set(points))
    assert points == replay_points(index, 10, seed=4) and all(0 <= p <= index.entries for p in points)
    assert used_bytes(tmp_path / "built.log") == (tmp_path / "built.log").stat().st_size


@pytest.mark.skipif(not RECORDED, reason="no dm-log-writes log recorded on the lab yet (tests/data/durability)")
@pytest.mark.parametrize("recorded", RECORDED, ids=[p.name for p in RECORDED])
def test_a_recorded_log_replayed_at_every_flush_and_between_loses_nothing(recorded: Path, tmp_path: Path) -> None:
    log = unpacked(recorded, tmp_path)
    spec = WriterSpec(**json.loads(recorded.with_name(log.stem + ".json").read_text())["spec"])
    index = durable_index(log, spec)
    check = replay_check(log, spec, between=1000, seed=31)
    assert len(index.durable_at) == spec.count, "every write of the durable writer is made durable in the log"
    assert check.failures == (), f"durable writes lost at points {check.failures[:5]}"
    assert check.blind == (), f"the negative control went unnoticed at points {check.blind[:5]}"
    assert check.at_flushes == len(index.flush_points) >= spec.count
    assert check.points >= 1000 and check.durable_writes == spec.count
    assert check.controls >= spec.count - 1  # a next write to claim at every point but the last
