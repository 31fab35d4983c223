"""A run of randomized crash trials on the lab's DRBD pairs (:mod:`.trialrun`), and the map it
makes: the trials grouped by pair and protocol (a protocol switch costs an adjust of both
nodes; the trials' outcomes do not depend on their order), each group holding its pair's
share of the host alone, the inventory's protocol restored at the end.

The trial space the lab draws from: DRBD (md-nbd's trials need a runner of their own), the
primary's and the peer's crash, 4-64 KiB writes, one or two jobs, one write in flight per
job, same AZ (``single-az``-like pairs) or across the lab's AZs, no added round trip.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path
from typing import Final

from harness.cell.failover import ProtocolSwitch
from harness.cell.fault import Faults
from harness.cell.partition import PARTITION
from harness.cell.runner import CellRunner
from harness.durability.bounds import PathFigures, ResourceConfig
from harness.durability.durmap import MAP_FILE, DurabilityMap, aggregate, render_markdown, samples_of_map
from harness.durability.plan import Placement, Trial, TrialSpace
from harness.durability.trialrun import ChannelNode, Site, TrialRun, footprint, run_trial
from harness.errors import RefusedError
from harness.impair.apply import AppliedImpairment
from harness.safety.device import guard_replicated_device
from harness.units import KIB

__all__ = ["LAB_SPACE", "Campaign", "pair_for", "run_campaign", "write_map"]

LAB_SPACE: Final = TrialSpace(
    products=("drbd",),
    faults=("primary-crash", "peer-crash"),
    block_sizes=(4 * KIB, 16 * KIB, 64 * KIB),
    iodepths=(1,),
    numjobs=(1, 2),
    max_added_rtt_ms=0.0,
)
#: the link's rate the bound takes for the wire term (the lab's links have no cap of their own)
LINK_BYTES_S: Final = 10e9 / 8
#: the dead-man switch's hold of a cut: far above a trial's read of the survivor
CUT_HOLD_S: Final = 120.0
#: DRBD's backing disk on every lab node
LAB_BACKING: Final = "/dev/ubda"


@dataclass
class Campaign:
    seed: int
    runs: list[TrialRun] = field(default_factory=list)
    elapsed_s: float = 0.0

    @property
    def dmap(self) -> DurabilityMap:
        return aggregate(r.outcome for r in self.runs)

    @property
    def per_minute(self) -> float:
        return 60.0 * len(self.runs) / self.elapsed_s if self.elapsed_s else 0.0

    @property
    def controls_missed(self) -> list[str]:
        return [r.outcome.trial.trial_id for r in self.runs if not r.control_caught]

    @property
    def over_bound(self) -> list[str]:
        return [r.outcome.trial.trial_id for r in self.runs if r.outcome.lost > r.outcome.bound.writes]

    def summary(self) -> str:
        lost = sum(r.outcome.lost for r in self.runs)
        largest = max((r.outcome.lost for r in self.runs), default=0)
        return (
            f"{len(self.runs)} trials (seed {self.seed}) in {self.elapsed_s:.0f} s, {self.per_minute:.1f} a minute; "
            f"{lost} acknowledged writes lost (largest in one trial {largest}); "
            f"negative control caught in {len(self.runs) - len(self.controls_missed)} of {len(self.runs)}"
        )


def pair_for(runner: CellRunner, placement: Placement) -> str | None:
    """The first DRBD pair of the inventory whose nodes share an AZ (same-az) or not."""
    inv = runner.inventory
    return next((n for n, p in inv.pairs.items() if p.replication == "drbd" and inv.placement(n) == placement), None)


def _live(node: object) -> ChannelNode:
    if not isinstance(node, ChannelNode):
        raise RefusedError("the durability trials write a node's stdin while it answers: they need a live SSH node")
    return node


def _tcp_wmem_max(node: ChannelNode) -> int:
    return int(node.run(["cat", "/proc/sys/net/ipv4/tcp_wmem"], timeout=10, sudo=False).stdout.split()[-1])


@contextmanager
def _site(runner: CellRunner, faults: Faults, pair_name: str, needed: int) -> Iterator[Site]:
    inv, pair = runner.inventory, runner.inventory.pairs[pair_name]
    primary, peer = _live(runner.pool.get(pair.primary)), _live(runner.pool.get(pair.secondary))
    peer_ip = inv.nodes[pair.secondary].replication.ip
    replication = runner.replication(pair_name, pair.primary)
    guard_replicated_device(primary, replication, needed_bytes=needed)
    applied: list[AppliedImpairment] = []

    def cut() -> None:
        faults.impairer.apply(
            primary, iface=inv.nodes[pair.primary].replication.iface, peer_ip=peer_ip, profile=PARTITION,
            hold_s=CUT_HOLD_S, role="primary", on_planned=applied.append, port=pair.shaped_port(),
        )  # fmt: skip

    def heal() -> None:
        while applied:
            faults.impairer.clear(primary, applied.pop())

    rtt = runner.baseline_rtt(primary, peer_ip)
    path = PathFigures(rtt.max_ms / 1000.0, LINK_BYTES_S, _tcp_wmem_max(primary))
    minor = int(pair.device.removeprefix("/dev/drbd"))
    try:
        yield Site(pair_name, primary, peer, pair.device, LAB_BACKING, minor, cut, heal, path, replication)
    finally:
        heal()


def run_campaign(
    runner: CellRunner, switch_of: Callable[[str], ProtocolSwitch], trials: list[Trial], seed: int
) -> Campaign:
    """Every trial, on the pair its placement names; the trials of a placement no pair has are
    refused."""
    placed = []
    for trial in trials:
        name = pair_for(runner, trial.placement)
        if name is None:
            raise RefusedError(f"trial {trial.trial_id}: the inventory has no DRBD pair {trial.placement}")
        placed.append((name, trial))
    placed.sort(key=lambda p: (p[0], p[1].protocol))
    campaign = Campaign(seed)
    start = time.monotonic()
    for (name, protocol), group in groupby(placed, key=lambda p: (p[0], p[1].protocol)):
        pair = runner.inventory.pairs[name]
        todo = [t for _, t in group]
        switch = switch_of(name)
        with runner.host_slot([pair.primary, pair.secondary], exclusive=True):
            try:
                switch.set(protocol)
                runner.replication(name, pair.primary).wait_healthy(300.0)
                with _site(runner, runner.faults, name, max(footprint(t) for t in todo)) as site:
                    for trial in todo:
                        campaign.runs.append(run_trial(site, trial, ResourceConfig("drbd", protocol)))
            finally:
                switch.set(pair.protocol)
                runner.replication(name, pair.primary).wait_healthy(300.0)
    campaign.elapsed_s = time.monotonic() - start
    return campaign


def write_map(runner: CellRunner, campaign: Campaign) -> Path:
    """The map as Markdown in the run's directory, and as samples the results database keeps."""
    dmap = campaign.dmap
    runner.store.append(samples_of_map(dmap, {"run_id": runner.run_id, "seed": campaign.seed}))
    path = runner.run_dir / MAP_FILE
    method = "a cut of the primary's replication path at the drawn moment (not a guest's SIGKILL)"
    path.write_text(f"# Durability map\n\n{campaign.summary()}.\nFault: {method}.\n\n{render_markdown(dmap)}\n")
    return path
