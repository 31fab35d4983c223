"""The durability map: crash trials' outcomes per product × mode × placement × fault, as a
Markdown table, as samples the results database stores, and compared with an earlier map so a
gate fails when a change made it worse.

A cell of the map counts its trials, the acknowledged writes they made, the acknowledged
writes they lost (torn blocks that lost one included), the most one trial lost, the largest
bound any of its trials had, the trials that lost more than their own bound, and the longest
recovery.  A map is kept as one :class:`~harness.runfiles.samples.Sample` per cell and metric
(scenario ``durability_map``; the cell's product, mode, placement and fault fill the identity
keys pair, mode, workload and impairment), so the results database's runs and samples tables
hold it with no schema of its own, and :func:`map_of_samples` reads it back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from tabulate import tabulate

from harness.durability.bounds import LossBound
from harness.durability.plan import Trial
from harness.runfiles.samples import METRICS, Sample

__all__ = [
    "MAP_FILE",
    "SCENARIO",
    "CellKey",
    "DurabilityMap",
    "MapCell",
    "TrialOutcome",
    "Worsening",
    "aggregate",
    "map_of_samples",
    "render_markdown",
    "samples_of_map",
    "worse_cells",
]

SCENARIO: Final = "durability_map"
#: the map's table in a run's directory
MAP_FILE: Final = "durability-map.md"
#: product, mode, placement, fault
CellKey = tuple[str, str, str, str]
_FIELDS: Final = (
    ("trials", "trials"),
    ("acked", "acked_writes"),
    ("lost", "lost_writes"),
    ("torn", "torn_writes"),
    ("max_lost", "max_lost"),
    ("bound", "loss_bound"),
    ("over_bound", "over_bound"),
    ("recovery_max_s", "recovery_max"),
)


@dataclass(frozen=True)
class TrialOutcome:
    """What one trial found after recovery."""

    trial: Trial
    acked: int
    lost: int  # acknowledged writes lost, torn blocks that lost one included
    torn: int
    bound: LossBound
    recovery_s: float

    @property
    def key(self) -> CellKey:
        t = self.trial
        return (t.product, t.protocol, t.placement, t.fault)


@dataclass(frozen=True)
class MapCell:
    trials: int = 0
    acked: int = 0
    lost: int = 0
    torn: int = 0
    max_lost: int = 0
    bound: int = 0
    over_bound: int = 0
    recovery_max_s: float = 0.0
    binding: str = ""

    def add(self, o: TrialOutcome) -> MapCell:
        return MapCell(
            trials=self.trials + 1,
            acked=self.acked + o.acked,
            lost=self.lost + o.lost,
            torn=self.torn + o.torn,
            max_lost=max(self.max_lost, o.lost),
            bound=max(self.bound, o.bound.writes),
            over_bound=self.over_bound + (1 if o.lost > o.bound.writes else 0),
            recovery_max_s=max(self.recovery_max_s, o.recovery_s),
            binding=o.bound.binding if o.bound.writes >= self.bound else self.binding,
        )

    @property
    def loss_rate(self) -> float:
        return self.lost / self.acked if self.acked else 0.0


@dataclass(frozen=True)
class DurabilityMap:
    cells: Mapping[CellKey, MapCell] = field(default_factory=dict)


def aggregate(outcomes: Iterable[TrialOutcome]) -> DurabilityMap:
    cells: dict[CellKey, MapCell] = {}
    for outcome in outcomes:
        cells[outcome.key] = cells.get(outcome.key, MapCell()).add(outcome)
    return DurabilityMap(dict(sorted(cells.items())))


def render_markdown(dmap: DurabilityMap) -> str:
    """The map as one Markdown table, a row per cell."""
    headers = [
        "product",
        "mode",
        "placement",
        "fault",
        "trials",
        "acked",
        "lost",
        "torn",
        "max lost / trial",
        "bound",
        "over bound",
        "longest recovery (s)",
    ]
    rows = [
        [
            *key,
            c.trials,
            c.acked,
            c.lost,
            c.torn,
            c.max_lost,
            f"{c.bound} ({c.binding})" if c.binding else c.bound,
            c.over_bound,
            f"{c.recovery_max_s:.1f}",
        ]
        for key, c in dmap.cells.items()
    ]
    return tabulate(rows, headers=headers, tablefmt="github")


def samples_of_map(dmap: DurabilityMap, meta: Mapping[str, Any]) -> list[Sample]:
    """One sample per cell and metric; ``meta`` adds the run's own keys (run_id, inventory...)."""
    out: list[Sample] = []
    for (product, mode, placement, fault), cell in dmap.cells.items():
        identity = {"scenario": SCENARIO, "pair": product, "mode": mode, "workload": placement, "impairment": fault}
        extra = {"product": product, "protocol": mode, "placement": placement, "fault": fault, "binding": cell.binding}
        metadata = {**meta, **identity, **extra}
        for attr, metric in _FIELDS:
            out.append(Sample(metric, float(getattr(cell, attr)), METRICS[metric], metadata))
    return out


def map_of_samples(samples: Iterable[Sample]) -> DurabilityMap:
    """The map :func:`samples_of_map` stored (other scenarios' samples are passed over)."""
    values: dict[CellKey, dict[str, Any]] = {}
    for s in samples:
        if s.metadata.get("scenario") != SCENARIO:
            continue
        m = s.metadata
        key = (str(m["pair"]), str(m["mode"]), str(m["workload"]), str(m["impairment"]))
        values.setdefault(key, {"binding": str(m.get("binding", ""))})[s.metric] = s.value
    cells = {}
    for key, got in values.items():
        numbers = {attr: got.get(metric, 0.0) for attr, metric in _FIELDS}
        ints = {attr: int(v) for attr, v in numbers.items() if attr != "recovery_max_s"}
        cells[key] = MapCell(**ints, recovery_max_s=float(numbers["recovery_max_s"]), binding=got["binding"])
    return DurabilityMap(dict(sorted(cells.items())))


@dataclass(frozen=True)
class Worsening:
    key: CellKey
    reason: str


def _cell_worse(before: MapCell, after: MapCell, recovery_factor: float, rate_slack: float) -> list[str]:
    reasons = []
    if after.over_bound and not before.over_bound:
        reasons.append(f"{after.over_bound} trials lost more than their bound (before: none)")
    # a mode that may lose nothing (bound 0) counts any loss over its bound, above
    if after.loss_rate > before.loss_rate + rate_slack:
        reasons.append(f"loss rate {after.loss_rate:.2%} of acknowledged writes (before: {before.loss_rate:.2%})")
    if after.torn > 0 and before.torn == 0:
        reasons.append(f"{after.torn} torn blocks (before: none)")
    if before.recovery_max_s > 0 and after.recovery_max_s > before.recovery_max_s * recovery_factor:
        reasons.append(f"longest recovery {after.recovery_max_s:.1f} s (before: {before.recovery_max_s:.1f} s)")
    return reasons


def worse_cells(
    before: DurabilityMap, after: DurabilityMap, *, recovery_factor: float = 1.5, rate_slack: float = 0.01
) -> list[Worsening]:
    """The cells of ``after`` worse than in ``before``: trials over their bound where there were
    none (any loss, in a mode that may lose nothing), a higher share of acknowledged writes
    lost (beyond ``rate_slack``), torn blocks, a recovery more than ``recovery_factor`` times
    longer, or a cell no longer tried."""
    out: list[Worsening] = []
    for key, old in before.cells.items():
        new = after.cells.get(key)
        if new is None or new.trials == 0:
            out.append(Worsening(key, f"no trial any more (before: {old.trials})"))
            continue
        out.extend(Worsening(key, reason) for reason in _cell_worse(old, new, recovery_factor, rate_slack))
    return out
