"""The fold of a ``drbdsetup events2`` stream into the current state of every resource.

:class:`EventFold` applies events in order — ``exists``/``create`` set an object, ``change``
merges the keys it carries (events2 prints only what changed), ``destroy`` removes it — and
builds :class:`~harness.drbd.state.ResourceState` snapshots on demand.

Two things DRBD 9 prints only as events are kept too: a ``- skipped N`` line counts into
:attr:`EventFold.skipped` (the state shown may miss what those events changed), and a call of
the ``split-brain`` handler on a connection marks that connection as in split brain until it is
Connected again (9.2 prints no ``SplitBrain`` state anywhere; the handler call is the only word).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from harness.drbd.events import Diff, Event, Scalar, format_value, parse_events
from harness.drbd.state import Connection, Device, PeerDevice, ResourceState

__all__ = ["EventFold", "fold_events", "resource_from_events2"]


ConnKey = int | str


@dataclass
class _Resource:
    fields: dict[str, Scalar] = field(default_factory=dict)
    connections: dict[ConnKey, dict[str, Scalar]] = field(default_factory=dict)
    devices: dict[int, dict[str, Scalar]] = field(default_factory=dict)
    peer_devices: dict[tuple[ConnKey, int], dict[str, Scalar]] = field(default_factory=dict)
    #: connections DRBD called the split-brain handler for and that have not connected since
    split_brain: set[ConnKey] = field(default_factory=set)


def _conn_key(event: Event) -> ConnKey:
    # DRBD 8.4 drops conn-name from StandAlone lines but always prints peer-node-id, and
    # DRBD 9 prints both; the node id is therefore the stable key across versions.
    node = event.number("peer-node-id")
    if node is not None:
        return node
    return f"conn:{event.text('conn-name') or ''}"


def _current(event: Event) -> dict[str, Scalar]:
    return {k: (v.new if isinstance(v, Diff) else v) for k, v in event.fields}


def _int(d: dict[str, Scalar], key: str) -> int | None:
    value = d.get(key)
    return value if isinstance(value, int) else None


def _float(d: dict[str, Scalar], key: str) -> float | None:
    value = d.get(key)
    return float(value) if isinstance(value, int | float) else None


def _bool(d: dict[str, Scalar], key: str) -> bool | None:
    value = d.get(key)
    return {"yes": True, "no": False}.get(value) if isinstance(value, str) else None


def _str(d: dict[str, Scalar], key: str, default: str) -> str:
    value = d.get(key)
    return default if value is None else format_value(value)


def _opt_str(d: dict[str, Scalar], key: str) -> str | None:
    value = d.get(key)
    return None if value is None else format_value(value)


K = TypeVar("K", bound=Hashable)

#: The handler DRBD calls when it found split brain and did not resolve it by itself
#: (``initial-split-brain`` comes first on every split brain, resolved or not).
SPLIT_BRAIN_HANDLER = "split-brain"


def _merge(target: dict[str, Scalar], event: Event) -> None:
    # exists/create describe the whole object; change carries only the keys that changed.
    if event.action in {"exists", "create"}:
        target.clear()
    target.update(_current(event))


def _apply_object(table: dict[K, dict[str, Scalar]], key: K, event: Event) -> None:
    if event.action == "destroy":
        table.pop(key, None)
    else:
        # A change for an object never announced (drbd-utils tests "change-before-exists")
        # creates it rather than being dropped.
        _merge(table.setdefault(key, {}), event)


class EventFold:
    """Current state of every resource seen in a stream of events."""

    def __init__(self) -> None:
        self._resources: dict[str, _Resource] = {}
        #: True once ``exists -`` was seen: the snapshot is complete, not partial.
        self.initial_dump_complete = False
        #: events drbdsetup said it missed (``- skipped N`` lines), summed
        self.skipped = 0

    def apply(self, event: Event) -> None:
        if event.ends_initial_dump:
            self.initial_dump_complete = True
            return
        if event.skipped is not None:
            self.skipped += event.skipped
            return
        name = event.resource
        if name is None or event.kind in {"path", "-"}:
            # paths are not part of the health model
            return
        if event.kind == "helper":
            self._helper(name, event)
        elif event.action == "rename" and event.kind == "resource":
            new_name = event.text("new_name")
            if new_name and name in self._resources:
                self._resources[new_name] = self._resources.pop(name)
        elif event.kind == "resource" and event.action == "destroy":
            self._resources.pop(name, None)
        else:
            self._object(self._resources.setdefault(name, _Resource()), event)

    def _helper(self, name: str, event: Event) -> None:
        # only the split-brain handler changes what the fold says; other calls change no state
        res = self._resources.get(name)
        if res is not None and event.action == "call" and event.text("helper") == SPLIT_BRAIN_HANDLER:
            res.split_brain.add(_conn_key(event))

    @staticmethod
    def _object(res: _Resource, event: Event) -> None:
        if event.kind == "resource":
            _merge(res.fields, event)
        elif event.kind == "connection":
            key = _conn_key(event)
            _apply_object(res.connections, key, event)
            if event.action == "destroy":
                # The kernel destroys a connection's peer devices with it.
                res.peer_devices = {k: v for k, v in res.peer_devices.items() if k[0] != key}
            if event.action == "destroy" or event.get("connection") == "Connected":
                res.split_brain.discard(key)
        elif event.kind == "device":
            _apply_object(res.devices, event.number("volume") or 0, event)
        elif event.kind == "peer-device":
            _apply_object(res.peer_devices, (_conn_key(event), event.number("volume") or 0), event)
        # Any other object kind comes from a newer drbd-utils and is not part of the health model.

    def apply_all(self, events: Iterable[Event]) -> EventFold:
        for event in events:
            self.apply(event)
        return self

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._resources)

    def resource(self, name: str) -> ResourceState | None:
        res = self._resources.get(name)
        return None if res is None else _build(name, res)

    def resources(self) -> dict[str, ResourceState]:
        return {name: _build(name, res) for name, res in self._resources.items()}


def _sort_key(key: ConnKey) -> tuple[int, str]:
    return (0, f"{key:010d}") if isinstance(key, int) else (1, key)


def _build(name: str, res: _Resource) -> ResourceState:
    f = res.fields
    connections = tuple(
        Connection(
            peer_node_id=_int(c, "peer-node-id"),
            conn_name=_opt_str(c, "conn-name"),
            state=_str(c, "connection", "Unknown"),
            peer_role=_str(c, "role", "Unknown"),
            congested=_bool(c, "congested"),
            ap_in_flight_sectors=_int(c, "ap-in-flight"),
            rs_in_flight_sectors=_int(c, "rs-in-flight"),
            sync_state=_opt_str(c, "sync-state"),
            split_brain=key in res.split_brain,
        )
        for key, c in sorted(res.connections.items(), key=lambda kv: _sort_key(kv[0]))
    )
    devices = tuple(
        Device(
            volume=volume,
            minor=_int(d, "minor"),
            disk=_str(d, "disk", "DUnknown"),
            size_kib=_int(d, "size"),
            read_kib=_int(d, "read"),
            written_kib=_int(d, "written"),
            al_writes=_int(d, "al-writes"),
            bm_writes=_int(d, "bm-writes"),
            upper_pending=_int(d, "upper-pending"),
            lower_pending=_int(d, "lower-pending"),
            al_suspended=_bool(d, "al-suspended"),
            blocked=_str(d, "blocked", "no"),
            client=_bool(d, "client"),
            quorum=_bool(d, "quorum"),
            backing_dev=_opt_str(d, "backing_dev"),
        )
        for volume, d in sorted(res.devices.items())
    )
    peer_devices = tuple(
        PeerDevice(
            peer_node_id=_int(p, "peer-node-id"),
            conn_name=_opt_str(p, "conn-name"),
            volume=volume,
            replication=_str(p, "replication", "Off"),
            peer_disk=_str(p, "peer-disk", "DUnknown"),
            resync_suspended=_str(p, "resync-suspended", "no"),
            received_kib=_int(p, "received"),
            sent_kib=_int(p, "sent"),
            out_of_sync_kib=_int(p, "out-of-sync"),
            pending=_int(p, "pending"),
            unacked=_int(p, "unacked"),
            done_percent=_float(p, "done"),
            peer_client=_bool(p, "peer-client"),
        )
        for (_, volume), p in sorted(res.peer_devices.items(), key=lambda kv: (_sort_key(kv[0][0]), kv[0][1]))
    )
    return ResourceState(
        name=name,
        role=_str(f, "role", "Unknown"),
        suspended=_str(f, "suspended", "no"),
        connections=connections,
        devices=devices,
        peer_devices=peer_devices,
        write_ordering=_opt_str(f, "write-ordering"),
        may_promote=_bool(f, "may_promote"),
        promotion_score=_int(f, "promotion_score"),
    )


def fold_events(events: Iterable[Event]) -> dict[str, ResourceState]:
    """The state of every resource after applying ``events`` in order."""
    return EventFold().apply_all(events).resources()


def resource_from_events2(text: str, resource: str) -> ResourceState | None:
    """``resource``'s state from ``drbdsetup events2 --now [--statistics]`` output (None if absent)."""
    return EventFold().apply_all(parse_events(text)).resource(resource)
