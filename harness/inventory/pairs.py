"""The replicated pairs of an inventory: the two nodes under test and the resource's other peers.

A pair is what the harness writes to and judges: its primary, where fio writes, and its
secondary, the peer it fails over to.  A DRBD 9 resource may span more nodes than that: a
third diskful node in the same site, a diskless tie-breaker that only lends its vote to quorum,
or a disaster-recovery replica in another region.  Those are the pair's ``peers``: they are
never written to, crashed or promoted by the harness, but every judgement of the pair names
them (their disk, their role, the quorum they make), and DRBD's own configuration of the
resource lists them, so the inventory must too.  Each peer is a node of ``nodes:``, whose
replication address is the address DRBD reaches it at.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, StrictInt, StrictStr, model_validator

from harness.fields import (
    DRBD_DEVICE_PATTERN,
    NBD_DEVICE_PATTERN,
    REPLICATED_DEVICE_PATTERN,
    RESOURCE_PATTERN,
    FrozenModel,
    ReplicationProtocol,
    reserved_resource_name,
)

__all__ = ["MAX_PEERS", "NAME_PATTERN", "Name", "PairSpec", "PeerRole", "PeerSpec", "pair_problems"]

NAME_PATTERN = r"^[a-z][a-z0-9-]{0,30}$"
Name = Annotated[StrictStr, Field(pattern=NAME_PATTERN)]

#: DRBD 9 connects at most 32 nodes in one resource: the pair and 30 peers
MAX_PEERS = 30

#: ``diskful``: a replica that votes; ``tiebreaker``: a node without a disk (``disk none``) that
#: only breaks a tie of the diskful votes; ``dr``: a diskful replica in another region
PeerRole = Literal["diskful", "tiebreaker", "dr"]


def _not_all(name: str) -> str:
    if reserved_resource_name(name):
        raise ValueError("'all' means every resource to drbdadm; name one resource")
    return name


def _role_alone(value: Any) -> Any:
    """``b1: tiebreaker`` is ``b1: {role: tiebreaker}``."""
    return {"role": value} if isinstance(value, str) else value


class PeerSpec(FrozenModel):
    """Another node of the pair's resource: what it holds and why it is there."""

    role: PeerRole = Field(
        "diskful",
        description="diskful (a voting replica), tiebreaker (diskless: `disk none`, breaks a tie) "
        "or dr (a diskful replica in another region)",
    )

    @property
    def diskless(self) -> bool:
        return self.role == "tiebreaker"


Peer = Annotated[PeerSpec, BeforeValidator(_role_alone)]


class PairSpec(FrozenModel):
    """A replicated device between two nodes; the harness writes only to its device on the
    primary.  ``replication`` names the product: a DRBD resource (the default), or ``md-nbd``,
    an md RAID1 over a local leg and an NBD device exported by the peer (SIOS DataKeeper's
    architecture), whose ``resource`` is the array's name and ``port`` the export's."""

    primary: Name
    secondary: Name
    replication: Literal["drbd", "md-nbd"] = "drbd"
    resource: Annotated[StrictStr, Field(pattern=RESOURCE_PATTERN), AfterValidator(_not_all)]
    device: Annotated[StrictStr, Field(pattern=REPLICATED_DEVICE_PATTERN)]
    protocol: ReplicationProtocol = "C"
    port: StrictInt = Field(7789, ge=1, le=65535, description="TCP port of the replication (DRBD or the NBD export)")
    disk: Annotated[StrictStr, Field(pattern=r"^/dev/[A-Za-z0-9/_.-]{1,64}$")] | None = Field(
        None, description="md-nbd: each node's leg (the same path on both nodes)"
    )
    nbd: Annotated[StrictStr, Field(pattern=NBD_DEVICE_PATTERN)] = Field(
        "/dev/nbd0", description="md-nbd: the primary's NBD device connected to the peer's export"
    )
    nbd_timeout: StrictInt = Field(5, ge=1, le=600, description="md-nbd: nbd-client request timeout, seconds")
    # by default a fault shapes only this resource's port to the peer; `path` shapes
    # everything to the peer's address (other resources, corosync on it) and must be asked for
    shape: Literal["resource", "path"] = Field(
        "resource", description="what a fault shapes: the resource's port (default) or the whole path to the peer"
    )
    peers: dict[Name, Peer] = Field(
        default_factory=dict,
        description="DRBD 9: the resource's other nodes by node name, each `diskful`, `tiebreaker` or `dr` "
        "(or {role: ...}); never written to, but judged with the pair",
    )

    def shaped_port(self) -> int | None:
        """The port a fault on this pair is limited to; None: the whole path (``shape: path``)."""
        return None if self.shape == "path" else self.port

    @property
    def nodes(self) -> tuple[str, ...]:
        """Every node of the resource: the primary, the secondary, then the peers by name."""
        return (self.primary, self.secondary, *sorted(self.peers))

    @property
    def tiebreakers(self) -> frozenset[str]:
        """The peers that have no disk by configuration."""
        return frozenset(name for name, peer in self.peers.items() if peer.diskless)

    @model_validator(mode="after")
    def _distinct(self) -> PairSpec:
        if self.primary == self.secondary:
            raise ValueError(f"primary and secondary are the same node {self.primary!r}")
        if self.replication == "drbd" and not re.match(DRBD_DEVICE_PATTERN, self.device):
            raise ValueError(f"a DRBD pair's device must be /dev/drbdN, got {self.device!r}")
        if self.replication == "md-nbd":
            if self.device != f"/dev/md/{self.resource}":
                raise ValueError(f"an md-nbd pair's device must be /dev/md/{self.resource}, got {self.device!r}")
            if self.disk is None:
                raise ValueError("an md-nbd pair needs `disk`: the leg on each node")
            if self.protocol == "B":
                raise ValueError("md-nbd replicates synchronously (protocol C) or asynchronously (A), not B")
        elif self.disk is not None:
            raise ValueError("`disk` is for md-nbd pairs; a DRBD resource names its disk in its own configuration")
        return self._peers_fit()

    def _peers_fit(self) -> PairSpec:
        if not self.peers:
            return self
        if self.replication != "drbd":
            raise ValueError("`peers` are a DRBD 9 resource's other nodes; an md-nbd array has two legs only")
        both = sorted({self.primary, self.secondary} & set(self.peers))
        if both:
            raise ValueError(f"peer {both[0]!r} is already the pair's primary or secondary")
        if len(self.peers) > MAX_PEERS:
            raise ValueError(f"{len(self.peers)} peers: a DRBD 9 resource has at most {MAX_PEERS + 2} nodes")
        return self


def pair_problems(pairs: Mapping[str, PairSpec], node_ids: Mapping[str, int | None]) -> list[str]:
    """What makes ``pairs`` impossible on the inventory's nodes (``node_ids``: every node by
    name, with its pinned DRBD node-id or None): a node that does not exist, one device or one
    resource used twice on a node, two nodes of one resource pinned to the same node-id."""
    problems: list[str] = []
    devices: dict[tuple[str, str], str] = {}
    resources: dict[tuple[str, str], str] = {}
    for pname, pair in pairs.items():
        roles = [("primary", pair.primary), ("secondary", pair.secondary)]
        roles += [("peer", name) for name in sorted(pair.peers)]
        for role, node_name in roles:
            if node_name not in node_ids:
                problems.append(f"pair {pname!r}: {role} {node_name!r} is not a node (known: {sorted(node_ids)})")
                continue
            dkey = (node_name, pair.device)
            if dkey in devices:
                problems.append(f"pairs {devices[dkey]!r} and {pname!r} both use {pair.device} on {node_name!r}")
            devices[dkey] = pname
            rkey = (node_name, pair.resource)
            if rkey in resources:
                problems.append(f"pairs {resources[rkey]!r} and {pname!r} both use resource {pair.resource!r}")
            resources[rkey] = pname
        problems += _node_id_problems(pname, pair, node_ids)
    return problems


def _node_id_problems(pname: str, pair: PairSpec, node_ids: Mapping[str, int | None]) -> list[str]:
    """DRBD tells a resource's nodes apart by node-id: two nodes pinned to one id cannot both be in it."""
    seen: dict[int, str] = {}
    problems: list[str] = []
    for name in pair.nodes:
        node_id = node_ids.get(name)
        if node_id is None:
            continue
        if node_id in seen:
            problems.append(
                f"pair {pname!r}: nodes {seen[node_id]!r} and {name!r} both have drbd_node_id {node_id}; "
                f"the nodes of resource {pair.resource!r} need distinct node-ids"
            )
        seen.setdefault(node_id, name)
    return problems
