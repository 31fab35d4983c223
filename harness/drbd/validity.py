"""Was DRBD healthy for the whole measurement window?  A verdict from the window's events2 stream.

The harness streams ``drbdsetup events2 --timestamps --statistics RES`` on the node while fio
runs (see :mod:`harness.drbd.replication`) and hands the capture to :class:`RunWatch`.  A number
measured while DRBD was resyncing, disconnected or suspended describes something else than
replication, so such a window is *inconclusive* — not a failure of the system under test, and
never a pass (DESIGN.md "A number is only as good as its validity"; reliability.md §4 row 22,
REQ-07, REQ-15).

The first of these makes the window inconclusive, and the reason names it with its timestamp:

* the connection leaves ``Connected`` (``Timeout``, ``ProtocolError``, ``NetworkFailure`` and
  ``BrokenPipe`` are called out as failure states), a connection or volume is destroyed, or
  DRBD reports split brain;
* a local or peer disk leaves ``UpToDate`` (``Failed`` is called out as an I/O error), or a
  DRBD 9 device loses quorum (``quorum:no``);
* replication leaves ``Established``: resync (``WFBitMap*``, ``WFSyncUUID``, ``StartingSync*``,
  ``Sync*``, ``PausedSync*``), online verify (``Verify*``), congestion (``Ahead``/``Behind``) or
  ``Off``;
* I/O is suspended (``suspended:`` anything but ``no``);
* ``out-of-sync`` grows above its value at the start of the window;
* DRBD calls a handler (``call helper``: before-resync, fence-peer, split-brain ...), which it
  only does on a state change the harness did not ask for.

``blocked:`` is deliberately not a finding: under a saturating write load DRBD reports
``blocked:upper``/``lower`` as back-pressure, which is part of what is being measured.

A stream that never finished the initial ``exists`` dump, or does not mention the resource,
says nothing about the window and is inconclusive too.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal

from harness.drbd.errors import DrbdOutputError
from harness.drbd.events import Event, Scalar, format_value, parse_event_line
from harness.drbd.state import (
    CONGESTION_STATES,
    FORBIDDEN_CONNECTION_STATES,
    FORBIDDEN_DISK_STATES,
    RESYNC_STATES,
    VERIFY_STATES,
)

__all__ = ["RunWatch", "Verdict", "check_capture", "check_events"]

_CONNECTED: Final = "Connected"
_UP_TO_DATE: Final = "UpToDate"
_ESTABLISHED: Final = "Established"


@dataclass(frozen=True)
class Verdict:
    """``valid`` or ``inconclusive``, with one line saying why and the event that decided it."""

    valid: bool
    reason: str
    event: Event | None = None

    @property
    def status(self) -> Literal["valid", "inconclusive"]:
        return "valid" if self.valid else "inconclusive"

    @property
    def at(self) -> datetime | None:
        """When the deciding event happened (None for a valid window or an untimestamped stream)."""
        return self.event.timestamp if self.event is not None else None

    def __str__(self) -> str:
        return f"{self.status}: {self.reason}"


class RunWatch:
    """Feed a window's events in order; ask for the :class:`Verdict` at the end.

    ``resource`` limits the check to one resource (``events2 RES`` prints only that one
    anyway); with None every resource in the stream must stay healthy.

    ``peers`` names the peer of the pair under test.  When the resource has other connections
    too (DRBD 9: a third node, a DR node), one of them that is already down when the window
    starts is set aside with its out-of-sync (a DR node away for a day would otherwise spoil
    every window); any change on another link during the window still counts, and so does its
    coming back (the resync to it competes with the measurement).  Without a connection of
    that name in the initial dump (DRBD 8.4 calls its only connection ``peer``) nothing is set
    aside.
    """

    def __init__(self, resource: str | None = None, peers: Collection[str] = ()) -> None:
        self.resource = resource
        self._peers = frozenset(peers)
        # the initial dump is held back until `exists -` when peers are given: which links are
        # the pair's is only known once every connection has been listed
        self._held: list[Event] = []
        # (resource, peer key) of the connections that are not the pair's, and those of them
        # that were down when the window started
        self._others: set[tuple[str, str]] = set()
        self._away: set[tuple[str, str]] = set()
        self._events: list[Event] = []
        self._first_bad: Verdict | None = None
        self._dump_complete = False
        self._seen_resource = False
        # Last known value per (object, key), for "old -> new" in reasons when the stream was
        # not captured with --diff.
        self._last: dict[tuple[str, str], Scalar] = {}
        # out-of-sync at the start of the window, per peer device.
        self._oos_baseline: dict[str, int] = {}
        # 8.4 omits conn-name on StandAlone lines; remember names per peer-node-id.
        self._conn_names: dict[tuple[str, str], str] = {}
        self._lines = 0

    # -- feeding ---------------------------------------------------------------------------
    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self._events)

    def feed(self, event: Event) -> Verdict | None:
        """Apply one event; returns the inconclusive verdict if this event is the first bad one."""
        self._events.append(event)
        if event.ends_initial_dump:
            self._dump_complete = True
            held, self._held = self._held, []
            self._others = self._other_links(held)
            found = [v for v in map(self._judge, held) if v is not None]
            return found[0] if found else None
        if self._peers and not self._dump_complete and event.action == "exists":
            self._held.append(event)
            return None
        return self._judge(event)

    def _other_links(self, dump: list[Event]) -> set[tuple[str, str]]:
        """The connections in the initial dump that are not the pair's, when the pair's is there."""
        links: dict[tuple[str, str], str | None] = {}
        for event in dump:
            if event.kind == "connection" and event.resource is not None:
                links[(event.resource, self._peer_key(event))] = event.text("conn-name")
        mine = {res for (res, _), conn in links.items() if conn in self._peers}
        return {key for key, conn in links.items() if key[0] in mine and conn not in self._peers}

    @staticmethod
    def _peer_key(event: Event) -> str:
        return event.text("peer-node-id") or event.text("conn-name") or ""

    def _judge(self, event: Event) -> Verdict | None:
        name = event.resource
        if name is None or (self.resource is not None and name != self.resource):
            return None
        self._seen_resource = True
        finding = self._check(event, name)
        if finding is not None and self._first_bad is None:
            when = event.when
            self._first_bad = Verdict(False, f"{name}: {finding} at {when}", event)
            return self._first_bad
        return None

    def feed_line(self, line: str) -> Verdict | None:
        """Parse and apply one line; an unparseable line makes the window inconclusive."""
        self._lines += 1
        try:
            event = parse_event_line(line, lineno=self._lines)
        except DrbdOutputError as exc:
            if self._first_bad is None:
                self._first_bad = Verdict(False, f"cannot read the event stream: {exc}")
                return self._first_bad
            return None
        return None if event is None else self.feed(event)

    def feed_text(self, text: str) -> None:
        """Apply a whole capture; a half-written last line (watcher stopped mid-write) is ignored."""
        lines = text.splitlines()
        if lines and not text.endswith("\n"):
            try:
                parse_event_line(lines[-1])
            except DrbdOutputError:
                lines = lines[:-1]
        for line in lines:
            self.feed_line(line)

    # -- the verdict -----------------------------------------------------------------------
    def verdict(self) -> Verdict:
        if self._first_bad is not None:
            return self._first_bad
        if not self._events:
            return Verdict(False, "the DRBD event watch captured nothing (watcher not running?)")
        if not self._dump_complete:
            return Verdict(False, "the DRBD event watch never completed its initial state dump ('exists -')")
        if not self._seen_resource:
            which = f"resource {self.resource}" if self.resource else "any resource"
            return Verdict(False, f"the DRBD event stream does not mention {which}")
        span = ""
        stamps = [e.timestamp for e in self._events if e.timestamp is not None]
        if stamps:
            span = f", {stamps[0].isoformat(timespec='seconds')} to {stamps[-1].isoformat(timespec='seconds')}"
        which = self.resource or "all resources"
        return Verdict(
            True,
            f"{which} stayed Connected/Established/UpToDate, not suspended, out-of-sync not growing "
            f"({len(self._events)} events{span})",
        )

    # -- the rules -------------------------------------------------------------------------
    def _peer_label(self, event: Event, name: str) -> str:
        node = event.text("peer-node-id")
        conn_name = event.text("conn-name")
        if node is not None and conn_name:
            self._conn_names[(name, node)] = conn_name
        elif node is not None:
            conn_name = self._conn_names.get((name, node))
        if conn_name:
            return conn_name
        return f"node {node}" if node is not None else "peer"

    def _object_id(self, event: Event, name: str) -> str:
        node = event.text("peer-node-id") or event.text("conn-name") or ""
        volume = event.text("volume") or "0"
        return {
            "resource": name,
            "connection": f"{name}/conn/{node}",
            "device": f"{name}/dev/{volume}",
            "peer-device": f"{name}/pd/{node}/{volume}",
        }.get(event.kind, f"{name}/{event.kind}")

    def _transition(self, event: Event, obj: str, key: str) -> tuple[str | None, str | None]:
        """(old, new) for ``key``; ``old`` from ``--diff`` or from the last value seen."""
        new = event.get(key)
        if new is None:
            return None, None
        old = event.old(key)
        if old is None:
            old = self._last.get((obj, key))
        return (None if old is None else format_value(old)), format_value(new)

    @staticmethod
    def _moved(subject: str, change: str, event: Event, old: str | None, new: str) -> str:
        if event.action == "exists":
            return f"{subject} was {new} when the watch started"
        if old is not None and old != new:
            return f"{subject} {change}: {old} -> {new}"
        return f"{subject} {change}: {new}"

    def _check(self, event: Event, name: str) -> str | None:
        obj = self._object_id(event, name)
        try:
            return self._rules(event, name, obj)
        finally:
            for key, _ in event.fields:
                value = event.get(key)
                if value is not None:
                    self._last[(obj, key)] = value

    def _other_link(self, event: Event, name: str) -> str | None:
        """The rule for a link that is not the pair's: ``""`` to ignore the event, a finding, or
        None to judge it like the pair's own."""
        key = (name, self._peer_key(event))
        if event.kind not in {"connection", "peer-device"} or key not in self._others:
            return None
        state = event.get("connection") if event.kind == "connection" else None
        if event.action == "exists" and event.kind == "connection" and state != _CONNECTED:
            self._away.add(key)
        if key not in self._away:
            return None
        if state == _CONNECTED:
            self._away.discard(key)
            return (
                f"connection to {self._peer_label(event, name)} (not the pair's) came back: the resync to it "
                "competes with the measurement"
            )
        return ""

    def _rules(self, event: Event, name: str, obj: str) -> str | None:
        other = self._other_link(event, name)
        if other is not None:
            return other or None
        kind = event.kind
        if event.action == "call" and kind == "helper":
            return f"DRBD called the {event.text('helper') or 'unknown'} handler"
        if event.action == "destroy" and kind in {"resource", "connection", "device", "peer-device"}:
            what = {"connection": f"the connection to {self._peer_label(event, name)}"}.get(kind, f"the {kind}")
            return f"DRBD destroyed {what} (resource left Connected)"
        if event.action not in {"exists", "create", "change"}:
            return None

        if kind == "resource":
            old, new = self._transition(event, obj, "suspended")
            if new is not None and new != "no":
                if event.action == "exists":
                    return f"I/O was suspended ({new}) when the watch started"
                return self._moved("I/O", "suspended", event, old, new)
        elif kind == "connection":
            peer = self._peer_label(event, name)
            old, new = self._transition(event, obj, "connection")
            if new is not None and new != _CONNECTED:
                change = "failed (forbidden state)" if new in FORBIDDEN_CONNECTION_STATES else "left Connected"
                return self._moved(f"connection to {peer}", change, event, old, new)
            if event.text("sync-state") == "SplitBrain":
                return f"split brain detected with {peer}"
        elif kind == "device":
            volume = event.text("volume") or "0"
            old, new = self._transition(event, obj, "disk")
            if new is not None and new != _UP_TO_DATE:
                change = "failed (I/O error)" if new in FORBIDDEN_DISK_STATES else "left UpToDate"
                return self._moved(f"local disk of volume {volume}", change, event, old, new)
            # DRBD 9: without quorum the device fails or freezes I/O (on-no-quorum), UpToDate or not
            old, new = self._transition(event, obj, "quorum")
            if new == "no":
                if event.action == "exists":
                    return f"volume {volume} had no quorum when the watch started"
                return self._moved(f"volume {volume}", "lost quorum", event, old, new)
        elif kind == "peer-device":
            return self._peer_device_rules(event, name, obj)
        return None

    def _peer_device_rules(self, event: Event, name: str, obj: str) -> str | None:
        target = f"{self._peer_label(event, name)} volume {event.text('volume') or '0'}"
        old, new = self._transition(event, obj, "replication")
        if new is not None and new != _ESTABLISHED:
            if new in RESYNC_STATES:
                change = "entered resync"
            elif new in VERIFY_STATES:
                change = "entered online verify"
            elif new in CONGESTION_STATES:
                change = "fell behind (congestion, pull-ahead)"
            else:
                change = "left Established"
            return self._moved(f"replication to {target}", change, event, old, new)
        old, new = self._transition(event, obj, "peer-disk")
        client = event.get("peer-client") or self._last.get((obj, "peer-client"))
        if new == "Diskless" and client == "yes":
            new = None  # an intentionally diskless peer (DRBD 9 tie-breaker) has no disk to lose
        if new is not None and new != _UP_TO_DATE:
            change = "failed (I/O error)" if new in FORBIDDEN_DISK_STATES else "left UpToDate"
            return self._moved(f"peer disk of {target}", change, event, old, new)
        oos = event.number("out-of-sync")
        if oos is not None:
            baseline = self._oos_baseline.setdefault(obj, oos)
            if oos > baseline:
                return f"out-of-sync with {target} grew from {baseline} to {oos} KiB"
        return None


def check_events(events: Iterable[Event], *, resource: str | None = None, peers: Collection[str] = ()) -> Verdict:
    """Verdict for already-parsed events of one window."""
    watch = RunWatch(resource, peers)
    for event in events:
        watch.feed(event)
    return watch.verdict()


def check_capture(text: str, *, resource: str | None = None, peers: Collection[str] = ()) -> Verdict:
    """Verdict for the text a watcher captured (``events2 --timestamps --statistics``)."""
    watch = RunWatch(resource, peers)
    watch.feed_text(text)
    return watch.verdict()
