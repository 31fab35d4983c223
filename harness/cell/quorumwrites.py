"""The quorum cell's writer and its judgement: one 4 KiB direct write after another, each with
whether the kernel acknowledged it, and what that sequence says about the quorum.

The writer is a shell loop on the primary: ``dd`` of one block with ``oflag=direct`` (the
write reaches DRBD, no page cache between), its exit status, and the node's clock before and
after, one line per write::

    ok 17 1764590401.204 1764590401.251
    err 18 1764590401.260 1764590403.118

``dd`` exits non-zero exactly when the write failed (``Input/output error`` from DRBD's
``on-no-quorum io-error``), so an ``ok`` line is an acknowledged write.  Every time is the
primary's own clock, the cut and the heal included, so no offset between hosts enters.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from harness.errors import InfraError

__all__ = ["BLOCK", "LossVerdict", "Write", "judge_held", "judge_loss", "parse_writes", "writer_script"]

BLOCK: Final = 4096
_LINE: Final = re.compile(r"^(ok|err) (\d+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?)$")


@dataclass(frozen=True)
class Write:
    """One block write: acknowledged or failed, and when it was issued and answered."""

    ok: bool
    index: int
    start: float
    end: float


def writer_script(device: str, *, duration_s: float, blocks: int) -> str:
    """The loop above on ``device``, for ``duration_s`` seconds, over its first ``blocks`` blocks."""
    if blocks < 1 or duration_s <= 0:
        raise ValueError("the writer needs a block to write and time to write it")
    dev = shlex.quote(device)
    return (
        f"end=$(( $(date +%s) + {int(duration_s + 0.999)} )); i=0; now=0; "
        f'while [ "$now" -lt "$end" ]; do '
        f"s=$(date +%s.%N); "
        f"if dd if=/dev/zero of={dev} bs={BLOCK} count=1 seek=$((i % {blocks})) oflag=direct conv=notrunc "
        f"2>/dev/null; then r=ok; else r=err; fi; "
        f'e=$(date +%s.%N); echo "$r $i $s $e"; i=$((i + 1)); now=${{e%.*}}; '
        f"done"
    )


def parse_writes(text: str) -> list[Write]:
    """The writer's lines, in order; anything else is the writer broken, said with the line."""
    writes: list[Write] = []
    for number, line in enumerate(text.splitlines(), 1):
        m = _LINE.match(line.strip())
        if m is None:
            if line.strip():
                raise InfraError(f"quorum writer line {number}: not a write: {line[:120]!r}")
            continue
        writes.append(Write(m[1] == "ok", int(m[2]), float(m[3]), float(m[4])))
    return writes


@dataclass(frozen=True)
class LossVerdict:
    """What the writes say of a primary cut off from its majority: when writes were first
    refused, how many were acknowledged after that while the cut lasted (none may be), and
    when, after the heal, one was acknowledged again."""

    refused_after_s: float | None
    acked_after_loss: int
    resumed_after_s: float | None
    errors_before_cut: int

    def problems(self, *, within_s: float, resume_within_s: float) -> list[str]:
        found: list[str] = []
        if self.errors_before_cut:
            found.append(f"{self.errors_before_cut} writes failed before the cut")
        if self.refused_after_s is None:
            found.append("no write failed while the primary was cut off from its majority")
        elif self.refused_after_s > within_s:
            found.append(
                f"writes were first refused {self.refused_after_s:.2f} s after the cut, not within {within_s:g} s"
            )
        if self.acked_after_loss:
            found.append(f"{self.acked_after_loss} writes were acknowledged after quorum was lost")
        if self.resumed_after_s is None:
            found.append("no write was acknowledged again after the heal")
        elif self.resumed_after_s > resume_within_s:
            found.append(
                f"writes resumed {self.resumed_after_s:.1f} s after the heal, not within {resume_within_s:g} s"
            )
        return found


def judge_loss(writes: Sequence[Write], *, cut_at: float, healed_at: float) -> LossVerdict:
    """The verdict of ``writes`` around a cut at ``cut_at`` healed at ``healed_at``."""
    before = [w for w in writes if w.end < cut_at and not w.ok]
    refused = next((w for w in writes if not w.ok and w.end >= cut_at), None)
    acked_after = (
        0 if refused is None else sum(1 for w in writes if w.ok and w.start >= refused.end and w.end < healed_at)
    )
    resumed = next((w for w in writes if w.ok and w.start >= healed_at), None)
    return LossVerdict(
        refused_after_s=None if refused is None else refused.end - cut_at,
        acked_after_loss=acked_after,
        resumed_after_s=None if resumed is None else resumed.end - healed_at,
        errors_before_cut=len(before),
    )


def judge_held(writes: Sequence[Write], *, cut_at: float, healed_at: float) -> list[str]:
    """A primary that keeps quorum (a tie-breaker breaks the tie): no write fails, and writes
    go on while its diskful peer is gone."""
    failed = [w for w in writes if not w.ok]
    during = [w for w in writes if w.ok and cut_at <= w.start and w.end < healed_at]
    found = [f"{len(failed)} writes failed (first at {failed[0].end - cut_at:+.2f} s from the cut)"] if failed else []
    if not during:
        found.append("no write was acknowledged while the diskful peer was cut off")
    return found
