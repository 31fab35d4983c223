"""What else uses the replication path to the peer, read-only.

LINBIT warns that a delay on the replication path "applies to all resources" using it; a
cluster's corosync ring often runs there too.  A fault shapes only the pair's own port
(:mod:`harness.impair.steering`) unless the pair asks for the whole path (``shape: path``),
but the user should still know who else talks to that peer: preflight names every other DRBD
resource whose peer address is the pair's peer (from ``drbdsetup show``, all resources, the
kernel's view) and every corosync ring address equal to it (``/etc/corosync/corosync.conf``'s
``nodelist``), as a warning.

``drbdsetup show`` gives the peer as ``_remote_host { address ipv4 IP:PORT; }`` in 8.4 and as
``path { _remote_host ipv4 IP:PORT; }`` per connection in 9; corosync's ``nodelist { node {
ringN_addr: ADDR } }`` (corosync.conf(5); corosync's own ``conf/corosync.conf.example.udpu``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from harness.drbd.config import parse_config, walk
from harness.drbd.errors import DrbdOutputError
from harness.inventory.models import Inventory
from harness.remote import CommandResult

__all__ = ["PROBES", "PairPath", "corosync_rings_to", "drbd_resources_to", "pair_paths", "shared_path_checks"]

Status = Literal["ok", "warn", "BLOCK"]

#: read-only; a node without corosync has no file, which is no error
PROBES: Final[Mapping[str, Sequence[str]]] = {
    "path_drbd": ["drbdsetup", "show"],
    "path_corosync": ["sh", "-c", "if [ -r /etc/corosync/corosync.conf ]; then cat /etc/corosync/corosync.conf; fi"],
}
_ADDRESS: Final = re.compile(r"\A(?:\[([^]]+)\]|([^:\s]+))(?::(\d+))?\Z")
_RING: Final = re.compile(r"\Aring(\d+)_addr\Z")


@dataclass(frozen=True)
class PairPath:
    """A pair under test as one node sees it: its resource, the peer's replication address,
    the port a fault is limited to (None: the whole path is shaped)."""

    resource: str
    peer_ip: str
    port: int | None


def pair_paths(inv: Inventory, node: str, pairs: Sequence[str]) -> list[PairPath]:
    """The pairs among ``pairs`` that ``node`` is an end of, seen from it."""
    out = []
    for name in pairs:
        spec = inv.pairs[name]
        if node in (spec.primary, spec.secondary):
            peer = spec.secondary if node == spec.primary else spec.primary
            out.append(PairPath(spec.resource, str(inv.nodes[peer].replication.ip), spec.shaped_port()))
    return out


def _endpoint(args: Sequence[str]) -> tuple[str, str] | None:
    """(address, port) of ``[ipv4|ipv6|ssocks|...] ADDR:PORT``; port may be empty."""
    if not args:
        return None
    found = _ADDRESS.match(args[-1])
    if found is None:
        return None
    return (found.group(1) or found.group(2) or ""), (found.group(3) or "")


def drbd_resources_to(show_text: str, peer_ip: str) -> dict[str, list[str]]:
    """DRBD resource -> its ``ADDR:PORT`` endpoints at ``peer_ip``, from ``drbdsetup show``."""
    out: dict[str, list[str]] = {}
    for resource in parse_config(show_text):
        if resource.block is None or resource.key != "resource" or len(resource.words) < 2:
            continue
        name = resource.words[1]
        for path, statement in walk(resource.block):
            remote = (statement.key == "_remote_host" and statement.block is None) or (
                statement.key == "address" and path[-1:] == ("_remote_host",)
            )
            endpoint = _endpoint(statement.args) if remote else None
            if endpoint is not None and endpoint[0] == peer_ip:
                out.setdefault(name, []).append(f"{endpoint[0]}:{endpoint[1]}" if endpoint[1] else endpoint[0])
    return out


def corosync_rings_to(conf_text: str, peer_ip: str) -> list[str]:
    """``node N ringK_addr`` entries of corosync.conf's nodelist that are ``peer_ip``."""
    stack: list[str] = []
    node: dict[str, str] = {}
    found: list[str] = []
    for raw in conf_text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line.endswith("{"):
            stack.append(line[:-1].strip())
            node = {} if stack[-2:] == ["nodelist", "node"] else node
        elif line == "}":
            if stack[-2:] == ["nodelist", "node"]:
                label = node.get("name") or (f"nodeid {node['nodeid']}" if "nodeid" in node else "without a name")
                found += [f"node {label} {key}" for key in sorted(node) if _RING.match(key) and node[key] == peer_ip]
            if stack:
                stack.pop()
        elif ":" in line and stack[-2:] == ["nodelist", "node"]:
            key, _, value = line.partition(":")
            node[key.strip()] = value.strip()
    return found


def _describe(pair: PairPath, users: list[str]) -> str:
    effect = (
        f"a fault on {pair.resource} shapes only port {pair.port}, not them"
        if pair.port is not None
        else f"{pair.resource} has shape: path, so a fault delays them too"
    )
    return f"{pair.peer_ip} is also used by {', '.join(users)}: {effect}"


def shared_path_checks(
    results: Mapping[str, CommandResult], pairs: Sequence[PairPath]
) -> list[tuple[str, Status, str]]:
    """One ``(check, status, detail)`` per pair: ``warn`` naming the other DRBD resources and
    corosync rings that use the pair's peer address, ``ok`` when none does."""
    drbd = results["path_drbd"]
    out: list[tuple[str, Status, str]] = []
    for pair in pairs:
        users: list[str] = []
        if drbd.ok:
            try:
                found = drbd_resources_to(drbd.stdout, pair.peer_ip)
            except DrbdOutputError as exc:
                out.append((f"shared path {pair.resource}", "warn", f"cannot read `drbdsetup show`: {exc}"))
                continue
            users += [
                f"DRBD resource {res} ({', '.join(ends)})"
                for res, ends in sorted(found.items())
                if res != pair.resource
            ]
        elif drbd.exit_code != 127:  # 127: no drbdsetup here, so no DRBD resource either
            why = (drbd.stderr.strip() or f"exit {drbd.exit_code}").splitlines()[0]
            out.append((f"shared path {pair.resource}", "warn", f"cannot list DRBD resources: {why}"))
            continue
        users += [f"corosync {ring}" for ring in corosync_rings_to(results["path_corosync"].stdout, pair.peer_ip)]
        status: Status = "warn" if users else "ok"
        detail = _describe(pair, users) if users else f"no other DRBD resource or corosync ring uses {pair.peer_ip}"
        out.append((f"shared path {pair.resource}", status, detail))
    return out
