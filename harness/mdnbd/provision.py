"""md-nbd pairs for the embedded lab: the boot lines that build them on blank disks, and the
keeper loop that plays DataKeeper's own service (a lost NBD leg comes back by itself).

Nothing here is ever run against a real cluster.  The lab's legs are fresh all-zero sparse
files, so the primary may create the array with ``--assume-clean`` (both legs already hold the
same zeros), as DRBD's lab resources skip their initial sync.  A guest that comes back after a
crash (``$rejoin``) only exports its leg: it returns as the secondary, as a DataKeeper node
does, and the harness's failover connects the new primary to it.
"""

from __future__ import annotations

import shlex

from harness.inventory.models import Inventory, PairSpec
from harness.mdnbd import commands

__all__ = ["boot_lines", "create_argv"]

#: write-behind of an asynchronous (protocol A) lab pair: outstanding writes to the NBD leg
WRITE_BEHIND = 256


def create_argv(pair: PairSpec) -> list[str]:
    """``mdadm --create`` of the pair's RAID1; :func:`boot_lines` then sets its mode (the NBD
    leg write-mostly, with a write-behind backlog for an asynchronous pair).

    The NBD leg is the first member: on the lab's kernel (Linux 6.1) a write goes "behind"
    only when the array's first member is write-mostly.  Measured on a3 → b1 with 5 ms added
    (7.3 ms round trip), QD1 4k writes, the NBD leg write-mostly with a backlog of 256: as the
    second member, 7.5 ms per write and ``max_backlog_used`` 0; as the first, 0.25 ms and 256
    (synchronous on the same array: 7.6 ms)."""
    assert pair.disk is not None
    return [
        "mdadm",
        "--create",
        commands.array_device(pair.resource),
        "--run",
        "--quiet",
        "--level=1",
        "--metadata=1.2",
        "--raid-devices=2",
        "--bitmap=internal",
        "--assume-clean",
        commands.check_nbd_device(pair.nbd),
        pair.disk,
    ]


def boot_lines(inv: Inventory, pair: PairSpec, node: str) -> list[str]:
    """Shell lines for ``node``'s boot script (the secondary exports, the primary connects)."""
    assert pair.disk is not None
    me = str(inv.nodes[node].replication.ip)
    other = pair.secondary if node == pair.primary else pair.primary
    peer = str(inv.nodes[other].replication.ip)
    export = commands.export_script(pair.resource, pair.disk, me, pair.port)
    keeper = commands.keeper_script(pair.resource, pair.nbd, peer, pair.port, pair.nbd_timeout)
    start_keeper = f"setsid sh -c {shlex.quote(keeper)} </dev/null >/dev/null 2>&1 &"
    if node == pair.secondary:
        return [f"( {export} )", start_keeper]
    nbd = shlex.quote(commands.check_nbd_device(pair.nbd))
    connect = (
        f"nbd-client {shlex.quote(peer)} {pair.port} {nbd} -N {shlex.quote(pair.resource)} "
        f"-t {pair.nbd_timeout} >/dev/null 2>&1"
    )
    return [
        f'if [ "$rejoin" = 1 ]; then ( {export} ); else',
        # the peer boots at the same time: wait up to 60 s for its export
        f"for i in $(seq 600); do {connect} && break; sleep 0.1; done",
        f"nbd-client -c {nbd} >/dev/null",
        shlex.join(create_argv(pair)),
        commands.write_mode_script(
            pair.resource, pair.nbd, asynchronous=pair.protocol == "A", write_behind=WRITE_BEHIND
        ),
        "fi",
        start_keeper,
    ]
