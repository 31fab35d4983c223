"""An md-nbd mirror of one pair, its inputs taken from the catalog, and what it costs.

:mod:`~harness.sizing.model.mdnbd` is the mirror's arithmetic; this module feeds it from the same
catalog entries the DRBD model reads for the pair, so the two answers differ only in how they
replicate: the volume's sustained rate without replication (the DRBD model's own answer for one
node) and its low-depth write latency on both legs, the placement's RTT, the instance's network
baseline, the catalog's single-flow limit and the TCP send buffer.  The monthly price is the DRBD pair's (the same
instances and volumes), with the replication transfer at the mirror's rate.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from harness.sizing.catalog.loader import Catalog
from harness.sizing.model.assemble import sndbuf_bytes
from harness.sizing.model.cost import PairCost, pair_cost
from harness.sizing.model.mdnbd import MDADM_WRITE_BEHIND, MdNbd, MdNbdAnswer, Mode, predict_mdnbd
from harness.sizing.model.predict import predict
from harness.sizing.scenario.question import Scenario

__all__ = ["DEFAULT_WORKING_SET", "MdNbdPair", "mirror_for", "predict_pair"]

#: bytes written at random when nobody says (md's bitmap chunks they dirty); 100 GiB
DEFAULT_WORKING_SET = 100 * 2**30


@dataclass(frozen=True)
class MdNbdPair:
    """The mirror's inputs and answer for one pair, and the pair's monthly cost at that rate."""

    mirror: MdNbd
    answer: MdNbdAnswer
    cost: PairCost | None
    rtt_s: float


def _rtt_s(scenario: Scenario, catalog: Catalog) -> float:
    if scenario.rtt_s is not None:
        return scenario.rtt_s
    cloud = catalog.instance(scenario.primary.instance_type).cloud
    return catalog.placement_on(scenario.placement, cloud).rtt_ms / 1000


def mirror_for(
    scenario: Scenario,
    catalog: Catalog,
    *,
    mode: Mode = "sync",
    write_behind: int = MDADM_WRITE_BEHIND,
    working_set_bytes: float = DEFAULT_WORKING_SET,
) -> MdNbd:
    """The md-nbd mirror of ``scenario``'s pair, from the catalog entries DRBD's model reads."""
    alone = predict(dataclasses.replace(scenario, replicate=False, topology=(), peers=1), catalog)
    volume = catalog.volume(scenario.primary.volume.type)
    instance = catalog.instance(scenario.primary.instance_type)
    workload = scenario.workload
    return MdNbd(
        bs=workload.bs,
        outstanding=workload.outstanding,
        local_write_s=volume.latency.write_ms / 1000,
        remote_write_s=volume.latency.write_ms / 1000,
        rtt_s=_rtt_s(scenario, catalog),
        local_bps=alone.iops * workload.bs,
        path_bps=instance.network.baseline_gbps * 1e9 / 8,
        single_flow_bps=catalog.defaults.single_flow_gbps.value * 1e9 / 8,
        mode=mode,
        write_behind=write_behind,
        working_set_bytes=working_set_bytes,
        sequential=not workload.rw.startswith("rand"),
        window_bytes=sndbuf_bytes(scenario, catalog),
    )


def predict_pair(scenario: Scenario, catalog: Catalog, mirror: MdNbd) -> MdNbdPair:
    """What ``mirror`` sustains for ``scenario``'s pair, and the pair's cost at that write rate."""
    answer = predict_mdnbd(mirror)
    written = answer.throughput_bps * scenario.workload.write_fraction
    return MdNbdPair(mirror, answer, pair_cost(scenario, catalog, written), mirror.rtt_s)
