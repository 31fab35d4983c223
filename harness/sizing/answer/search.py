"""The pre-sales search: which instance types sustain a required rate, smallest first.

A :class:`Requirement` is a rate the customer needs (``40MB/s``, ``3000iops``: its text form is
:func:`parse_requirement`); :func:`search` predicts the scenario on every catalog instance type
and sorts the ones that meet it from those that do not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from harness.errors import ConfigError
from harness.sizing.catalog.loader import Catalog
from harness.sizing.model.predict import predict
from harness.sizing.model.prediction import Prediction
from harness.sizing.scenario.notation import positive_number
from harness.sizing.scenario.question import Scenario
from harness.units import UnitError, parse_rate_bits

__all__ = ["Requirement", "SearchHit", "parse_requirement", "search"]


@dataclass(frozen=True)
class Requirement:
    """A throughput the customer needs: bytes per second or I/O operations per second."""

    kind: Literal["bw", "iops"]
    value: float
    text: str

    def met_by(self, prediction: Prediction) -> bool:
        """True when the rate holds for the whole run (the lowest phase meets it)."""
        return self.margin(prediction) >= 0

    def margin(self, prediction: Prediction) -> float:
        """Sustained rate over the requirement minus one (0.1 = 10 % to spare)."""
        have = prediction.sustained_bw if self.kind == "bw" else prediction.sustained_iops
        return have / self.value - 1.0


def parse_requirement(text: str, option: str = "--require") -> Requirement:
    """``40MB/s``, ``100MiB/s``, ``1gbit`` (a rate) or ``3000iops``; errors name ``option``."""
    raw = text.strip()
    if raw.lower().endswith("iops"):
        return Requirement("iops", positive_number(raw[:-4].strip().replace(",", ""), f"{option} IOPS"), raw)
    try:
        bits = parse_rate_bits(raw)
    except UnitError as exc:
        raise ConfigError(f"{option} {text!r}: {exc} (or N iops)") from None
    if bits <= 0:
        raise ConfigError(f"{option} {text!r}: must be positive")
    return Requirement("bw", bits / 8, raw)


@dataclass(frozen=True)
class SearchHit:
    """One instance type evaluated by :func:`search`."""

    instance_type: str
    vcpu: int
    memory_gib: float
    prediction: Prediction


def search(
    catalog: Catalog, scenario_for: Callable[[str], Scenario], requirement: Requirement, cloud: str | None = None
) -> tuple[list[SearchHit], list[SearchHit]]:
    """Instance types whose prediction meets ``requirement`` and those that do not.

    ``scenario_for(name)`` builds the scenario for candidate ``name`` (so the caller decides
    whether the peer follows the candidate).  Hits are ordered by the pair's monthly list price
    when the catalog prices every one of them, else smallest first (vCPU, memory, name); misses
    smallest first.
    Candidates the scenario does not fit (e.g. an instance-store volume on a type without one)
    are left out of both lists, as are types of another ``cloud`` when one is given.
    """
    hits: list[SearchHit] = []
    misses: list[SearchHit] = []
    for name, instance in catalog.instance_types.items():
        if cloud is not None and instance.cloud != cloud:
            continue
        try:
            prediction = predict(scenario_for(name), catalog)
        except ConfigError:
            continue
        hit = SearchHit(name, instance.vcpu, instance.memory_gib, prediction)
        (hits if requirement.met_by(prediction) else misses).append(hit)
    return sorted(hits, key=_order(hits)), sorted(misses, key=_size_order)


def _size_order(hit: SearchHit) -> tuple[float, int, float, str]:
    return (0.0, hit.vcpu, hit.memory_gib, hit.instance_type)


def _cost_order(hit: SearchHit) -> tuple[float, int, float, str]:
    cost = hit.prediction.cost
    return (cost.pair_month if cost is not None else float("inf"), hit.vcpu, hit.memory_gib, hit.instance_type)


def _order(hits: list[SearchHit]) -> Callable[[SearchHit], tuple[float, int, float, str]]:
    """Cheapest pair first when every hit has a price; otherwise smallest first."""
    return _cost_order if hits and all(hit.prediction.cost is not None for hit in hits) else _size_order
