"""``drbdsetup status --json`` (DRBD 9 utils only), parsed into the same records as events2.

Peer devices sit under ``peer_devices`` with an underscore while every other key is
hyphenated.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from harness.drbd.errors import DrbdOutputError
from harness.drbd.state import Connection, Device, PeerDevice, ResourceState

__all__ = ["parse_status_json"]

_SUSPEND_REASONS: Final = (
    ("suspended-user", "user"),
    ("suspended-no-data", "no-data"),
    ("suspended-fencing", "fencing"),
    ("suspended-quorum", "quorum"),
)


def _opt_int(obj: Mapping[str, object], key: str) -> int | None:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _opt_bool(obj: Mapping[str, object], key: str) -> bool | None:
    value = obj.get(key)
    return value if isinstance(value, bool) else None


def _req_str(obj: Mapping[str, object], key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise DrbdOutputError(f"drbdsetup status --json: {where} has no string {key!r}")
    return value


def _objects(obj: Mapping[str, object], key: str, where: str) -> list[Mapping[str, object]]:
    value = obj.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise DrbdOutputError(f"drbdsetup status --json: {where}.{key} is not a list of objects")
    return value


def _suspended_word(res: Mapping[str, object]) -> str:
    reasons = [word for key, word in _SUSPEND_REASONS if res.get(key) is True]
    if reasons:
        return ",".join(reasons)
    # Older utils only print the combined boolean.
    return "yes" if res.get("suspended") is True else "no"


def _resource_from_json(res: Mapping[str, object]) -> ResourceState:
    name = _req_str(res, "name", "resource")
    where = f"resource {name}"
    devices = tuple(
        Device(
            volume=_opt_int(d, "volume") or 0,
            minor=_opt_int(d, "minor"),
            disk=_req_str(d, "disk-state", f"{where} device"),
            size_kib=_opt_int(d, "size"),
            read_kib=_opt_int(d, "read"),
            written_kib=_opt_int(d, "written"),
            al_writes=_opt_int(d, "al-writes"),
            bm_writes=_opt_int(d, "bm-writes"),
            upper_pending=_opt_int(d, "upper-pending"),
            lower_pending=_opt_int(d, "lower-pending"),
            client=_opt_bool(d, "client"),
            quorum=_opt_bool(d, "quorum"),
        )
        for d in _objects(res, "devices", where)
    )
    connections: list[Connection] = []
    peer_devices: list[PeerDevice] = []
    for c in _objects(res, "connections", where):
        node_id = _opt_int(c, "peer-node-id")
        conn_name = c.get("name") if isinstance(c.get("name"), str) else None
        assert conn_name is None or isinstance(conn_name, str)
        connections.append(
            Connection(
                peer_node_id=node_id,
                conn_name=conn_name,
                state=_req_str(c, "connection-state", f"{where} connection"),
                peer_role=str(c.get("peer-role", "Unknown")),
                congested=_opt_bool(c, "congested"),
                ap_in_flight_sectors=_opt_int(c, "ap-in-flight"),
                rs_in_flight_sectors=_opt_int(c, "rs-in-flight"),
            )
        )
        for p in _objects(c, "peer_devices", f"{where} connection"):
            done = p.get("percent-resync-done")
            peer_devices.append(
                PeerDevice(
                    peer_node_id=node_id,
                    conn_name=conn_name,
                    volume=_opt_int(p, "volume") or 0,
                    replication=_req_str(p, "replication-state", f"{where} peer device"),
                    peer_disk=_req_str(p, "peer-disk-state", f"{where} peer device"),
                    resync_suspended=str(p.get("resync-suspended", "no")),
                    received_kib=_opt_int(p, "received"),
                    sent_kib=_opt_int(p, "sent"),
                    out_of_sync_kib=_opt_int(p, "out-of-sync"),
                    pending=_opt_int(p, "pending"),
                    unacked=_opt_int(p, "unacked"),
                    done_percent=float(done) if isinstance(done, int | float) else None,
                    peer_client=_opt_bool(p, "peer-client"),
                )
            )
    write_ordering = res.get("write-ordering")
    return ResourceState(
        name=name,
        role=_req_str(res, "role", where),
        suspended=_suspended_word(res),
        connections=tuple(connections),
        devices=devices,
        peer_devices=tuple(peer_devices),
        write_ordering=write_ordering if isinstance(write_ordering, str) else None,
    )


def parse_status_json(text: str) -> tuple[ResourceState, ...]:
    """Parse ``drbdsetup status --json [RES]`` (DRBD 9 only; a JSON array of resources)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DrbdOutputError(f"drbdsetup status --json: not JSON ({exc})") from None
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise DrbdOutputError("drbdsetup status --json: expected a JSON array of resource objects")
    return tuple(_resource_from_json(r) for r in data)
