"""Switching a lab resource's replication protocol (A, B, C) for the failover scenario.

Only the embedded lab's own DRBD configuration is edited; the harness never changes a real
cluster's configuration.  The guest's ``/etc/drbd.conf`` lives in its tmpfs overlay, so a
guest restart goes back to the protocol the lab was rendered with.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Literal

from harness.remote import Runner

__all__ = ["set_protocol"]

Protocol = Literal["A", "B", "C"]


def set_protocol(nodes: Sequence[Runner], resource: str, protocol: Protocol) -> None:
    """Rewrite the resource's ``protocol`` on every node, then ``drbdadm adjust`` it."""
    if protocol not in ("A", "B", "C"):
        raise ValueError(f"protocol must be A, B or C, got {protocol!r}")
    block = f"/^resource {resource} {{/,/^}}/"
    for node in nodes:
        node.run_script(
            f"sed -i {shlex.quote(block + f' s/protocol [ABC];/protocol {protocol};/')} /etc/drbd.conf", timeout=30
        )
    for node in nodes:
        node.run(["drbdadm", "adjust", resource], timeout=60)
