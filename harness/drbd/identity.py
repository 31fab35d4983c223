"""Which node DRBD says this is, for the inventory's identity pin.

``uname -n`` alone lets a re-imaged machine with the same name pass.  DRBD keeps its own
identity of the node in each resource, and ``drbdsetup show RES`` prints it (what the kernel
runs now, :mod:`harness.drbd.config`'s grammar):

* DRBD 9: ``_this_host { node-id N; ... }`` and, per connection, ``path { _this_host ipv4
  ADDR:PORT; _remote_host ...; }`` (recorded on the lab,
  ``tests/data/drbd/drbd-9.2.18/a1.r3.show-show-defaults.txt``);
* DRBD 8.4 has no node ids: drbdadm picked the ``on <host>`` section named by ``uname -n`` and
  the kernel shows its address, ``_this_host { address ipv4 ADDR:PORT; ... }`` (recorded on the
  lab, ``tests/data/drbd/84-drbdsetup-show.txt``).

So a pinned node must show the pinned node-id where DRBD has one, and in every DRBD version
the address of its ``on`` section (8.4) or of a path to a peer (9) must be the inventory's
replication address and the pair's port.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from harness.drbd.config import Statement, find_resources, parse_config
from harness.drbd.errors import DrbdOutputError

__all__ = ["IdentityCheck", "ThisHost", "judge_identity", "read_this_host"]


@dataclass(frozen=True)
class ThisHost:
    """This node as one DRBD resource knows it."""

    #: DRBD 9's node-id of this node; None on DRBD 8.4, which has none
    node_id: int | None
    #: the ``ADDR:PORT`` words DRBD gives this node (8.4: one; 9: one per path to a peer)
    addresses: tuple[str, ...]


@dataclass(frozen=True)
class IdentityCheck:
    """The verdict on a pinned node's DRBD identity, in one line."""

    ok: bool
    detail: str


def _leaves(block: tuple[Statement, ...], key: str) -> list[tuple[str, ...]]:
    return [s.args for s in block if s.key == key and s.block is None]


def read_this_host(show: str, resource: str) -> ThisHost | None:
    """This node in ``drbdsetup show RES``'s output; None when the resource is not there."""
    found = find_resources(parse_config(show), resource)
    if not found or found[0].block is None:
        return None
    node_id: int | None = None
    addresses: list[str] = []
    for statement in found[0].block:
        if statement.key == "_this_host" and statement.block is not None:
            for args in _leaves(statement.block, "node-id"):
                if len(args) != 1 or not args[0].isdigit():
                    raise DrbdOutputError(f"drbdsetup show {resource}: node-id {' '.join(args)!r} is not a number")
                node_id = int(args[0])
            addresses += [args[-1] for args in _leaves(statement.block, "address") if args]
        elif statement.key == "connection" and statement.block is not None:
            for path in (s.block for s in statement.block if s.key == "path" and s.block is not None):
                addresses += [args[-1] for args in _leaves(path, "_this_host") if args]
    return ThisHost(node_id, tuple(addresses))


def _endpoint(word: str) -> tuple[str, int] | None:
    """``10.0.0.1:7789`` or ``[fd00::1]:7789`` as (address, port), spelled one way; None if neither."""
    host, sep, port = word.rpartition(":")
    if not sep or not port.isdigit():
        return None
    try:
        return str(ipaddress.ip_address(host.strip("[]"))), int(port)
    except ValueError:
        return None


def judge_identity(
    this: ThisHost | None, *, node: str, resource: str, node_id: int | None, ip: str, port: int
) -> IdentityCheck:
    """Does the node DRBD shows in ``resource`` match the inventory's pin and address?"""
    expected = f"{ip}:{port}" if ":" not in ip else f"[{ip}]:{port}"
    if this is None:
        return IdentityCheck(
            False, f"{node}: DRBD resource {resource} is not configured here; cannot check its identity"
        )
    if node_id is not None and this.node_id is not None and this.node_id != node_id:
        return IdentityCheck(
            False,
            f"{node}: DRBD resource {resource} has node-id {this.node_id}, the inventory pins {node_id} "
            "(another machine, or a re-imaged one with another configuration)",
        )
    wanted = _endpoint(expected)
    if wanted not in {_endpoint(word) for word in this.addresses}:
        found = ", ".join(this.addresses) or "no address"
        return IdentityCheck(
            False, f"{node}: DRBD resource {resource} runs on {found}, the inventory expects {expected}"
        )
    if this.node_id is None:
        return IdentityCheck(True, f"{resource}: DRBD 8.4 (no node ids): its `on` section's address is {expected}")
    return IdentityCheck(True, f"{resource}: node-id {this.node_id}, {expected}")
