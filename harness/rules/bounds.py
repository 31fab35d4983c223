"""Pass / fail / inconclusive, with a one-line reason, for every measured cell.

Rules are pure functions of numbers, so they are easy to test exhaustively:

* absolute bounds from the inventory (minimum MiB/s, minimum IOPS, maximum p99 latency),
  chosen per workload id with shell-style globs (``randwrite-4k-*``);
* ratios between cells of one run (multi-AZ vs single-AZ, replicated vs disconnected);
* the synchronous-replication latency model: at queue depth ``qd`` a protocol C write costs
  one local write plus one round trip, so IOPS ≈ qd / (RTT + local write latency);
* a rate cap band: large sequential writes through a ``rate`` limit land in
  ``[low, high] × cap``.

A validity problem (DRBD left Connected/UpToDate, a resync ran, the fault was not in
effect) is *inconclusive*, never a pass and never a regression.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from harness.redact import redact

__all__ = [
    "RATE_CAP_BAND_MAX",
    "AbsoluteBounds",
    "BoundResult",
    "absolute_bounds_for",
    "check_absolute",
    "check_band",
    "check_latency_model",
    "check_rate_cap",
    "check_ratio",
    "combine",
    "expected_sync_iops",
    "inconclusive",
]

Verdict = Literal["pass", "fail", "inconclusive"]
_RANK: dict[Verdict, int] = {"pass": 0, "inconclusive": 1, "fail": 2}


@dataclass(frozen=True)
class BoundResult:
    verdict: Verdict
    reason: str

    def __post_init__(self) -> None:
        # Reasons quote what nodes and fio said; redacted here, where every verdict is made,
        # so samples, reports, baselines and JUnit all carry the same clean text.
        object.__setattr__(self, "reason", redact(self.reason))

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"


def inconclusive(reason: str) -> BoundResult:
    return BoundResult("inconclusive", reason)


@dataclass(frozen=True)
class AbsoluteBounds:
    min_mib_s: float | None = None
    min_iops: float | None = None
    max_p99_ms: float | None = None


def _pick(globs: Mapping[str, float], workload_id: str) -> float | None:
    """The value of the most specific (longest) glob matching ``workload_id``."""
    matches = [(len(pattern), value) for pattern, value in globs.items() if fnmatch.fnmatchcase(workload_id, pattern)]
    return max(matches)[1] if matches else None


def absolute_bounds_for(
    workload_id: str,
    min_mib_s: Mapping[str, float],
    min_iops: Mapping[str, float],
    max_p99_ms: Mapping[str, float],
) -> AbsoluteBounds:
    return AbsoluteBounds(_pick(min_mib_s, workload_id), _pick(min_iops, workload_id), _pick(max_p99_ms, workload_id))


def check_absolute(bounds: AbsoluteBounds, *, mib_s: float, iops: float, p99_ms: float | None) -> BoundResult:
    """Each configured bound must hold; the reason names every violated one with figures."""
    failed: list[str] = []
    checked: list[str] = []
    if bounds.min_mib_s is not None:
        checked.append(f"{mib_s:.1f} MiB/s ≥ {bounds.min_mib_s:g}")
        if not mib_s >= bounds.min_mib_s:
            failed.append(f"{mib_s:.1f} MiB/s < min {bounds.min_mib_s:g} MiB/s")
    if bounds.min_iops is not None:
        checked.append(f"{iops:.0f} IOPS ≥ {bounds.min_iops:g}")
        if not iops >= bounds.min_iops:
            failed.append(f"{iops:.0f} IOPS < min {bounds.min_iops:g} IOPS")
    if bounds.max_p99_ms is not None:
        if p99_ms is None or math.isnan(p99_ms):
            return inconclusive("p99 latency bound set but fio reported no p99")
        checked.append(f"p99 {p99_ms:.2f} ms ≤ {bounds.max_p99_ms:g}")
        if not p99_ms <= bounds.max_p99_ms:
            failed.append(f"p99 {p99_ms:.2f} ms > max {bounds.max_p99_ms:g} ms")
    if failed:
        return BoundResult("fail", "; ".join(failed))
    return BoundResult("pass", "; ".join(checked) if checked else "no absolute bounds configured")


def check_ratio(label: str, numerator: float, denominator: float, *, minimum: float) -> BoundResult:
    """``numerator / denominator ≥ minimum`` (e.g. multi-AZ MiB/s ≥ 0.3 × single-AZ MiB/s)."""
    if not denominator > 0 or math.isnan(numerator):
        return inconclusive(f"{label}: reference value missing or zero")
    ratio = numerator / denominator
    if ratio >= minimum:
        return BoundResult("pass", f"{label} ratio {ratio:.2f} ≥ {minimum:g}")
    return BoundResult("fail", f"{label} ratio {ratio:.2f} < {minimum:g}")


def expected_sync_iops(rtt_ms: float, local_write_ms: float, queue_depth: int = 1) -> float:
    """Synchronous replication (protocol C): each write waits for one RTT plus the slower of
    the two disk writes, so ``queue_depth`` writes in flight give qd / (RTT + write)."""
    if rtt_ms < 0 or local_write_ms < 0 or queue_depth < 1:
        raise ValueError("rtt and local write latency must be >= 0 and queue depth >= 1")
    per_write_ms = rtt_ms + local_write_ms
    return math.inf if per_write_ms == 0 else queue_depth * 1000.0 / per_write_ms


def check_latency_model(
    measured_iops: float,
    *,
    median_latency_ms: float | None,
    rtt_ms: float,
    local_write_ms: float,
    queue_depth: int,
    tolerance: float,
    floor: float = 0.5,
) -> BoundResult:
    """The synchronous-replication model, judged two ways:

    * the *typical* write: ``queue_depth / median completion latency`` within ``±tolerance``
      of :func:`expected_sync_iops` — robust to a few slow writes from a busy host;
    * the *mean*: measured IOPS may not beat the model by more than ``tolerance`` (physics:
      no write completes faster than a round trip plus a disk write) and must reach ``floor``
      of it (a tail this heavy means something else than the network is in the way).
    """
    expected = expected_sync_iops(rtt_ms, local_write_ms, queue_depth)
    if not math.isfinite(expected) or expected <= 0:
        return inconclusive("latency model undefined (zero RTT and write latency)")
    if median_latency_ms is None or median_latency_ms <= 0:
        return inconclusive("latency model needs the median completion latency, fio reported none")
    typical = queue_depth * 1000.0 / median_latency_ms
    typical_ratio = typical / expected
    mean_ratio = measured_iops / expected
    text = (
        f"model {expected:.0f} IOPS = qd {queue_depth} / (RTT {rtt_ms:.2f} + write {local_write_ms:.2f} ms); "
        f"median write {median_latency_ms:.2f} ms → {typical:.0f} IOPS (×{typical_ratio:.2f}); "
        f"mean {measured_iops:.0f} IOPS (×{mean_ratio:.2f})"
    )
    failed = []
    if abs(typical_ratio - 1) > tolerance:
        failed.append(f"median outside ±{tolerance:.0%}")
    if mean_ratio > 1 + tolerance:
        failed.append(f"mean beats the model by more than {tolerance:.0%}")
    if mean_ratio < floor:
        failed.append(f"mean below {floor:.0%} of the model")
    if failed:
        return BoundResult("fail", f"{text}: {', '.join(failed)}")
    return BoundResult("pass", text)


#: The highest ``high`` of a rate cap band: tbf lets a burst of rate/HZ through at once, so a
#: short window may exceed the cap a little; 1.5 x the cap is not a cap any more.
RATE_CAP_BAND_MAX = 1.5


def check_band(band: tuple[float, float]) -> tuple[float, float]:
    """``band`` if it can both pass and fail: ``0 < low <= 1`` (payload cannot beat the cap)
    and ``low <= high <= 1.5``; ValueError saying so otherwise (the inventory's
    ``rate_cap_band``)."""
    low, high = band
    if low > high:
        raise ValueError(f"[{low:g}, {high:g}] is reversed; write [low, high] with low ≤ high")
    if not (0 < low <= 1 and high <= RATE_CAP_BAND_MAX):
        raise ValueError(
            f"[{low:g}, {high:g}] cannot both pass and fail; the band is a fraction of the cap: "
            f"0 < low ≤ 1 and low ≤ high ≤ {RATE_CAP_BAND_MAX:g}"
        )
    return band


def check_rate_cap(measured_bits: float, cap_bits: float, band: tuple[float, float]) -> BoundResult:
    """Throughput through a rate limit lands in ``band`` × cap (payload < wire rate)."""
    low, high = band
    if cap_bits <= 0:
        return inconclusive("no rate cap configured")
    ratio = measured_bits / cap_bits
    text = f"{measured_bits / 1e6:.1f} Mbit/s = {ratio:.0%} of the {cap_bits / 1e6:g} Mbit/s cap"
    if low <= ratio <= high:
        return BoundResult("pass", f"{text} (band {low:.0%}–{high:.0%})")
    return BoundResult("fail", f"{text}, outside {low:.0%}–{high:.0%}")


def combine(results: Iterable[BoundResult]) -> BoundResult:
    """The worst verdict wins (fail > inconclusive > pass); reasons of that verdict are kept."""
    items = list(results)
    if not items:
        return BoundResult("pass", "no bounds")
    worst = max(items, key=lambda r: _RANK[r.verdict]).verdict
    reasons = [r.reason for r in items if r.verdict == worst]
    return BoundResult(worst, "; ".join(reasons))
