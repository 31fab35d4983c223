"""The dm-log-writes reader and replay.

The logs built here follow the kernel target's on-disk format (struct log_write_super at
sector 0, one struct log_write_entry per sector-size block, the data after it) to exercise the
parser's logic only: they are not a kernel's output.  The logs recorded on the lab's kernel
are tests/data/durability/*.log.gz (how each was made: the README there); the recorded-log test
checks a log's own consistency, and skips, saying so, while there is none.
"""

from __future__ import annotations

import gzip
import io
import struct
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.durability.logwrites import (
    DISCARD,
    FLUSH,
    FUA,
    MAGIC,
    MARK,
    LogFormatError,
    Replayer,
    entries,
    flush_points,
    read_super,
)

RECORDED = sorted((Path(__file__).resolve().parents[1] / "data" / "durability").glob("*.log.gz"))


def unpacked(log: Path, where: Path) -> Path:
    """A recorded log (kept gzipped) as a file the reader can seek in."""
    out = where / log.name.removesuffix(".gz")
    out.write_bytes(gzip.decompress(log.read_bytes()))
    return out


# (sector, data or a discard's sector count, flags, mark)
Op = tuple[int, bytes | int, int, str]


def build_log(ops: list[Op], sectorsize: int = 512) -> bytes:
    out = bytearray(struct.pack("<QQQI", MAGIC, 1, len(ops), sectorsize).ljust(sectorsize, b"\0"))
    for sector, data, flags, mark in ops:
        count = data if isinstance(data, int) else len(data) // sectorsize
        body = struct.pack("<QQQQ", sector, count, flags, len(mark.encode())) + mark.encode()
        out += body.ljust(sectorsize, b"\0")
        if isinstance(data, bytes):
            out += data
    return bytes(out)


def _write(tmp_path: Path, ops: list[Op], sectorsize: int = 512) -> Path:
    path = tmp_path / "test.log"
    path.write_bytes(build_log(ops, sectorsize))
    return path


def test_entries_flags_marks_and_flush_points(tmp_path: Path) -> None:
    ops: list[Op] = [
        (0, b"a" * 1024, 0, ""),
        (0, b"", FLUSH, ""),
        (4, b"b" * 512, FUA, ""),
        (2, 2, DISCARD, ""),
        (0, b"", MARK, "after-discard"),
        (8, b"c" * 512, 0, ""),
    ]
    log = _write(tmp_path, ops)
    with log.open("rb") as f:
        got = list(entries(f))
    assert [(e.offset, e.length, e.flags) for e in got] == [
        (0, 1024, 0),
        (0, 0, FLUSH),
        (2048, 512, FUA),
        (1024, 1024, DISCARD),
        (0, 0, MARK),
        (4096, 512, 0),
    ]
    assert got[4].mark == "after-discard"
    assert flush_points(log) == [2, 3]


def test_replay_rebuilds_the_disk_at_any_entry_incrementally(tmp_path: Path) -> None:
    ops: list[Op] = [(0, b"a" * 1024, 0, ""), (0, b"", FLUSH, ""), (1, b"b" * 512, FUA, ""), (0, 1, DISCARD, "")]
    log = _write(tmp_path, ops)
    image = io.BytesIO(bytes(2048))
    states = []
    with Replayer(log, image) as replay:
        for point in range(5):
            assert replay.advance_to(point) == min(point, 4)
            states.append(image.getvalue()[:1024])
        assert replay.advance_to(99) == 4
        with pytest.raises(ValueError, match="cannot go back to 1"):
            replay.advance_to(1)
    assert states == [bytes(1024), b"a" * 1024, b"a" * 1024, b"a" * 512 + b"b" * 512, bytes(512) + b"b" * 512]


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from([512, 4096]),
    st.lists(
        st.tuples(st.integers(0, 7), st.integers(1, 3), st.sampled_from([0, FLUSH, FUA, FLUSH | FUA])), max_size=12
    ),
    st.data(),
)
def test_replaying_to_every_point_matches_applying_the_writes_in_order(
    sectorsize: int, writes: list[tuple[int, int, int]], data: st.DataObject
) -> None:
    ops: list[Op] = [(s, bytes([i + 1]) * (n * sectorsize), f, "") for i, (s, n, f) in enumerate(writes)]
    model = bytearray(11 * sectorsize)
    expected = [bytes(model)]
    for sector, payload, _, _ in ops:
        assert isinstance(payload, bytes)
        model[sector * sectorsize : sector * sectorsize + len(payload)] = payload
        expected.append(bytes(model))
    log = build_log(ops, sectorsize)
    with tempfile.TemporaryDirectory() as where:
        path = Path(where) / "h.log"
        path.write_bytes(log)
        image = io.BytesIO(bytes(11 * sectorsize))
        with Replayer(path, image) as replay:
            for point in range(len(ops) + 1):
                replay.advance_to(point)
                assert image.getvalue() == expected[point]
        assert flush_points(path) == [i + 1 for i, (_, _, f) in enumerate(writes) if f]


def test_a_damaged_log_is_one_error_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.log"
    bad.write_bytes(b"\0" * 512)
    with pytest.raises(LogFormatError, match=r"bad\.log: magic 0x0 is not dm-log-writes'"), bad.open("rb") as f:
        read_super(f, str(bad))
    cut = tmp_path / "cut.log"
    cut.write_bytes(build_log([(0, b"x" * 4096, 0, "")])[:-100])
    with pytest.raises(LogFormatError, match="entry 0's data is cut short"), Replayer(cut, io.BytesIO()) as r:
        r.advance_to(1)
    odd = tmp_path / "odd.log"
    odd.write_bytes(struct.pack("<QQQI", MAGIC, 1, 0, 1000))
    with pytest.raises(LogFormatError, match="sector size 1000"), odd.open("rb") as f:
        read_super(f)


@pytest.mark.skipif(not RECORDED, reason="no dm-log-writes log recorded on the lab yet (tests/data/durability)")
@pytest.mark.parametrize("recorded", RECORDED, ids=[p.name for p in RECORDED])
def test_a_recorded_log_parses_to_its_end_and_replays(recorded: Path, tmp_path: Path) -> None:
    log = unpacked(recorded, tmp_path)
    with log.open("rb") as f:
        head = read_super(f, str(log))
        found = list(entries(f, str(log)))
    assert len(found) == head.nr_entries > 0
    assert any(e.durable_point for e in found)
    extent = max((e.offset + e.length for e in found), default=0)
    image_path = tmp_path / "disk.img"
    image_path.write_bytes(b"")
    with image_path.open("r+b") as image, Replayer(log, image) as replay:
        assert replay.advance_to(len(found)) == len(found)
    assert image_path.stat().st_size >= extent - head.sectorsize
