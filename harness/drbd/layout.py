"""A resource's connections as its configuration declares them: which peers, which settings each.

DRBD 9 keeps network settings per connection: one resource may replicate with protocol C
inside a site and protocol A to a disaster-recovery node, and a third node, often diskless,
makes quorum work.
The audit must therefore judge the pair under test by its own connection and count the nodes;
this module reads both views into one shape:

* ``drbdsetup show RES`` (what the kernel runs), seen from this node: DRBD 9 prints one
  ``connection { _peer_node_id N; path { _this_host ...; _remote_host ...; } net { _name "P"; } }``
  per peer; DRBD 8.4 prints a single implicit connection (``net`` and ``_remote_host`` directly
  in the resource);
* ``drbdadm dump RES`` (the configuration file), seen from nowhere in particular: ``on HOST``
  sections, ``connection { host A ...; host B ...; }`` blocks, ``connection-mesh { hosts ...; }``,
  or, for two hosts and neither, the one implicit connection between them.

Settings resolve as drbdadm applies them: a connection's own ``net``/``disk`` over the mesh's
over the resource's over ``common``'s, key by key.  :class:`Endpoint` says how the harness
knows a node (its inventory name, host name, replication address), :class:`PairEnds` the two
ends of the pair under test.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Final

from harness.drbd.config import Statement, walk

__all__ = [
    "ConnectionConfig",
    "Endpoint",
    "Options",
    "PairEnds",
    "ResourceLayout",
    "layout_of_dump",
    "layout_of_show",
    "option_leaves",
]

Options = Mapping[str, Sequence[tuple[str, ...]]]
#: Statements that say where a connection goes, not how it behaves.
_WHERE: Final = frozenset({"host", "hosts", "path", "address", "port", "_peer_node_id", "_cstate", "_name"})


@dataclass(frozen=True)
class Endpoint:
    """How the harness knows one node: names DRBD may call it by, and its replication address."""

    names: frozenset[str] = frozenset()
    address: str | None = None

    def matches(self, names: Iterable[str], addresses: Iterable[str]) -> bool:
        return bool(self.names & set(names)) or (self.address is not None and self.address in set(addresses))

    @property
    def known(self) -> bool:
        return bool(self.names) or self.address is not None


@dataclass(frozen=True)
class PairEnds:
    """The node the audit runs on and its peer in the pair under test."""

    local: Endpoint
    peer: Endpoint


@dataclass(frozen=True)
class ConnectionConfig:
    """One connection: the hosts at its ends (names and addresses DRBD gives them) and its own
    settings, already merged over the resource's."""

    ends: tuple[tuple[str, ...], ...]
    addresses: tuple[str, ...]
    options: Options
    node_id: int | None = None

    def names(self) -> set[str]:
        return {name for end in self.ends for name in end}

    def label(self, local: Endpoint | None = None) -> str:
        """The peer's name seen from ``local`` (both ends joined by ``–`` when it cannot tell)."""
        others = [e for e in self.ends if local is None or not local.matches(e, ())]
        shown = others if len(others) == 1 else list(self.ends)
        text = "–".join(end[0] for end in shown if end) or (f"node {self.node_id}" if self.node_id is not None else "")
        return text or "peer"


@dataclass(frozen=True)
class ResourceLayout:
    """The resource's connections, how many nodes it spans and which of them are diskless."""

    connections: tuple[ConnectionConfig, ...]
    nodes: int
    #: options outside any connection (``options { quorum ...; }``, handlers), ``common``'s merged in
    resource_options: Options = field(default_factory=dict)
    diskless: tuple[str, ...] = ()
    #: this layout came from ``drbdsetup show``: every connection is this node's own
    local_view: bool = False
    #: ``drbdsetup show`` on a node configured without a disk (``disk none``: a tie-breaker)
    local_diskless: bool = False

    def own(self, local: Endpoint) -> tuple[ConnectionConfig, ...]:
        """The connections this node takes part in (all of them when it cannot tell)."""
        if self.local_view or not local.known:
            return self.connections
        mine = tuple(c for c in self.connections if any(local.matches(end, c.addresses) for end in c.ends))
        return mine or self.connections

    def pair_connection(self, ends: PairEnds | None) -> ConnectionConfig | None:
        """The connection of the pair under test; the only one when there is one, else the one
        whose far end is the peer (and near end this node, when it can tell); None when it
        cannot be told."""
        candidates = self.own(ends.local) if ends is not None else self.connections
        if len(candidates) == 1:
            return candidates[0]
        if ends is None:
            return None
        found = [c for c in candidates if ends.peer.matches(c.names(), c.addresses)]
        return found[0] if len(found) == 1 else None


# -- reading the configuration tree -------------------------------------------------------------
def option_leaves(
    statements: Iterable[Statement], *, skip: frozenset[str] = frozenset()
) -> dict[str, list[tuple[str, ...]]]:
    """Every ``key args;`` below ``statements`` by key, in order, leaving out blocks named in ``skip``."""
    found: dict[str, list[tuple[str, ...]]] = {}
    for path, statement in walk(tuple(statements)):
        if skip & set(path) or statement.key in skip:
            continue
        if statement.block is None:
            found.setdefault(statement.key, []).append(statement.args)
    return found


def merged(*layers: Options) -> dict[str, list[tuple[str, ...]]]:
    """Options of later layers replace earlier ones key by key (drbdadm's inheritance)."""
    out: dict[str, list[tuple[str, ...]]] = {}
    for layer in layers:
        out.update({key: list(values) for key, values in layer.items()})
    return out


def _ip(args: Sequence[str]) -> str | None:
    """The address in ``[ipv4|ipv6] ADDR:PORT`` (brackets and port dropped), None without one."""
    if not args:
        return None
    word = args[-1]
    if word.startswith("["):
        return word[1 : word.find("]")] if "]" in word else None
    return word.rsplit(":", 1)[0] if word.count(":") == 1 else word


def _after(words: Sequence[str], key: str) -> str | None:
    return words[words.index(key) + 1] if key in words[:-1] else None


def _connection_options(block: Sequence[Statement]) -> dict[str, list[tuple[str, ...]]]:
    return {k: v for k, v in option_leaves(block, skip=_WHERE).items() if not k.startswith("_")}


def layout_of_show(resource: Sequence[Statement]) -> ResourceLayout:
    """The layout in ``drbdsetup show RES``'s resource blocks (this node's view)."""
    # 8.4 keeps `fencing` in the volume's disk section under _this_host: it counts
    top = option_leaves(resource, skip=frozenset({"connection", "_remote_host"}))
    connections: list[ConnectionConfig] = []
    for block in (s.block for s in resource if s.key == "connection" and s.block is not None):
        leaves = option_leaves(block)
        name = next((args[0] for args in leaves.get("_name", ()) if args), None)
        node = next((args[0] for args in leaves.get("_peer_node_id", ()) if args), None)
        remote = [ip for args in leaves.get("_remote_host", ()) if (ip := _ip(args)) is not None]
        connections.append(
            ConnectionConfig(
                ends=((name,),) if name else (),
                addresses=tuple(remote),
                options=merged(top, _connection_options(block)),
                node_id=int(node) if node is not None and node.isdigit() else None,
            )
        )
    if not connections:  # DRBD 8.4: one implicit connection, its settings in the resource
        remote = [
            ip
            for s in resource
            if s.key == "_remote_host" and s.block is not None
            for args in option_leaves(s.block).get("address", ())
            if (ip := _ip(args)) is not None
        ]
        connections.append(ConnectionConfig(ends=(), addresses=tuple(remote), options=top))
    here = [s.block for s in resource if s.key == "_this_host" and s.block is not None]
    diskless = any(("none",) in option_leaves(block).get("disk", ()) for block in here)
    return ResourceLayout(tuple(connections), 1 + len(connections), top, local_view=True, local_diskless=diskless)


def _hosts(resource: Sequence[Statement]) -> tuple[dict[str, str | None], list[str]]:
    """``on HOST`` sections: {host: its address}, and the hosts whose disk is ``none``."""
    addresses: dict[str, str | None] = {}
    diskless: list[str] = []
    for statement in resource:
        if statement.key != "on" or statement.block is None:
            continue
        leaves = option_leaves(statement.block)
        ip = next((ip for args in leaves.get("address", ()) if (ip := _ip(args)) is not None), None)
        for host in statement.args:
            addresses[host] = ip
            if ("none",) in leaves.get("disk", ()):
                diskless.append(host)
    return addresses, diskless


def _dump_connection(block: Sequence[Statement], base: Options, hosts: Mapping[str, str | None]) -> ConnectionConfig:
    ends: list[str] = []
    addresses: list[str] = []
    for _path, statement in walk(tuple(block)):
        if statement.key == "host" and statement.args:
            if statement.args[0] not in ends:
                ends.append(statement.args[0])
            ip = _after(statement.words, "address")
            addresses.append(_ip((ip,)) or "" if ip else hosts.get(statement.args[0]) or "")
    return ConnectionConfig(
        ends=tuple((e,) for e in ends),
        addresses=tuple(a for a in addresses if a),
        options=merged(base, _connection_options(block)),
    )


def layout_of_dump(resource: Sequence[Statement], common: Options) -> ResourceLayout:
    """The layout in ``drbdadm dump RES``'s resource block, ``common``'s options under it."""
    top = merged(common, option_leaves(resource, skip=frozenset({"connection", "connection-mesh"})))
    hosts, diskless = _hosts(resource)
    connections = [
        _dump_connection(s.block, top, hosts) for s in resource if s.key == "connection" and s.block is not None
    ]
    linked = {frozenset(n for end in c.ends for n in end) for c in connections}
    for mesh in (s.block for s in resource if s.key == "connection-mesh" and s.block is not None):
        members = [h for args in option_leaves(mesh).get("hosts", ()) for h in args]
        options = merged(top, _connection_options(mesh))
        for a, b in combinations(members, 2):
            if frozenset({a, b}) not in linked:
                ips = tuple(ip for ip in (hosts.get(a), hosts.get(b)) if ip)
                connections.append(ConnectionConfig(ends=((a,), (b,)), addresses=ips, options=options))
    if not connections and len(hosts) == 2:  # two `on` sections: the implicit connection
        a, b = hosts
        ips = tuple(ip for ip in hosts.values() if ip)
        connections.append(ConnectionConfig(ends=((a,), (b,)), addresses=ips, options=top))
    return ResourceLayout(tuple(connections), len(hosts) or 1 + len(connections), top, tuple(diskless))
