"""The oracle of acknowledged writes on generated histories: a device image a correct
replication could leave behind classifies with no loss, and each way of losing an
acknowledged write (an older write, no write, sectors of two writes) is found, block by block."""

from __future__ import annotations

import io
from dataclasses import dataclass

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from harness.durability.oracle import AckLogError, WriterSpec, classify, classify_all
from harness.durability.stamp import SECTOR, block_bytes, read_sector


@dataclass
class History:
    spec: WriterSpec
    log: list[int]
    image: bytearray
    #: per offset, the newest acknowledged write aimed there
    expected: dict[int, int | None]


def _put(image: bytearray, offset: int, data: bytes) -> None:
    image[offset : offset + len(data)] = data


@st.composite
def histories(draw: st.DrawFn) -> History:
    bs = draw(st.sampled_from([SECTOR, 2 * SECTOR, 8 * SECTOR]))
    blocks = draw(st.integers(min_value=1, max_value=12))
    count = draw(st.integers(min_value=1, max_value=40))
    spec = WriterSpec(
        trial=draw(st.integers(0, 2**64 - 1)),
        job=draw(st.integers(0, 3)),
        seed=draw(st.integers(0, 99)),
        bs=bs,
        first_block=draw(st.integers(0, 3)),
        blocks=blocks,
        count=count,
    )
    acked = draw(st.sets(st.integers(0, count - 1)))
    log = draw(st.permutations(sorted(acked)))
    image = bytearray((spec.first_block + blocks) * bs)
    expected: dict[int, int | None] = {}
    for offset, seqs in spec.targets().items():
        newest = max((s for s in seqs if s in acked), default=None)
        expected[offset] = newest
        # what a correct replica may hold: the newest acknowledged write or any newer one
        allowed = [s for s in seqs if newest is None or s >= newest]
        choice = draw(st.sampled_from([*allowed, None] if newest is None else allowed))
        if choice is not None:
            _put(image, offset, block_bytes(spec.trial, choice, offset, bs))
    return History(spec, list(log), image, expected)


@settings(max_examples=150, deadline=None)
@given(histories())
def test_a_correct_replica_loses_nothing(history: History) -> None:
    report = classify(history.spec, history.log, io.BytesIO(bytes(history.image)))
    assert report.lost_acked == 0
    assert report.counts["acked-lost"] == report.counts["torn"] == 0
    assert sum(report.counts.values()) == len(history.expected)
    assert report.counts["acked-present"] <= sum(1 for e in history.expected.values() if e is not None)
    assert report.acked_writes == len(history.log)


@settings(max_examples=150, deadline=None)
@given(histories(), st.data())
def test_an_older_write_or_none_where_an_acknowledged_one_belongs_is_one_loss(
    history: History, data: st.DataObject
) -> None:
    losable = sorted(o for o, e in history.expected.items() if e is not None)
    if not losable:
        return
    offset = data.draw(st.sampled_from(losable))
    expected = history.expected[offset]
    assert expected is not None
    older = [s for s in history.spec.targets()[offset] if s < expected]
    bs = history.spec.bs
    replacement = data.draw(st.sampled_from([None, *older]))
    _put(
        history.image,
        offset,
        bytes(bs) if replacement is None else block_bytes(history.spec.trial, replacement, offset, bs),
    )
    report = classify(history.spec, history.log, io.BytesIO(bytes(history.image)))
    assert report.counts["acked-lost"] == 1
    assert report.lost_acked == 1
    (bad,) = report.bad
    assert (bad.offset, bad.expected, bad.klass) == (offset, expected, "acked-lost")


@settings(max_examples=150, deadline=None)
@given(histories(), st.data())
def test_sectors_of_two_writes_are_torn_and_lose_data_only_when_older(history: History, data: st.DataObject) -> None:
    spec = history.spec
    if spec.bs == SECTOR:
        return
    offset = data.draw(st.sampled_from(sorted(history.expected)))
    seqs = spec.targets()[offset]
    assume(len(seqs) > 1)
    first, second = data.draw(st.permutations(seqs))[:2]
    cut = data.draw(st.integers(1, spec.bs // SECTOR - 1)) * SECTOR
    block = (
        block_bytes(spec.trial, first, offset, spec.bs)[:cut] + block_bytes(spec.trial, second, offset, spec.bs)[cut:]
    )
    _put(history.image, offset, block)
    report = classify(spec, history.log, io.BytesIO(bytes(history.image)))
    (verdict,) = (v for v in report.bad if v.offset == offset)
    assert verdict.klass == "torn"
    assert verdict.found == tuple(sorted({first, second}))
    expected = history.expected[offset]
    assert verdict.loses_acked == (expected is not None and min(first, second) < expected)


def test_a_damaged_sector_and_a_misplaced_write_are_torn() -> None:
    spec = WriterSpec(trial=7, job=0, seed=1, bs=2 * SECTOR, first_block=0, blocks=1, count=2)
    block = bytearray(block_bytes(7, 1, 0, spec.bs))
    block[SECTOR + 100] ^= 0xFF
    report = classify(spec, [0, 1], io.BytesIO(bytes(block)))
    assert report.counts["torn"] == 1 and report.lost_acked == 1
    stamp = read_sector(bytes(block[SECTOR:]))
    assert stamp is not None and not stamp.valid
    misplaced = block_bytes(7, 1, 4096, spec.bs)  # the right write, stamped for another offset
    report = classify(spec, [0, 1], io.BytesIO(misplaced))
    assert report.counts["torn"] == 1


def test_another_trials_blocks_are_not_this_trials_writes() -> None:
    spec = WriterSpec(trial=7, job=0, seed=1, bs=SECTOR, first_block=0, blocks=1, count=1)
    stale = block_bytes(8, 0, 0, SECTOR)
    assert classify(spec, [0], io.BytesIO(stale)).counts["acked-lost"] == 1
    assert classify(spec, [], io.BytesIO(stale)).counts["unacked-absent"] == 1


def test_jobs_merge_and_a_short_device_or_a_bad_log_is_refused() -> None:
    one = WriterSpec(trial=1, job=0, seed=1, bs=SECTOR, first_block=0, blocks=2, count=3)
    two = WriterSpec(trial=1, job=1, seed=1, bs=SECTOR, first_block=2, blocks=2, count=3)
    image = bytearray(4 * SECTOR)
    for spec in (one, two):
        for seq in range(spec.count):
            _put(image, spec.offset(seq), block_bytes(1, seq, spec.offset(seq), SECTOR))
    report = classify_all([(one, [0, 1, 2]), (two, [2])], io.BytesIO(bytes(image)))
    assert report.acked_writes == 4 and report.lost_acked == 0
    with pytest.raises(AckLogError, match="write 1 acknowledged twice"):
        classify(one, [1, 1], io.BytesIO(bytes(image)))
    with pytest.raises(AckLogError, match="acknowledged write 3 was never issued"):
        classify(one, [3], io.BytesIO(bytes(image)))
    with pytest.raises(ValueError, match="the device ends before"):
        classify(two, [], io.BytesIO(bytes(image[: 2 * SECTOR])))
    with pytest.raises(ValueError, match="bs 1000 is not a positive multiple of 512"):
        WriterSpec(trial=1, job=0, seed=1, bs=1000, first_block=0, blocks=1, count=1)
