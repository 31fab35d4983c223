"""DRBD for the embedded lab: its configuration, the boot lines that create its resources, and the
protocol switch of its failover scenario.

The lab runs its kernel's DRBD 8.4, or DRBD 9 from modules the user supplies
(:mod:`harness.lab.drbd9`).  On 9 every host of a resource has a ``node-id``, and a resource of
more than two nodes is a full mesh (``connection-mesh``) with quorum: a majority of the nodes
must see each other for a primary to write (``on-no-quorum io-error``: a primary cut off from
the majority fails its writes rather than diverge).  A tie-breaker is a host without a disk
(``disk none``): it votes only to break a tie of the disks.

Nothing here is ever run against a real cluster.  The boot lines are rendered into a lab
guest's ``boot.sh`` (:mod:`harness.lab.render`), which runs them on disks the lab has just
created as all-zero sparse files; that is why they may do what :mod:`harness.drbd.commands`
deliberately cannot (``create-md --force``, ``new-current-uuid --clear-bitmap``: skipping the
initial sync is correct only for blank disks).  The protocol switch edits the
guest's own ``/etc/drbd.conf``, which lives in its tmpfs overlay, so a guest restart goes back
to the protocol the lab was rendered with.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import get_args

from harness.drbd.commands import check_resource_name
from harness.fields import ReplicationProtocol
from harness.inventory.models import Inventory, PairSpec
from harness.remote import Runner

__all__ = ["QUORUM_OPTIONS", "adjust_argv", "boot_lines", "node_ids", "render_conf", "set_protocol"]

#: a resource of more than two nodes on DRBD 9: writes stop (with an I/O error, never frozen)
#: on a node that no longer sees a majority
QUORUM_OPTIONS = "options { quorum majority; on-no-quorum io-error; }"


def node_ids(inv: Inventory, pair: PairSpec) -> dict[str, int]:
    """DRBD 9's node-id of each node of the pair's resource: the inventory's pin
    (``drbd_node_id``), else the lowest id left, in the order primary, secondary, peers."""
    pinned = {name: inv.nodes[name].drbd_node_id for name in pair.nodes}
    taken = {i for i in pinned.values() if i is not None}
    free = (i for i in range(32) if i not in taken)
    return {name: node_id if node_id is not None else next(free) for name, node_id in pinned.items()}


def _resource9(inv: Inventory, pair: PairSpec, disk: str) -> list[str]:
    """One DRBD 9 resource: every host with its node-id, device and disk (``none`` on a tie-breaker)."""
    out = [f"resource {pair.resource} {{", f"  net {{ protocol {pair.protocol}; }}"]
    for name, node_id in node_ids(inv, pair).items():
        storage = "disk none;" if name in pair.tiebreakers else f"disk {disk}; meta-disk internal;"
        address = f"{inv.nodes[name].replication.ip}:{pair.port}"
        out.append(f"  on {name} {{ node-id {node_id}; device {pair.device}; {storage} address {address}; }}")
    if pair.peers:
        out += [f"  connection-mesh {{ hosts {' '.join(pair.nodes)}; }}", f"  {QUORUM_OPTIONS}"]
    out.append("}")
    return out


def render_conf(
    inv: Inventory, *, disk: str = "/dev/ubda", drbd9: bool = False, disks: Mapping[str, str] | None = None
) -> str:
    """DRBD 8.4 configuration with one resource per pair (backing disk: the node's first ubd);
    with ``drbd9`` DRBD 9's, each resource on its disk of ``disks`` (by resource; ``disk`` else)."""
    out = [
        f"# rendered by harness.drbd.provision for the embedded lab (DRBD {'9' if drbd9 else '8.4'})",
        "global { usage-count no; }",
        "common {",
        # ping-int 1 / ping-timeout 1 s: a lost peer is noticed in about 2 s instead of 11-20 s
        # (the default ping-int is 10 s), which the failover scenario relies on.
        # verify-alg: online verify (the partition scenario's oracle, --verify-after) needs one.
        "  net { ping-int 1; ping-timeout 10; verify-alg crc32c; }",
        # The 8.4 default resync controller manages ~250 KiB/s to ~24 MiB/s here; after a
        # failover the old primary must catch up in seconds, not minutes.
        "  disk { c-plan-ahead 0; resync-rate 1000M; }",
        "}",
    ]
    for _pname, pair in sorted(inv.pairs.items()):
        if pair.replication != "drbd":
            continue
        if drbd9:
            out += _resource9(inv, pair, (disks or {}).get(pair.resource, disk))
            continue
        out.append(f"resource {pair.resource} {{")
        out.append(f"  net {{ protocol {pair.protocol}; }}")
        out.append(f"  device {pair.device};")
        out.append(f"  disk {disk};")
        out.append("  meta-disk internal;")
        for node_name in (pair.primary, pair.secondary):
            node = inv.nodes[node_name]
            out.append(f"  on {node_name} {{ address {node.replication.ip}:{pair.port}; }}")
        out.append("}")
    return "\n".join(out) + "\n"


def boot_lines(resource: str, *, primary: bool, diskless: bool = False, peers: int = 1) -> list[str]:
    """Shell lines that bring one resource up at a guest's boot.

    ``$rejoin`` (set by the boot script) is 1 for a guest that comes back: it keeps its DRBD
    metadata, attaches, reconnects and resyncs, and never becomes primary by itself.  A fresh
    guest creates the metadata (a ``diskless`` tie-breaker has none); the pair's primary then
    waits for its ``peers`` (DRBD 9 prints one connection state per peer), skips the initial
    sync (every disk is blank) and takes the primary role."""
    res = shlex.quote(check_resource_name(resource))
    if diskless:
        return [f"drbdadm up {res}"]
    lines = [
        f'if [ "$rejoin" = 1 ]; then drbdadm up {res}; else drbdadm create-md --force {res} && drbdadm up {res}; fi'
    ]
    cstate = f"drbdadm cstate {res}" if peers == 1 else f"drbdadm cstate {res} | sort -u"
    if primary:
        lines += [
            'if [ "$rejoin" = 0 ]; then',
            f'for i in $(seq 600); do [ "$({cstate})" = Connected ] && break; sleep 0.1; done',
            f'[ "$({cstate})" = Connected ]',
            f"drbdadm new-current-uuid --clear-bitmap {res}",
            f"drbdadm primary {res}",
            "fi",
        ]
    return lines


def adjust_argv(resource: str) -> list[str]:
    """Apply the configuration file's settings to the running resource."""
    return ["drbdadm", "adjust", check_resource_name(resource)]


def set_protocol(nodes: Sequence[Runner], resource: str, protocol: ReplicationProtocol) -> None:
    """Rewrite the resource's ``protocol`` in every node's ``/etc/drbd.conf``, then adjust it."""
    if protocol not in get_args(ReplicationProtocol):
        raise ValueError(f"protocol must be A, B or C, got {protocol!r}")
    block = f"/^resource {check_resource_name(resource)} {{/,/^}}/"
    for node in nodes:
        node.run_script(
            f"sed -i {shlex.quote(block + f' s/protocol [ABC];/protocol {protocol};/')} /etc/drbd.conf", timeout=30
        )
    for node in nodes:
        node.run(adjust_argv(resource), timeout=60)
