"""DRBD for the embedded lab: its configuration, the boot lines that create its resources, and the
protocol switch of its failover scenario.

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
from collections.abc import Sequence
from typing import Literal

from harness.drbd.commands import check_resource_name
from harness.inventory.models import Inventory
from harness.remote import Runner

__all__ = ["Protocol", "adjust_argv", "boot_lines", "render_conf", "set_protocol"]

Protocol = Literal["A", "B", "C"]


def render_conf(inv: Inventory, *, disk: str = "/dev/ubda") -> str:
    """DRBD 8.4 configuration with one resource per pair (backing disk: the node's first ubd)."""
    out = [
        "# rendered by harness.drbd.provision for the embedded lab (DRBD 8.4)",
        "global { usage-count no; }",
        "common {",
        # ping-int 1 / ping-timeout 1 s: a lost peer is noticed in about 2 s instead of 11-20 s
        # on the lab, which the failover scenario relies on.
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


def boot_lines(resource: str, *, primary: bool) -> list[str]:
    """Shell lines that bring one resource up at a guest's boot.

    ``$rejoin`` (set by the boot script) is 1 for a guest that comes back: it keeps its DRBD
    metadata, attaches, reconnects and resyncs, and never becomes primary by itself.  A fresh
    guest creates the metadata; the pair's primary then waits for the peer, skips the initial
    sync (both disks are blank) and takes the primary role."""
    res = shlex.quote(check_resource_name(resource))
    lines = [
        f'if [ "$rejoin" = 1 ]; then drbdadm up {res}; else drbdadm create-md --force {res} && drbdadm up {res}; fi'
    ]
    if primary:
        lines += [
            'if [ "$rejoin" = 0 ]; then',
            f'for i in $(seq 600); do [ "$(drbdadm cstate {res})" = Connected ] && break; sleep 0.1; done',
            f'[ "$(drbdadm cstate {res})" = Connected ]',
            f"drbdadm new-current-uuid --clear-bitmap {res}",
            f"drbdadm primary {res}",
            "fi",
        ]
    return lines


def adjust_argv(resource: str) -> list[str]:
    """Apply the configuration file's settings to the running resource."""
    return ["drbdadm", "adjust", check_resource_name(resource)]


def set_protocol(nodes: Sequence[Runner], resource: str, protocol: Protocol) -> None:
    """Rewrite the resource's ``protocol`` in every node's ``/etc/drbd.conf``, then adjust it."""
    if protocol not in ("A", "B", "C"):
        raise ValueError(f"protocol must be A, B or C, got {protocol!r}")
    block = f"/^resource {check_resource_name(resource)} {{/,/^}}/"
    for node in nodes:
        node.run_script(
            f"sed -i {shlex.quote(block + f' s/protocol [ABC];/protocol {protocol};/')} /etc/drbd.conf", timeout=30
        )
    for node in nodes:
        node.run(adjust_argv(resource), timeout=60)
