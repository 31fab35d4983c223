"""Step 1 of a cell, the guard: the target is the pair's own replicated device, safe to write, and
the replication is healthy, before anything changes.

One round trip to the primary carries the device guard's probes (:mod:`harness.safety.device`),
the replication's state and the node's boot id (a node that reboots mid-cell loses its qdiscs
and its fio: the cell must notice, not report a half-measured window); the secondary's boot id is read at
the same time, over its own connection.  An impaired cell's first look at each node's
replication interface (a foreign or leftover qdisc refuses the fault) rides the same round
trips, and so does the opening of the cell's validity window (:mod:`.certificate`): each node's
pressure snapshot, and on the lab the host's, read as soon as both round trips are back.  Only
when the state is not healthy does the guard wait, bounded, for it to become so; the window then
opens again once it is (a resync is not the measurement's window).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from harness.cell.certificate import HostProbe, Readings, node_print, pressure_reads, read_ends, read_host
from harness.cell.spec import CellSpec
from harness.errors import CommandFailed, RefusedError, SplitBrain
from harness.fio.profiles import profile_hint
from harness.impair.apply import root_probe
from harness.inventory.models import Inventory, NodeSpec, PairSpec
from harness.probes.reach import probe_reach
from harness.probes.reboot import boot_id_argv
from harness.progress import Progress
from harness.remote import CommandResult, Runner, Shell, run_batch
from harness.remote.pool import NodePool
from harness.replication import ReplicaStatus, Replication, replication_for
from harness.safety.device import guard_replicated_device

__all__ = ["HEALTH_POLL_S", "Target", "guard_cell", "pair_replication", "refuse_unless_primary"]

#: how often a cell asks whether the replication became healthy
HEALTH_POLL_S = 0.5


def pair_replication(
    pool: NodePool, pair: PairSpec, node: str, nodes: Mapping[str, NodeSpec] | None = None
) -> Replication:
    """The pair's replicated device on ``node``, over the pool's current connection to it
    (``nodes``, the inventory's, give the product the pair's replication addresses)."""
    return replication_for(pair, pool.get(node), poll_interval_s=HEALTH_POLL_S, nodes=nodes)


@dataclass(frozen=True)
class Target:
    """A pair that passed the guard: its nodes, the primary's replicated device, the peer's
    replication address, the primary's boot id and the secondary's (None: not read yet), for
    an impaired cell each node's replication interface as it was read (by node name), and the
    opening of the cell's validity window."""

    pair: PairSpec
    primary: Runner
    secondary: Runner
    replication: Replication
    peer_ip: str
    boot_id: str
    peer_boot_id: str | None = None
    prereads: Mapping[str, Mapping[str, CommandResult]] | None = None
    window_start: Readings = field(default_factory=lambda: Readings({}))

    def boot_ids(self) -> dict[str, str]:
        """The boot ids the guard read, by node name (raw ``cat`` output)."""
        known = {self.pair.primary: self.boot_id}
        if self.peer_boot_id is not None:
            known[self.pair.secondary] = self.peer_boot_id
        return known


def refuse_unless_primary(state: ReplicaStatus, node: str, resource: str) -> None:
    """Refuse to write through a device that is not the primary the inventory says it is.

    A role a crash left unrestored must fail the cell of its own pair: DRBD 9 promotes a
    Secondary by itself when fio opens the device (auto-promote), so writing would pass and
    hide it; on 8.4 the write would fail later and less clearly."""
    if state.role != "Primary":
        raise RefusedError(
            f"{node}: {resource} is {state.role}, the inventory says Primary: refusing to write (a role left "
            "unrestored; DRBD 9's auto-promote would promote it for the write and hide that)"
        )


def _explain_unhealthy(exc: RefusedError, primary: Runner, source: str, dest: str, resource: str) -> None:
    """A replication that never became healthy: say whether the network between the nodes is
    the cause (the error gains the reason; a probe that fails itself adds nothing)."""
    reach = probe_reach(primary, source, dest)
    if reach is None:
        return
    exc.args = (f"{exc}; {reach.dead_path(resource) if not reach.answers else reach.describe()}",)


def _opened(
    primary: str, secondary: str, facts: Mapping[str, CommandResult], peer: Mapping[str, CommandResult]
) -> Readings:
    """The window's opening from the guard's two round trips (the host is read by the caller)."""
    mine, why = node_print(primary, facts)
    theirs, peer_why = node_print(secondary, peer)
    return Readings({**mine, **theirs}, problems=(*why, *peer_why))


def guard_cell(
    inventory: Inventory,
    pool: NodePool,
    spec: CellSpec,
    *,
    health_timeout_s: float,
    progress: Progress,
    host_probe: HostProbe | None = None,
) -> Target:
    """Open both nodes, guard the device, check (or wait for) a healthy replication and open the
    cell's validity window (``host_probe``: the lab's host, read locally)."""
    pair = inventory.pairs[spec.pair]
    nodes = pool.open_all([pair.primary, pair.secondary])
    primary, secondary = nodes[pair.primary], nodes[pair.secondary]
    progress(f"{spec.id}: checking {pair.resource} and {pair.device} on {pair.primary}")
    replication = replication_for(pair, primary, poll_interval_s=HEALTH_POLL_S, nodes=inventory.nodes)
    ifaces = {name: inventory.nodes[name].replication.iface for name in (pair.primary, pair.secondary)}

    def interface(name: str) -> dict[str, Sequence[str] | Shell]:
        return root_probe(ifaces[name]) if spec.impairment is not None else {}

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="peer-boot-id") as peer:
        peer_batch = peer.submit(
            run_batch,
            secondary,
            {"boot_id": boot_id_argv(), **interface(pair.secondary), **pressure_reads()},
            timeout=15,
        )
        facts = guard_replicated_device(
            primary,
            replication,
            needed_bytes=spec.workload.footprint_bytes,
            fits=lambda size: profile_hint(spec.workload, size),
            extra={
                "state": replication.state_probe(),
                "boot_id": boot_id_argv(),
                **interface(pair.primary),
                **pressure_reads(),
            },
        )
        peer_out = peer_batch.result()
    opened = _opened(pair.primary, pair.secondary, facts.extra, peer_out)
    host, host_problems = read_host(host_probe)
    opened = Readings(opened.nodes, host, (*opened.problems, *host_problems))
    if peer_out["boot_id"].exit_code != 0:
        raise CommandFailed(peer_out["boot_id"])
    prereads = None
    if spec.impairment is not None:
        prereads = {
            pair.primary: {k: facts.extra[k] for k in interface(pair.primary)},
            pair.secondary: {k: peer_out[k] for k in interface(pair.secondary)},
        }
    state = replication.read_state(facts.extra["state"].stdout)
    peer_ip = inventory.nodes[pair.secondary].replication.ip
    if state is None or not state.healthy:
        try:
            state = replication.wait_healthy(health_timeout_s)
        except SplitBrain:
            raise
        except RefusedError as exc:
            _explain_unhealthy(exc, primary, inventory.nodes[pair.primary].replication.ip, peer_ip, pair.resource)
            raise
        opened = read_ends([primary, secondary], host_probe)
    refuse_unless_primary(state, pair.primary, pair.resource)
    return Target(
        pair,
        primary,
        secondary,
        replication,
        peer_ip,
        facts.extra["boot_id"].stdout,
        peer_out["boot_id"].stdout,
        prereads,
        opened,
    )
