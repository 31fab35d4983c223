"""What a pair costs per month at list prices: instances, volumes, and replication across zones or regions.

Prices are catalog data (on-demand list price per hour of an instance; per GiB-month, per
provisioned IOPS-month and MiB/s-month above what a volume includes; per GB that crosses a
placement, on each side the provider bills), each with its region, source and date.  A month is 730 hours,
as the providers' calculators take it.  Replication traffic is priced per GB because how much a
pair writes in a month is the customer's figure, not the model's; the cost at the predicted rate
sustained all month is given as the ceiling.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.sizing.catalog.azure_disks import AzureTieredDisk, azure_tier
from harness.sizing.catalog.loader import Catalog
from harness.sizing.catalog.volume_types import ProvisionedThroughput, ProvisionedVolume, VolumeType
from harness.sizing.scenario.question import Scenario, SizedNode

__all__ = ["HOURS_PER_MONTH", "PairCost", "pair_cost", "transfer_per_gb", "unpriced_transfer", "volume_month"]

HOURS_PER_MONTH = 730.0


@dataclass(frozen=True)
class PairCost:
    """Monthly list price of the pair (USD), and what replication adds per GB written;
    ``nodes`` is how many nodes the price covers (one without replication, 1 + peers with);
    ``unpriced`` says what no price covers and why, a clause each: replication transfer to a
    peer at a bare round-trip time, which says how far it is but not whether the traffic crosses
    a zone or a region, or to a region pair whose price no stored copy states; on-demand bursting
    (empty when everything is priced)."""

    instances_month: float
    volumes_month: float
    transfer_per_gb: float
    transfer_month_at_rate: float
    region: str
    nodes: int = 2
    unpriced: tuple[str, ...] = ()

    @property
    def transfer_priced(self) -> bool:
        """Whether every GB a peer holding a replica receives is priced."""
        return not any(reason.startswith("replication transfer") for reason in self.unpriced)

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
            "transfer_priced": self.transfer_priced,
            "unpriced": "; ".join(self.unpriced),
        }


def volume_month(volume: VolumeType, node: SizedNode) -> float | None:
    """The monthly list price of ``node``'s volume (every volume of a RAID0 stripe), or
    ``None`` when the catalog has no price for its type."""
    one = _one_volume_month(volume, node)
    return None if one is None else one * node.volume.stripes


def _one_volume_month(volume: VolumeType, node: SizedNode) -> float | None:
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


def transfer_per_gb(scenario: Scenario, catalog: Catalog) -> float:
    """What a GB written costs in traffic: each peer holding a replica receives it, and a
    placement's price is charged on each side it bills (both zones on AWS, the sender's on GCP
    and across regions); a tie-breaker receives no data, and a peer :func:`unpriced_transfer`
    names adds nothing it could price."""
    cloud = catalog.instance(scenario.primary.instance_type).cloud
    per_gb = 0.0
    for slot in scenario.data_peers:
        if slot.rtt_s is not None:
            continue
        placement = catalog.placement_on(slot.placement, cloud)
        if placement.transfer_usd_per_gb is not None:
            per_gb += placement.transfer_billed_sides * placement.transfer_usd_per_gb
    return per_gb


def unpriced_transfer(scenario: Scenario, catalog: Catalog) -> tuple[str, ...]:
    """The replication transfer no price covers, each a clause saying why (empty when all is priced)."""
    cloud = catalog.instance(scenario.primary.instance_type).cloud
    reasons: list[str] = []
    for slot in scenario.data_peers:
        if slot.rtt_s is not None:
            reasons.append(
                f"replication transfer to the peer at rtt={slot.rtt_s * 1000:g}ms is left out: a round-trip time "
                "names no region or zone, which the provider prices differently (name the placement, e.g. "
                "cross-az or region:us-east-1/us-west-2, to price it)"
            )
        elif catalog.placement_on(slot.placement, cloud).transfer_usd_per_gb is None:
            reasons.append(
                f"replication transfer to the peer at {slot.placement} is left out: "
                "no stored copy states the price of transfer there"
            )
    return tuple(dict.fromkeys(reasons))


def pair_cost(scenario: Scenario, catalog: Catalog, written_bytes_s: float) -> PairCost | None:
    """The pair's monthly cost, or ``None`` when the catalog lacks a price it needs: an instance
    for every node, a volume for every node that holds a replica (not for a tie-breaker)."""
    peer = scenario.peer_node
    nodes = [(scenario.primary, True)]
    if peer is not None:
        nodes += [(peer, not slot.diskless) for slot in scenario.peer_slots]
    instances = 0.0
    volumes = 0.0
    regions: set[str] = set()
    for node, has_disk in nodes:
        instance = catalog.instance(node.instance_type)
        if instance.price is None:
            return None
        instances += instance.price.usd_per_hour * HOURS_PER_MONTH
        regions.add(instance.price.region)
        month = volume_month(catalog.volume(node.volume.type), node) if has_disk else 0.0
        if month is None:
            return None
        volumes += month
    per_gb = transfer_per_gb(scenario, catalog)
    at_rate = per_gb * written_bytes_s * HOURS_PER_MONTH * 3600 / 1e9
    unpriced = unpriced_transfer(scenario, catalog)
    if any(node.volume.on_demand_burst for node, has_disk in nodes if has_disk):
        unpriced += (
            "on-demand bursting (the disks' hourly enablement fee and their burst transactions, counted in the "
            "notes) is left out: no stored copy states either price",
        )
    return PairCost(instances, volumes, per_gb, at_rate, ", ".join(sorted(regions)), len(nodes), unpriced)
