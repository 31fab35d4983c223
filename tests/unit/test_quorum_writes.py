"""The quorum cell's writer, run for real on this machine's shell and dd, and the judgement of
its writes around a cut (the refusal time, writes acknowledged after quorum was lost, the resume)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cell.quorumwrites import BLOCK, Write, judge_held, judge_loss, parse_writes, writer_script
from harness.errors import InfraError
from tests.doubles import LocalRunner


def test_the_writer_acknowledges_each_block_it_wrote(tmp_path: Path) -> None:
    target = tmp_path / "device"
    target.write_bytes(b"\xff" * 4 * BLOCK)
    out = LocalRunner().run_script(writer_script(str(target), duration_s=1, blocks=4), timeout=30).stdout
    writes = parse_writes(out)
    assert writes and all(w.ok for w in writes)
    assert [w.index for w in writes] == list(range(len(writes)))
    assert all(w.start <= w.end for w in writes) and writes[-1].end - writes[0].start < 3
    assert target.read_bytes()[:BLOCK] == b"\0" * BLOCK and target.stat().st_size == 4 * BLOCK


def test_a_write_the_kernel_refuses_reads_as_refused(tmp_path: Path) -> None:
    # a directory cannot be written: dd fails as a refused DRBD write fails, with its exit status
    writes = parse_writes(
        LocalRunner().run_script(writer_script(str(tmp_path), duration_s=1, blocks=1), timeout=30).stdout
    )
    assert writes and not any(w.ok for w in writes)


def test_anything_but_the_writers_lines_is_named() -> None:
    with pytest.raises(InfraError, match="quorum writer line 2: not a write: 'sh: dd: not found'"):
        parse_writes("ok 0 1.0 1.1\nsh: dd: not found\n")


def _timeline(steps: list[tuple[bool, float]]) -> list[Write]:
    writes, now = [], 100.0
    for i, (ok, took) in enumerate(steps):
        writes.append(Write(ok, i, now, now + took))
        now += took + 0.01
    return writes


@given(st.lists(st.tuples(st.booleans(), st.floats(0.01, 3.0)), min_size=1, max_size=60), st.floats(0, 40))
def test_the_verdict_of_any_sequence(steps: list[tuple[bool, float]], cut_offset: float) -> None:
    writes = _timeline(steps)
    cut_at = 100.0 + cut_offset
    healed_at = cut_at + 8.0
    verdict = judge_loss(writes, cut_at=cut_at, healed_at=healed_at)
    refused = [w for w in writes if not w.ok and w.end >= cut_at]
    assert (verdict.refused_after_s is None) == (not refused)
    if refused:
        first = refused[0]
        assert verdict.refused_after_s == first.end - cut_at
        late = [w for w in writes if w.ok and w.start >= first.end and w.end < healed_at]
        assert verdict.acked_after_loss == len(late)
    assert verdict.errors_before_cut == sum(1 for w in writes if not w.ok and w.end < cut_at)
    problems = verdict.problems(within_s=5.0, resume_within_s=30.0)
    assert bool(verdict.acked_after_loss) == any("acknowledged after quorum was lost" in p for p in problems)


def test_a_primary_that_keeps_writing_without_quorum_fails() -> None:
    writes = _timeline([(True, 0.1)] * 5 + [(False, 1.5)] + [(True, 0.1)] * 3 + [(False, 0.1)] * 20 + [(True, 0.1)] * 5)
    cut_at = writes[4].end
    healed_at = writes[-6].end
    verdict = judge_loss(writes, cut_at=cut_at, healed_at=healed_at)
    assert verdict.acked_after_loss == 3
    assert verdict.problems(within_s=5.0, resume_within_s=30.0) == ["3 writes were acknowledged after quorum was lost"]
    held = judge_held(writes, cut_at=cut_at, healed_at=healed_at)
    assert held[0].startswith("21 writes failed (first at +")
