"""The one owner of "does this configuration meet the requirement", and what it costs.

:func:`evaluate` predicts a :class:`~harness.sizing.search.space.Candidate` with the sizing
model and checks every part of the requirement on the lowest phase of the run: the rate with
its headroom, the mean and p99 write latency at the workload's queue depth, protocol A's loss
against the RPO.  :func:`candidate_cost` is the monthly price both the search's ordering and
this verdict use (instances, volumes, and the replication traffic at the required rate).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.errors import ConfigError
from harness.sizing.catalog.loader import Catalog
from harness.sizing.model.cost import HOURS_PER_MONTH, transfer_per_gb, volume_month
from harness.sizing.model.predict import predict
from harness.sizing.model.prediction import Prediction
from harness.sizing.scenario.question import Scenario, SizedNode
from harness.sizing.search.requirement import SearchRequirement
from harness.sizing.search.space import Candidate
from harness.sizing.search.tail import MeasuredTail, p99_write_latency

__all__ = ["Cost", "Verdict", "candidate_cost", "evaluate", "scenario", "transfer_month"]

NODES = 2


@dataclass(frozen=True)
class Cost:
    """Monthly list price (USD) of the pair, split as the customer is billed."""

    instances: float
    volumes: float
    transfer: float

    @property
    def total(self) -> float:
        return self.instances + self.volumes + self.transfer


@dataclass(frozen=True)
class Verdict:
    """A candidate checked: whether it meets the requirement, by how much, and why."""

    candidate: Candidate
    meets: bool
    cost: Cost
    margin: float
    mean_latency_s: float
    p99_latency_s: float
    p99_source: str
    prediction: Prediction
    lag_s: float | None
    failed: tuple[str, ...]


def scenario(candidate: Candidate, requirement: SearchRequirement) -> Scenario:
    """The pair the model predicts for ``candidate``."""
    node = SizedNode(candidate.instance_type, candidate.volume)
    placement = requirement.placement
    return Scenario(
        primary=node,
        workload=requirement.workload,
        placement=placement.name if placement.rtt_s is None else "custom",
        rtt_s=placement.rtt_s,
        protocol=candidate.protocol,
        duration_s=requirement.duration_s,
    )


def transfer_month(catalog: Catalog, requirement: SearchRequirement, example: Scenario) -> float:
    """What the replication traffic of the required rate costs a month (0 at a bare RTT)."""
    per_gb = transfer_per_gb(example, catalog) or 0.0
    return per_gb * requirement.written_bytes_s * HOURS_PER_MONTH * 3600 / 1e9


def instance_month(catalog: Catalog, name: str) -> float:
    price = catalog.instance(name).price
    if price is None:
        raise ConfigError(f"instance type {name!r} has no price in the catalog")
    return price.usd_per_hour * HOURS_PER_MONTH


def one_volume_month(catalog: Catalog, candidate: Candidate) -> float:
    """The price of one volume of the candidate's stripe."""
    spec = candidate.volume
    single = SizedNode(candidate.instance_type, type(spec)(spec.type, spec.size_gib, spec.iops, spec.mib_s))
    month = volume_month(catalog.volume(spec.type), single)
    if month is None:
        raise ConfigError(f"volume type {spec.type!r} has no price in the catalog")
    return month


def candidate_cost(instance: float, volume: float, stripes: int, transfer: float) -> Cost:
    """The pair's price from one instance's and one volume's month: the search computes the
    same products in the same order over arrays, so both agree to the last bit."""
    return Cost(instance * NODES, volume * stripes * NODES, transfer)


def evaluate(
    candidate: Candidate, requirement: SearchRequirement, catalog: Catalog, tail: MeasuredTail | None = None
) -> Verdict:
    """Predict ``candidate`` and check every part of ``requirement`` on the run's lowest phase."""
    example = scenario(candidate, requirement)
    prediction = predict(example, catalog)
    cost = candidate_cost(
        instance_month(catalog, candidate.instance_type),
        one_volume_month(catalog, candidate),
        candidate.volume.stripes,
        transfer_month(catalog, requirement, example),
    )
    rate = prediction.sustained_iops if requirement.rate.kind == "iops" else prediction.sustained_bw
    margin = rate / requirement.rate.value - 1.0
    mean = prediction.phases[-1].latency_s
    p99, source = p99_write_latency(prediction, tail)
    failed = []
    if rate < requirement.need:
        failed.append("rate")
    if requirement.mean_latency_s is not None and mean > requirement.mean_latency_s:
        failed.append("mean latency")
    if requirement.p99_latency_s is not None and p99 > requirement.p99_latency_s:
        failed.append("p99 latency")
    lag = prediction.lag_s
    if candidate.protocol == "A" and requirement.rpo_s is not None and (lag is None or lag > requirement.rpo_s):
        failed.append("rpo")
    return Verdict(candidate, not failed, cost, margin, mean, p99, source, prediction, lag, tuple(failed))
