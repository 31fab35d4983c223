"""What a pair costs per month at list prices: instances, volumes, and replication across zones.

Prices are catalog data (on-demand list price per hour of an instance; per GiB-month, per
provisioned IOPS-month and MiB/s-month above what a volume includes; per GB that crosses a
placement, charged on both sides), each with its region, source and date.  A month is 730 hours,
as the providers' calculators take it.  Replication traffic is priced per GB because how much a
pair writes in a month is the customer's figure, not the model's; the cost at the predicted rate
sustained all month is given as the ceiling.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.sizing.catalog.azure_disks import AzureTieredDisk, azure_tier
from harness.sizing.catalog.clouds import placement_for
from harness.sizing.catalog.loader import Catalog
from harness.sizing.catalog.volume_types import ProvisionedThroughput, ProvisionedVolume, VolumeType
from harness.sizing.scenario.question import Scenario, SizedNode

__all__ = ["HOURS_PER_MONTH", "PairCost", "pair_cost"]

HOURS_PER_MONTH = 730.0


@dataclass(frozen=True)
class PairCost:
    """Monthly list price of the pair (USD), and what replication adds per GB written."""

    instances_month: float
    volumes_month: float
    transfer_per_gb: float
    transfer_month_at_rate: float
    region: str

    @property
    def pair_month(self) -> float:
        """Instances and volumes of every node, without replication traffic."""
        return self.instances_month + self.volumes_month

    def as_dict(self) -> dict[str, float | str]:
        return {
            "pair_month": self.pair_month,
            "instances_month": self.instances_month,
            "volumes_month": self.volumes_month,
            "transfer_per_gb_written": self.transfer_per_gb,
            "transfer_month_at_predicted_rate": self.transfer_month_at_rate,
            "region": self.region,
        }


def _volume_month(volume: VolumeType, node: SizedNode) -> float | None:
    price = volume.price
    if price is None:
        return None
    spec = node.volume
    if isinstance(volume, AzureTieredDisk):
        return azure_tier(volume, spec.size_gib or 0.0).usd_month
    month = price.usd_per_gib_month * (spec.size_gib or 0.0)
    if isinstance(volume, ProvisionedVolume):
        iops = spec.iops if spec.iops is not None else (volume.default_iops or 0.0)
        month += price.usd_per_iops_month * max(0.0, iops - price.included_iops)
        if isinstance(volume.throughput, ProvisionedThroughput):
            mib_s = spec.mib_s if spec.mib_s is not None else volume.throughput.default_mib_s
            month += price.usd_per_mib_s_month * max(0.0, mib_s - price.included_mib_s)
    return month


def pair_cost(scenario: Scenario, catalog: Catalog, written_bytes_s: float) -> PairCost | None:
    """The pair's monthly cost, or ``None`` when the catalog lacks a price it needs."""
    nodes = [scenario.primary]
    peer = scenario.peer_node
    if peer is not None:
        nodes += [peer] * scenario.peers
    instances = 0.0
    volumes = 0.0
    regions: set[str] = set()
    for node in nodes:
        instance = catalog.instance(node.instance_type)
        if instance.price is None:
            return None
        instances += instance.price.usd_per_hour * HOURS_PER_MONTH
        regions.add(instance.price.region)
        volume_month = _volume_month(catalog.volume(node.volume.type), node)
        if volume_month is None:
            return None
        volumes += volume_month
    per_gb = 0.0
    if peer is not None and scenario.rtt_s is None:
        cloud = catalog.instance(scenario.primary.instance_type).cloud
        placement = catalog.placement(placement_for(scenario.placement, cloud))
        if placement.transfer_usd_per_gb is None:
            return None
        per_gb = 2 * placement.transfer_usd_per_gb * scenario.peers  # charged out of one zone and into the other
    at_rate = per_gb * written_bytes_s * HOURS_PER_MONTH * 3600 / 1e9
    return PairCost(instances, volumes, per_gb, at_rate, ", ".join(sorted(regions)))
