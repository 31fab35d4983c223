"""Bounds between cells of one run: cross-AZ vs same-AZ, replicated vs disconnected.

Computed on the controller after all cells ran (cells run on different xdist workers),
from the medians of the samples.
"""

from __future__ import annotations

from collections.abc import Iterable

from harness.inventory.models import ThresholdSpec
from harness.report.aggregate import Cell, aggregate_samples
from harness.rules.bounds import BoundResult, check_ratio
from harness.runfiles.samples import Sample

__all__ = ["relative_verdicts"]


def _median(cell: Cell, metric: str) -> float | None:
    stat = cell.stats.get(metric)
    return None if stat is None else stat.median


def _pick(group: list[Cell], placement: str, mode: str) -> Cell | None:
    return next((c for c in group if c.metadata.get("placement") == placement and c.metadata.get("mode") == mode), None)


def relative_verdicts(samples: Iterable[Sample], thresholds: ThresholdSpec) -> list[tuple[str, BoundResult]]:
    cells = aggregate_samples(samples)
    out: list[tuple[str, BoundResult]] = []
    # cross-AZ is compared with same-AZ within one replication product (DRBD with DRBD)
    by_key: dict[tuple[str, str, str, str], list[Cell]] = {}
    for cell in cells:
        meta = cell.metadata
        key = (str(meta.get("scenario")), str(meta.get("workload")), str(meta.get("impairment")))
        by_key.setdefault((*key, str(meta.get("replication") or "drbd")), []).append(cell)
    for (scenario, workload, impairment, product), group in sorted(by_key.items()):
        same = _pick(group, "same-az", "replicated")
        cross = _pick(group, "cross-az", "replicated")
        where = f"{scenario} {workload} [{impairment}]" + ("" if product == "drbd" else f" {product}")
        if thresholds.multi_az_vs_single_az is not None and same and cross:
            a, b = _median(cross, "bw"), _median(same, "bw")
            if a is not None and b is not None:
                limit = thresholds.multi_az_vs_single_az
                out.append((f"{where} cross-AZ vs same-AZ MiB/s", check_ratio("cross/same", a, b, minimum=limit)))
        if thresholds.replicated_vs_local is not None:
            # each pair against its own primary's disk (DRBD disconnected)
            for repl in (c for c in group if c.metadata.get("mode") == "replicated"):
                local = next(
                    (c for c in group if c.metadata.get("mode") == "disconnected" and c.pair == repl.pair), None
                )
                a = _median(repl, "bw")
                b = _median(local, "bw") if local else None
                if a is not None and b is not None:
                    limit = thresholds.replicated_vs_local
                    label = f"{where} {repl.pair} replicated vs local MiB/s"
                    out.append((label, check_ratio("replicated/local", a, b, minimum=limit)))
    return out
