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
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path
from typing import Final, Literal, get_args

from harness.cell.failover import FailoverParts
from harness.cell.partition import PARTITION
from harness.cell.roles import restore_other_pairs, wait_promotable
from harness.cell.runner import CellRunner
from harness.durability.bounds import PathFigures, ResourceConfig
from harness.durability.durmap import MAP_FILE, DurabilityMap, aggregate, render_markdown, samples_of_map
from harness.durability.plan import Placement, Trial, TrialSpace
from harness.durability.trialrun import ChannelNode, Site, TrialRun, footprint, run_trial
from harness.errors import RefusedError
from harness.impair.apply import AppliedImpairment
from harness.safety.device import guard_replicated_device
from harness.units import KIB

__all__ = ["CRASHES", "LAB_SPACE", "Campaign", "Crash", "pair_for", "run_campaign", "write_map"]

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


Crash = Literal["cut", "sigkill"]
CRASHES: Final[tuple[Crash, ...]] = get_args(Crash)
METHODS: Final[dict[Crash, str]] = {
    "cut": "the replication path cut at the drawn moment, the survivor read (the fast fault)",
    "sigkill": "the lab's SIGKILL of the node at the drawn moment and its reboot (the reference)",
}


@dataclass
class Campaign:
    seed: int
    crash: Crash = "cut"
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


class _Cut:
    """The fast fault: the primary's path to the peer cut by the impairer (dead-man switched)."""

    def __init__(self, runner: CellRunner, pair_name: str, primary: ChannelNode) -> None:
        self.runner, self.pair_name, self.primary = runner, pair_name, primary
        self.applied: list[AppliedImpairment] = []

    def cut(self, trial: Trial) -> None:
        inv, pair = self.runner.inventory, self.runner.inventory.pairs[self.pair_name]
        self.runner.faults.impairer.apply(
            self.primary, iface=inv.nodes[pair.primary].replication.iface,
            peer_ip=inv.nodes[pair.secondary].replication.ip, profile=PARTITION, hold_s=CUT_HOLD_S,
            role="primary", on_planned=self.applied.append, port=pair.shaped_port(),
        )  # fmt: skip

    def heal(self, trial: Trial) -> None:
        while self.applied:
            self.runner.faults.impairer.clear(self.primary, self.applied.pop())
        self.runner.replication(self.pair_name, self.runner.inventory.pairs[self.pair_name].primary).wait_healthy(300.0)


class _Kill:
    """The reference fault: the lab's SIGKILL of the node the trial names, its reboot, the
    protocol set again on the rejoined node, and the primary promoted again if it rebooted."""

    def __init__(self, runner: CellRunner, pair_name: str, parts: FailoverParts, protocol: str) -> None:
        self.runner, self.pair_name, self.parts, self.protocol = runner, pair_name, parts, protocol

    def _victim(self, trial: Trial) -> str:
        pair = self.runner.inventory.pairs[self.pair_name]
        return pair.primary if trial.fault == "primary-crash" else pair.secondary

    def cut(self, trial: Trial) -> None:
        self.parts.crasher.crash(self._victim(trial))

    def heal(self, trial: Trial) -> None:
        pair = self.runner.inventory.pairs[self.pair_name]
        victim = self._victim(trial)
        self.parts.crasher.recover(victim)
        # the node's other pairs (md-nbd's array, the other DRBD resource) rejoin as well
        for line in restore_other_pairs(self.runner, victim, done=self.pair_name):
            self.runner.ledger.record("durability-restored", {"node": victim, "change": line})
        if self.protocol != pair.protocol:
            self.parts.protocols.set(self.protocol)
        primary = self.runner.replication(self.pair_name, pair.primary)
        if primary.state().role != "Primary":
            wait_promotable(primary)
            primary.promote()
        primary.wait_healthy(600.0)


def _site(runner: CellRunner, pair_name: str, needed: int, fault: _Cut | _Kill | None) -> Site:
    """The pair's site for its next trial (or trials: the cut keeps the nodes up); ``fault``
    None: the fast cut."""
    inv, pair = runner.inventory, runner.inventory.pairs[pair_name]
    primary, peer = _live(runner.pool.get(pair.primary)), _live(runner.pool.get(pair.secondary))
    peer_ip = inv.nodes[pair.secondary].replication.ip
    guard_replicated_device(primary, runner.replication(pair_name, pair.primary), needed_bytes=needed)
    strike = fault if fault is not None else _Cut(runner, pair_name, primary)
    rtt = runner.baseline_rtt(primary, peer_ip)
    path = PathFigures(rtt.max_ms / 1000.0, LINK_BYTES_S, _tcp_wmem_max(primary))
    minor = int(pair.device.removeprefix("/dev/drbd"))
    return Site(pair_name, primary, peer, pair.device, LAB_BACKING, minor, strike.cut, strike.heal, path)


def _group(
    runner: CellRunner, campaign: Campaign, parts: FailoverParts, *, name: str, protocol: str, todo: list[Trial]
) -> None:
    needed = max(footprint(t) for t in todo)
    config = ResourceConfig("drbd", protocol)
    if campaign.crash == "cut":
        site = _site(runner, name, needed, None)
        for trial in todo:
            campaign.runs.append(run_trial(site, trial, config))
        return
    kill = _Kill(runner, name, parts, protocol)
    for trial in todo:  # a crash leaves the site's connections dead: a new site each trial
        campaign.runs.append(run_trial(_site(runner, name, needed, kill), trial, config))


def run_campaign(
    runner: CellRunner, parts_of: Callable[[str], FailoverParts], trials: list[Trial], seed: int, crash: Crash = "cut"
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
    campaign = Campaign(seed, crash)
    start = time.monotonic()
    for (name, protocol), group in groupby(placed, key=lambda p: (p[0], p[1].protocol)):
        pair = runner.inventory.pairs[name]
        parts = parts_of(name)
        with runner.host_slot([pair.primary, pair.secondary], exclusive=True):
            try:
                parts.protocols.set(protocol)
                runner.replication(name, pair.primary).wait_healthy(300.0)
                _group(runner, campaign, parts, name=name, protocol=protocol, todo=[t for _, t in group])
            finally:
                parts.protocols.set(pair.protocol)
                runner.replication(name, pair.primary).wait_healthy(300.0)
    campaign.elapsed_s = time.monotonic() - start
    return campaign


def write_map(runner: CellRunner, campaign: Campaign) -> Path:
    """The map as Markdown in the run's directory, and as samples the results database keeps."""
    dmap = campaign.dmap
    runner.store.append(samples_of_map(dmap, {"run_id": runner.run_id, "seed": campaign.seed}))
    path = runner.run_dir / MAP_FILE
    method = METHODS[campaign.crash]
    path.write_text(f"# Durability map\n\n{campaign.summary()}.\nFault: {method}.\n\n{render_markdown(dmap)}\n")
    return path
