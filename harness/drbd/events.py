"""``drbdsetup events2`` lines as typed records.

One grammar serves DRBD 8.4.6+ (utils >= 8.9.3) and DRBD 9::

    [TIMESTAMP] ACTION OBJECT key:value key:value ...
    [TIMESTAMP] - skipped N

* ``ACTION`` is ``exists``/``create``/``change``/``destroy``/``call``/``response``/``rename``;
  ``OBJECT`` is ``resource``/``connection``/``device``/``peer-device``/``path``/``helper``, or
  ``-`` in ``exists -``, which ends the initial dump.
* ``--timestamps`` prefixes ISO-8601 with microseconds and UTC offset.
* ``- skipped N`` is drbdsetup's own marker that N notifications from the kernel never reached
  it (their sequence numbers jumped): the stream has a hole, so the state it shows may be stale.
  It becomes an :class:`Event` with action ``skipped``; :attr:`Event.skipped` gives N.
* ``--diff`` prints changed state values as ``old->new`` (``suspended:no->user``,
  ``backing_dev:none->/dev/sda``); the old value of an object that did not exist before is
  drbdsetup's ``UNKNOWN``.  :meth:`Event.get` reads the new value, :meth:`Event.old` the old one.
* A value is split from its key at the *first* colon only: path addresses are
  ``local:ipv4:10.0.0.1:7789``.
* Numbers become ``int`` (``out-of-sync:307200``) or ``float`` (``done:37.50``); identifiers and
  addresses never do, so a resource called ``007`` stays a string.
* On a terminal drbdsetup colours states with ANSI escapes; the harness runs it without a pty,
  but the escapes are stripped anyway so a captured coloured log still parses.

Records carry the original line for messages ("the first bad transition was ...").
The fold of a stream into current state is :mod:`harness.drbd.fold`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

from harness.drbd.errors import DrbdOutputError

__all__ = [
    "EVENT_ACTIONS",
    "OBJECT_KINDS",
    "SKIPPED",
    "Diff",
    "Event",
    "Scalar",
    "Value",
    "format_event",
    "format_value",
    "iter_events",
    "parse_event_line",
    "parse_events",
]

EVENT_ACTIONS: Final = ("exists", "create", "change", "destroy", "call", "response", "rename")
#: The action of drbdsetup's ``- skipped N`` line (not a word drbdsetup prints in that place).
SKIPPED: Final = "skipped"
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
    def skipped(self) -> int | None:
        """How many events drbdsetup says it missed, for a ``- skipped N`` line; else None."""
        return self.number(SKIPPED) if self.action == SKIPPED else None

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
_SKIPPED_RE: Final = re.compile(r"\A-\s+skipped\s+(\d+)\Z")
#: Identifiers and addresses: kept as text even when they look numeric or contain "->";
#: drbdsetup never prints them as a ``--diff`` (they name the object, they do not change).
_IDENTITY_KEYS: Final = frozenset({"name", "conn-name", "new_name", "helper", "local", "peer"})
#: Text values that ``--diff`` does print as ``old->new``: ``backing_dev:none->/dev/sda``
#: a device path is never a number.
_TEXT_KEYS: Final = _IDENTITY_KEYS | {"backing_dev"}


def _scalar(key: str, raw: str) -> Scalar:
    if key in _TEXT_KEYS:
        return raw
    if _INT_RE.match(raw):
        return int(raw)
    if _FLOAT_RE.match(raw):
        return float(raw)
    return raw


def _value(key: str, raw: str) -> Value:
    if key not in _IDENTITY_KEYS and "->" in raw:
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


def _timestamp(tokens: list[str], where: str) -> tuple[datetime | None, list[str]]:
    if not _TIMESTAMP_RE.match(tokens[0]):
        return None, tokens
    try:
        return datetime.fromisoformat(tokens[0]), tokens[1:]
    except ValueError:
        raise DrbdOutputError(f"{where}: bad timestamp {tokens[0]!r}") from None


def _fields(tokens: list[str], where: str, line: str) -> tuple[tuple[str, Value], ...]:
    fields: list[tuple[str, Value]] = []
    for token in tokens:
        key, sep, raw = token.partition(":")
        if not sep or not _KEY_RE.match(key):
            raise DrbdOutputError(f"{where}: expected key:value, got {token!r} in {line.strip()!r}")
        fields.append((key, _value(key, raw)))
    return tuple(fields)


def parse_event_line(line: str, *, lineno: int | None = None) -> Event | None:
    """Parse one events2 line; None for a blank line; :class:`DrbdOutputError` if malformed."""
    clean = _ANSI_RE.sub("", line).strip()
    if not clean:
        return None
    where = f"events2 line {lineno}" if lineno is not None else "events2 line"
    timestamp, tokens = _timestamp(clean.split(), where)
    skipped = _SKIPPED_RE.match(" ".join(tokens))
    if skipped is not None:
        return Event(SKIPPED, "-", ((SKIPPED, int(skipped[1])),), timestamp, line.rstrip("\n"), lineno)
    if len(tokens) < 2:
        raise DrbdOutputError(f"{where}: expected 'ACTION OBJECT key:value ...', got {line.strip()!r}")
    action, kind = tokens[0], tokens[1]
    # The action list has been stable since 8.9.3 (rename came with 9.x), so an unknown word
    # means this is not events2 output (an error message, a shell prompt); object kinds are
    # only checked for shape, newer drbd-utils may add some.
    if action not in EVENT_ACTIONS or not (kind == "-" or _WORD_RE.match(kind)):
        raise DrbdOutputError(f"{where}: not an events2 line: {line.strip()!r}")
    return Event(action, kind, _fields(tokens[2:], where, line), timestamp, line.rstrip("\n"), lineno)


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
    if event.skipped is not None:
        return " ".join([*parts, "-", SKIPPED, str(event.skipped)])
    parts += [event.action, event.kind]
    parts += [f"{k}:{format_value(v)}" for k, v in event.fields]
    return " ".join(parts)
