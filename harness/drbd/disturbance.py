"""What one ``drbdsetup events2`` event says about a measurement window: a disturbance, or nothing.

:class:`EventRules` judges events in stream order and remembers what it needs for that: the last
value of every key per object (a stream captured without ``--diff`` prints only the new value,
so "old -> new" comes from memory), the out-of-sync of every peer device when the window
started, and the connection names DRBD 8.4 leaves off its StandAlone lines.

A disturbance is anything after which a number measured in the window describes something else
than replication of the workload:

* the connection leaves ``Connected`` (``Timeout``, ``ProtocolError``, ``NetworkFailure`` and
  ``BrokenPipe`` are called out as failure states), a connection or volume is destroyed, or
  DRBD reports split brain (the ``split-brain``/``initial-split-brain`` handler calls, which are
  all DRBD 9.2 prints of it, or ``sync-state:SplitBrain`` where utils print that);
* a local or peer disk leaves ``UpToDate`` (``Failed`` is called out as an I/O error), or a
  DRBD 9 device loses quorum (``quorum:no``).  Diskless is no disturbance on a node that is
  diskless by design: the local device says ``client:yes``, the peer device ``peer-client:yes``,
  or the configuration names the peer among the diskless ones (a diskful node whose own
  configuration still keeps a bitmap for the tie-breaker prints it ``peer-client:no``);
* replication leaves ``Established``: resync (``WFBitMap*``, ``WFSyncUUID``, ``StartingSync*``,
  ``Sync*``, ``PausedSync*``), online verify (``Verify*``), congestion (``Ahead``/``Behind``) or
  ``Off``;
* I/O is suspended (``suspended:`` anything but ``no``);
* ``out-of-sync`` grows above its value at the start of the window (not toward a peer without a
  disk by design: nothing can be out of sync on it);
* DRBD calls a handler (``call helper``: before-resync, fence-peer, split-brain ...), which it
  only does on a state change the harness did not ask for.

``blocked:`` is deliberately not a disturbance: under a saturating write load DRBD reports
``blocked:upper``/``lower`` as back-pressure, which is part of what is being measured.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, NamedTuple

from harness.drbd.events import Event, Scalar, format_value
from harness.drbd.state import (
    CONGESTION_STATES,
    CONNECTED,
    DISKLESS,
    ESTABLISHED,
    FORBIDDEN_CONNECTION_STATES,
    FORBIDDEN_DISK_STATES,
    RESYNC_STATES,
    UP_TO_DATE,
    VERIFY_STATES,
)

__all__ = ["EventRules", "Finding"]

#: The handlers DRBD calls on split brain: ``initial-split-brain`` as soon as it finds one,
#: ``split-brain`` when it did not resolve it by itself and drops the connection.
_SPLIT_BRAIN_HANDLERS: Final = {
    "initial-split-brain": "split brain detected with {peer}: DRBD called the initial-split-brain handler",
    "split-brain": "split brain with {peer}, left unresolved: DRBD called the split-brain handler",
}
_JUDGED_OBJECTS: Final = frozenset({"resource", "connection", "device", "peer-device"})


class Finding(NamedTuple):
    """One disturbance: ``text`` says it in full, ``label`` names it in a list of them all."""

    text: str
    label: str


def _moved(subject: str, change: str, event: Event, old: str | None, new: str) -> str:
    if event.action == "exists":
        return f"{subject} was {new} when the watch started"
    if old is not None and old != new:
        return f"{subject} {change}: {old} -> {new}"
    return f"{subject} {change}: {new}"


def _replication_change(new: str) -> tuple[str, str]:
    """(how the reason says it, how the list names it) for a replication state not Established."""
    if new in RESYNC_STATES:
        return "entered resync", "resync with {peer}"
    if new in VERIFY_STATES:
        return "entered online verify", "online verify with {peer}"
    if new in CONGESTION_STATES:
        return "fell behind (congestion, pull-ahead)", f"{new} toward {{peer}}"
    return "left Established", f"replication to {{peer}} {new}"


class EventRules:
    """The rules, applied to one event at a time in stream order.

    ``diskless`` names the peers that are diskless by configuration, or is None when the
    configuration is not known; :attr:`diskless_at_start` holds the links (resource, peer key)
    whose Diskless peer the window sets aside although no configuration names it."""

    def __init__(self, diskless: frozenset[str] | None = None) -> None:
        self.diskless = diskless
        self.diskless_at_start: set[tuple[str, str]] = set()
        self._last: dict[tuple[str, str], Scalar] = {}
        self._oos_baseline: dict[str, int] = {}
        # 8.4 omits conn-name on StandAlone lines; remember names per peer-node-id.
        self._conn_names: dict[tuple[str, str], str] = {}

    @staticmethod
    def peer_key(event: Event) -> str:
        return event.text("peer-node-id") or event.text("conn-name") or ""

    def peer_label(self, event: Event, name: str) -> str:
        node = event.text("peer-node-id")
        conn_name = event.text("conn-name")
        if node is not None and conn_name:
            self._conn_names[(name, node)] = conn_name
        elif node is not None:
            conn_name = self._conn_names.get((name, node))
        if conn_name:
            return conn_name
        return f"node {node}" if node is not None else "peer"

    @staticmethod
    def _object_id(event: Event, name: str) -> str:
        node = EventRules.peer_key(event)
        volume = event.text("volume") or "0"
        return {
            "resource": name,
            "connection": f"{name}/conn/{node}",
            "device": f"{name}/dev/{volume}",
            "peer-device": f"{name}/pd/{node}/{volume}",
        }.get(event.kind, f"{name}/{event.kind}")

    def remember(self, event: Event, name: str) -> None:
        """Keep the event's values without judging it (a link the window sets aside)."""
        obj = self._object_id(event, name)
        for key, _ in event.fields:
            value = event.get(key)
            if value is not None:
                self._last[(obj, key)] = value

    def judge(self, event: Event, name: str) -> Finding | None:
        """The disturbance ``event`` of resource ``name`` is, or None; its values are kept."""
        try:
            return self._rules(event, name, self._object_id(event, name))
        finally:
            self.remember(event, name)

    def _rules(self, event: Event, name: str, obj: str) -> Finding | None:
        if event.kind == "helper":
            return self._helper(event, name) if event.action == "call" else None
        if event.action == "destroy" and event.kind in _JUDGED_OBJECTS:
            what = f"connection to {self.peer_label(event, name)}" if event.kind == "connection" else event.kind
            return Finding(f"DRBD destroyed the {what} (resource left Connected)", f"{what} destroyed")
        if event.action not in {"exists", "create", "change"}:
            return None
        rule: Callable[[Event, str, str], Finding | None] | None = {
            "resource": self._resource,
            "connection": self._connection,
            "device": self._device,
            "peer-device": self._peer_device,
        }.get(event.kind)
        return None if rule is None else rule(event, name, obj)

    def _transition(self, event: Event, obj: str, key: str) -> tuple[str | None, str | None]:
        """(old, new) for ``key``; ``old`` from ``--diff`` or from the last value seen."""
        new = event.get(key)
        if new is None:
            return None, None
        old = event.old(key)
        if old is None:
            old = self._last.get((obj, key))
        return (None if old is None else format_value(old)), format_value(new)

    def _said(self, event: Event, obj: str, key: str) -> str | None:
        """``key``'s value in this event, else the last one seen for the object."""
        value = event.get(key)
        value = self._last.get((obj, key)) if value is None else value
        return None if value is None else format_value(value)

    # -- one rule per object kind ------------------------------------------------------------
    def _helper(self, event: Event, name: str) -> Finding:
        helper = event.text("helper") or "unknown"
        split = _SPLIT_BRAIN_HANDLERS.get(helper)
        if split is not None:
            peer = self.peer_label(event, name)
            return Finding(split.format(peer=peer), f"split brain with {peer}")
        return Finding(f"DRBD called the {helper} handler", f"{helper} handler")

    def _resource(self, event: Event, name: str, obj: str) -> Finding | None:
        old, new = self._transition(event, obj, "suspended")
        if new is None or new == "no":
            return None
        if event.action == "exists":
            return Finding(f"I/O was suspended ({new}) when the watch started", f"I/O suspended ({new})")
        return Finding(_moved("I/O", "suspended", event, old, new), f"I/O suspended ({new})")

    def _connection(self, event: Event, name: str, obj: str) -> Finding | None:
        peer = self.peer_label(event, name)
        old, new = self._transition(event, obj, "connection")
        if new is not None and new != CONNECTED:
            change = "failed (forbidden state)" if new in FORBIDDEN_CONNECTION_STATES else "left Connected"
            return Finding(_moved(f"connection to {peer}", change, event, old, new), f"{peer} {new}")
        if event.text("sync-state") == "SplitBrain":
            return Finding(f"split brain detected with {peer}", f"split brain with {peer}")
        return None

    def _device(self, event: Event, name: str, obj: str) -> Finding | None:
        volume = event.text("volume") or "0"
        old, new = self._transition(event, obj, "disk")
        by_design = new == DISKLESS and self._said(event, obj, "client") == "yes"
        if new is not None and new != UP_TO_DATE and not by_design:
            change = "failed (I/O error)" if new in FORBIDDEN_DISK_STATES else "left UpToDate"
            return Finding(_moved(f"local disk of volume {volume}", change, event, old, new), f"local disk {new}")
        # DRBD 9: without quorum the device fails or freezes I/O (on-no-quorum), UpToDate or not
        old, new = self._transition(event, obj, "quorum")
        if new != "no":
            return None
        if event.action == "exists":
            return Finding(f"volume {volume} had no quorum when the watch started", "no quorum")
        return Finding(_moved(f"volume {volume}", "lost quorum", event, old, new), "quorum lost")

    def diskless_by_design(self, event: Event, name: str, obj: str) -> bool:
        """The peer of this peer-device event has no disk on purpose, as far as the window knows."""
        if self._said(event, obj, "peer-client") == "yes":
            return True
        if self.diskless is not None:
            return self.peer_label(event, name) in self.diskless
        set_aside = (name, self.peer_key(event)) in self.diskless_at_start
        return set_aside and self._said(event, obj, "peer-disk") == DISKLESS

    def _peer_device(self, event: Event, name: str, obj: str) -> Finding | None:
        peer = self.peer_label(event, name)
        target = f"{peer} volume {event.text('volume') or '0'}"
        old, new = self._transition(event, obj, "replication")
        if new is not None and new != ESTABLISHED:
            change, label = _replication_change(new)
            return Finding(_moved(f"replication to {target}", change, event, old, new), label.format(peer=peer))
        old, new = self._transition(event, obj, "peer-disk")
        by_design = self.diskless_by_design(event, name, obj)
        if new is not None and new != UP_TO_DATE and not (new == DISKLESS and by_design):
            change = "failed (I/O error)" if new in FORBIDDEN_DISK_STATES else "left UpToDate"
            return Finding(_moved(f"peer disk of {target}", change, event, old, new), f"{peer} disk {new}")
        oos = event.number("out-of-sync")
        if oos is None or by_design:
            return None
        baseline = self._oos_baseline.setdefault(obj, oos)
        if oos <= baseline:
            return None
        grew = f"out-of-sync with {target} grew from {baseline} to {oos} KiB"
        return Finding(grew, f"out-of-sync with {peer} growing")
