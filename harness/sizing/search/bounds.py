"""Upper bounds on what a candidate can sustain, from the model's own limits, never above it.

The model's rate in every phase is the smallest of its limits' rates (and the latency bound's),
and a limit never allows more than its burst (or baseline) over its units per I/O; so the
smallest such maximum over *any* subset of a scenario's limits bounds the rate from above.
The limits split in two: a volume's own (``*.volume.*``), which scale with the stripe, and the
rest (instance, network, TCP, CPU), which depend on the instance, the volume type and the
protocol but not on the volume's size or provisioning.  The latency bound is at most
``n / per-I/O time`` with nothing on the wire, over the closed loop's saturation tolerance
(:data:`~harness.sizing.limits.closedloop.SATURATED`), which may round a rate up to capacity.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from harness.sizing.catalog.instance_types import InstanceType
from harness.sizing.catalog.loader import Catalog
from harness.sizing.limits.closedloop import SATURATED
from harness.sizing.limits.limit import Build, Limit, Node
from harness.sizing.limits.storage import add_volume_limits
from harness.sizing.model.assemble import collect
from harness.sizing.scenario.question import Scenario, SizedNode, VolumeSpec, Workload
from harness.sizing.volumes.rules import volume_performance

__all__ = ["SLACK", "pair_bound", "volume_bound"]

#: relative slack on every bound, so a rate computed in another order of rounding stays below it
SLACK = 1e-9


def _most(limits: Iterable[Limit]) -> float:
    """The smallest maximum rate (I/Os per second) of ``limits``; infinite for none."""
    return min(
        (max(limit.baseline, limit.burst or limit.baseline) / limit.units_per_io for limit in limits),
        default=math.inf,
    )


def pair_bound(example: Scenario, catalog: Catalog) -> float:
    """IOPS no candidate of ``example``'s instance, volume type and protocol exceeds, whatever
    its volume's size, provisioning or stripe (:func:`volume_bound` bounds those)."""
    build, bound, _, _ = collect(example, catalog)
    kept = [limit for limit in build.limits if ".volume." not in limit.key]
    latency = bound.latency.outstanding / (SATURATED * bound.latency.per_io(None))
    return min(_most(kept), latency) * (1 + SLACK)


def volume_bound(catalog: Catalog, spec: VolumeSpec, instance: InstanceType, workload: Workload) -> float:
    """IOPS one volume of ``spec`` allows the workload on the primary (times the stripe count
    for a stripe): its own IOPS and throughput limits at their burst."""
    volume = catalog.volume(spec.type)
    perf = volume_performance(spec.type, volume, spec, instance)
    node = Node(
        "primary",
        SizedNode("bound", spec),
        instance,
        perf,
        workload.write_fraction,
        workload.read_fraction,
        volume.network_attached,
    )
    build = Build(catalog)
    add_volume_limits(build, node, workload.bs, random=workload.rw.startswith("rand"))
    return _most(build.limits) * (1 + SLACK)
