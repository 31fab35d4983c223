"""A failing trial reduced to a minimal failing case: fewest writes, shortest time, same seed.

A synchronous mode that loses an acknowledged write fails its trial; to hand a person the
smallest reproduction, the trial is replayed through a predicate (``fails(case)``: run the
case, True if it still loses an acknowledged write) while the case shrinks:

1. the writes, by delta debugging (Zeller's ddmin): drop chunks of the write sequence, halving
   the chunk size whenever no chunk can go, until no single write can be dropped (1-minimal);
2. the time, by bisection: the earliest crash moment (share of the writes acknowledged) at
   which the smaller case still fails, to a given resolution.

Every predicate call is cached by case, so a replay is never run twice for the same case; the
seed is carried unchanged, so the minimal case reruns with everything it did not shrink.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

__all__ = ["Case", "MinimalCase", "ddmin", "minimize"]


@dataclass(frozen=True)
class Case:
    """A replayable trial: its seed, the writes it issues (sequence numbers), its crash moment."""

    seed: int
    writes: tuple[int, ...]
    crash_at: float


@dataclass(frozen=True)
class MinimalCase:
    case: Case
    replays: int  # predicate runs it took
    history: tuple[Case, ...] = field(default=(), repr=False)  # each smaller failing case found


class _Cached:
    def __init__(self, fails: Callable[[Case], bool]) -> None:
        self.fails = fails
        self.seen: dict[Case, bool] = {}
        self.found: list[Case] = []

    def __call__(self, case: Case) -> bool:
        if case not in self.seen:
            self.seen[case] = self.fails(case)
            if self.seen[case]:
                self.found.append(case)
        return self.seen[case]


def _chunks(items: Sequence[int], n: int) -> list[tuple[int, ...]]:
    size, extra = divmod(len(items), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(tuple(items[start:end]))
        start = end
    return out


def ddmin(items: Sequence[int], fails: Callable[[tuple[int, ...]], bool]) -> tuple[int, ...]:
    """A 1-minimal failing subsequence of ``items`` (which must fail): removing any one item of
    the result makes it pass."""
    current = tuple(items)
    n = 2
    while len(current) >= 2:
        chunks = _chunks(current, min(n, len(current)))
        reduced = False
        for index, chunk in enumerate(chunks):
            if fails(chunk):  # one chunk alone fails
                current, n, reduced = chunk, 2, True
                break
            rest = tuple(x for j, c in enumerate(chunks) if j != index for x in c)
            if fails(rest):  # the chunk can go
                current, n, reduced = rest, max(n - 1, 2), True
                break
        if not reduced:
            if n >= len(current):
                break
            n = min(n * 2, len(current))
    if len(current) == 1 and fails(()):
        return ()
    return current


def _earliest(case: Case, fails: _Cached, resolution: float) -> Case:
    """The earliest crash moment at which ``case`` fails, by bisection (``case`` fails)."""
    low, high = 0.0, case.crash_at
    if fails(Case(case.seed, case.writes, low)):
        return Case(case.seed, case.writes, low)
    while high - low > resolution:
        mid = (low + high) / 2
        if fails(Case(case.seed, case.writes, mid)):
            high = mid
        else:
            low = mid
    return Case(case.seed, case.writes, high)


def minimize(case: Case, fails: Callable[[Case], bool], *, resolution: float = 1 / 64) -> MinimalCase:
    """``case`` reduced to fewest writes, then earliest crash; ValueError if it does not fail."""
    cached = _Cached(fails)
    if not cached(case):
        raise ValueError(f"trial seed {case.seed}: the case does not fail, so there is nothing to minimize")
    writes = ddmin(case.writes, lambda w: cached(Case(case.seed, w, case.crash_at)))
    smallest = _earliest(Case(case.seed, writes, case.crash_at), cached, resolution)
    return MinimalCase(smallest, len(cached.seen), tuple(cached.found))
