"""``drbdsetup events2`` lines as typed records, and the fold of a stream into current state.

One grammar serves DRBD 8.4.6+ (utils >= 8.9.3) and DRBD 9 (drbdsetup(8) "events2")::

    [TIMESTAMP] ACTION OBJECT key:value key:value ...

* ``ACTION`` is ``exists``/``create``/``change``/``destroy``/``call``/``response``/``rename``;
  ``OBJECT`` is ``resource``/``connection``/``device``/``peer-device``/``path``/``helper``, or
  ``-`` in ``exists -``, which ends the initial dump.
* ``--timestamps`` prefixes ISO-8601 with microseconds and UTC offset.
* ``--diff`` prints changed state values as ``old->new`` (``suspended:no->user``); the old
  value of an object that did not exist before is DRBD's "unknown" word.
* A value is split from its key at the *first* colon only: path addresses are
  ``local:ipv4:10.0.0.1:7789``.
* Numbers become ``int`` (``out-of-sync:307200``) or ``float`` (``done:37.50``); identifiers and
  addresses never do, so a resource called ``007`` stays a string.
* On a terminal drbdsetup colours states with ANSI escapes; the harness runs it without a pty,
  but the escapes are stripped anyway so a captured coloured log still parses.

Records carry the original line for messages ("the first bad transition was ...").

The fold (:class:`EventFold`) applies events in order — ``exists``/``create`` set an object,
``change`` merges the keys it carries (events2 prints only what changed), ``destroy`` removes
it — and builds :class:`~harness.drbd.state.ResourceState` snapshots on demand.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, TypeVar

from harness.drbd.errors import DrbdOutputError
from harness.drbd.state import Connection, Device, PeerDevice, ResourceState

__all__ = [
    "EVENT_ACTIONS",
    "OBJECT_KINDS",
    "Diff",
    "Event",
    "EventFold",
    "Scalar",
    "Value",
    "fold_events",
    "format_event",
    "format_value",
    "iter_events",
    "parse_event_line",
    "parse_events",
    "resource_from_events2",
]

EVENT_ACTIONS: Final = ("exists", "create", "change", "destroy", "call", "response", "rename")
OBJECT_KINDS: Final = ("resource", "connection", "device", "peer-device", "path", "helper", "-")

Scalar = str | int | float


@dataclass(frozen=True)
class Diff:
    """A ``--diff`` value: what it was and what it became."""

    old: Scalar
    new: Scalar

    def __str__(self) -> str:
        return f"{format_value(self.old)}->{format_value(self.new)}"


Value = Scalar | Diff


@dataclass(frozen=True)
class Event:
    """One events2 line.  ``fields`` keeps DRBD's order so a line can be printed back as is."""

    action: str
    kind: str
    fields: tuple[tuple[str, Value], ...] = ()
    timestamp: datetime | None = None
    line: str = field(default="", compare=False)
    lineno: int | None = field(default=None, compare=False)

    def raw(self, key: str) -> Value | None:
        """The value as printed (a :class:`Diff` for ``--diff`` changes)."""
        return next((v for k, v in self.fields if k == key), None)

    def get(self, key: str) -> Scalar | None:
        """The current value of ``key`` (the new side of a diff), or None if absent."""
        value = self.raw(key)
        return value.new if isinstance(value, Diff) else value

    def old(self, key: str) -> Scalar | None:
        """The previous value when the line came from ``--diff``, else None."""
        value = self.raw(key)
        return value.old if isinstance(value, Diff) else None

    def text(self, key: str) -> str | None:
        value = self.get(key)
        return None if value is None else format_value(value)

    def number(self, key: str) -> int | None:
        value = self.get(key)
        return value if isinstance(value, int) else None

    def has(self, key: str) -> bool:
        return any(k == key for k, _ in self.fields)

    @property
    def resource(self) -> str | None:
        """The resource the event belongs to (``name:``), None for ``exists -``."""
        return self.text("name")

    @property
    def ends_initial_dump(self) -> bool:
        return self.action == "exists" and self.kind == "-"

    @property
    def when(self) -> str:
        """The timestamp as DRBD printed it, or ``line N`` when the stream had none."""
        if self.timestamp is not None:
            return self.timestamp.isoformat(timespec="microseconds")
        return f"line {self.lineno}" if self.lineno is not None else "(no timestamp)"


# ---------------------------------------------------------------------------------------------
# parsing and formatting
# ---------------------------------------------------------------------------------------------
_ANSI_RE: Final = re.compile(r"\x1b\[[0-9;]*m")
_TIMESTAMP_RE: Final = re.compile(r"\A\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-]\d{2}:?\d{2})?\Z")
_WORD_RE: Final = re.compile(r"\A[a-z]+(?:-[a-z]+)*\Z")
_KEY_RE: Final = re.compile(r"\A[a-z][a-z0-9_-]*\Z")
_INT_RE: Final = re.compile(r"\A-?\d+\Z")
_FLOAT_RE: Final = re.compile(r"\A-?\d+\.\d+\Z")
#: Identifiers and addresses: kept as text even when they look numeric or contain "->".
_TEXT_KEYS: Final = frozenset({"name", "conn-name", "new_name", "helper", "local", "peer", "backing_dev"})


def _scalar(key: str, raw: str) -> Scalar:
    if key in _TEXT_KEYS:
        return raw
    if _INT_RE.match(raw):
        return int(raw)
    if _FLOAT_RE.match(raw):
        return float(raw)
    return raw


def _value(key: str, raw: str) -> Value:
    if key not in _TEXT_KEYS and "->" in raw:
        old, new = raw.split("->", 1)
        return Diff(_scalar(key, old), _scalar(key, new))
    return _scalar(key, raw)


def format_value(value: Value) -> str:
    """A value as events2 prints it (floats with DRBD's two decimals when that is exact)."""
    if isinstance(value, Diff):
        return str(value)
    if isinstance(value, float):
        two = f"{value:.2f}"
        return two if float(two) == value else repr(value)
    return str(value)


def parse_event_line(line: str, *, lineno: int | None = None) -> Event | None:
    """Parse one events2 line; None for a blank line; :class:`DrbdOutputError` if malformed."""
    clean = _ANSI_RE.sub("", line).strip()
    if not clean:
        return None
    tokens = clean.split()
    where = f"events2 line {lineno}" if lineno is not None else "events2 line"
    timestamp = None
    if _TIMESTAMP_RE.match(tokens[0]):
        try:
            timestamp = datetime.fromisoformat(tokens[0])
        except ValueError:
            raise DrbdOutputError(f"{where}: bad timestamp {tokens[0]!r}") from None
        tokens = tokens[1:]
    if len(tokens) < 2:
        raise DrbdOutputError(f"{where}: expected 'ACTION OBJECT key:value ...', got {line.strip()!r}")
    action, kind = tokens[0], tokens[1]
    # The action list has been stable since 8.9.3 (rename came with 9.x), so an unknown word
    # means this is not events2 output (an error message, a shell prompt); object kinds are
    # only checked for shape, newer drbd-utils may add some.
    if action not in EVENT_ACTIONS or not (kind == "-" or _WORD_RE.match(kind)):
        raise DrbdOutputError(f"{where}: not an events2 line: {line.strip()!r}")
    fields: list[tuple[str, Value]] = []
    for token in tokens[2:]:
        key, sep, raw = token.partition(":")
        if not sep or not _KEY_RE.match(key):
            raise DrbdOutputError(f"{where}: expected key:value, got {token!r} in {line.strip()!r}")
        fields.append((key, _value(key, raw)))
    return Event(action, kind, tuple(fields), timestamp, line.rstrip("\n"), lineno)


def iter_events(lines: Iterable[str]) -> Iterator[Event]:
    """Parse lines lazily, numbering them from 1; blank lines are skipped."""
    for n, line in enumerate(lines, start=1):
        event = parse_event_line(line, lineno=n)
        if event is not None:
            yield event


def parse_events(text: str) -> list[Event]:
    """Parse a whole capture.

    A last line without its newline is dropped if it does not parse: the watcher was stopped
    while drbdsetup was writing it, and half a line must not fail a whole run.
    """
    lines = text.splitlines()
    truncated = bool(lines) and not text.endswith("\n")
    events: list[Event] = []
    for n, line in enumerate(lines, start=1):
        try:
            event = parse_event_line(line, lineno=n)
        except DrbdOutputError:
            if truncated and n == len(lines):
                break
            raise
        if event is not None:
            events.append(event)
    return events


def format_event(event: Event) -> str:
    """The events2 line for ``event`` (inverse of :func:`parse_event_line`)."""
    parts: list[str] = []
    if event.timestamp is not None:
        parts.append(event.timestamp.isoformat(timespec="microseconds"))
    parts += [event.action, event.kind]
    parts += [f"{k}:{format_value(v)}" for k, v in event.fields]
    return " ".join(parts)


# ---------------------------------------------------------------------------------------------
# the fold
# ---------------------------------------------------------------------------------------------
ConnKey = int | str


@dataclass
class _Resource:
    fields: dict[str, Scalar] = field(default_factory=dict)
    connections: dict[ConnKey, dict[str, Scalar]] = field(default_factory=dict)
    devices: dict[int, dict[str, Scalar]] = field(default_factory=dict)
    peer_devices: dict[tuple[ConnKey, int], dict[str, Scalar]] = field(default_factory=dict)


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

    def apply(self, event: Event) -> None:
        if event.ends_initial_dump:
            self.initial_dump_complete = True
            return
        name = event.resource
        if name is None or event.kind in {"helper", "path", "-"}:
            # Helper calls change no state; paths are not part of the health model.
            return
        if event.action == "rename" and event.kind == "resource":
            new_name = event.text("new_name")
            if new_name and name in self._resources:
                self._resources[new_name] = self._resources.pop(name)
            return
        if event.kind == "resource" and event.action == "destroy":
            self._resources.pop(name, None)
            return
        res = self._resources.setdefault(name, _Resource())
        if event.kind == "resource":
            _merge(res.fields, event)
        elif event.kind == "connection":
            key = _conn_key(event)
            _apply_object(res.connections, key, event)
            if event.action == "destroy":
                # The kernel destroys a connection's peer devices with it.
                res.peer_devices = {k: v for k, v in res.peer_devices.items() if k[0] != key}
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
        )
        for _, c in sorted(res.connections.items(), key=lambda kv: _sort_key(kv[0]))
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
