"""Was DRBD healthy for the whole measurement window?  A verdict from the window's events2 stream.

The harness streams ``drbdsetup events2 --timestamps --statistics RES`` on the node while fio
runs (see :mod:`harness.drbd.replication`) and hands the capture to :class:`RunWatch`.  A number
measured while DRBD was resyncing, disconnected or suspended describes something else than
replication, so such a window is *inconclusive*: not a failure of the system under test, and
never a pass.

What counts as a disturbance is :mod:`harness.drbd.disturbance`'s business.  The verdict's
reason is the first disturbance in full, with its timestamp; :attr:`Verdict.disturbances` names
every one of them in order, and the verdict's text lists them all, so a verify that was
followed by a lost connection and a resync reads as all three.

A stream that never finished the initial ``exists`` dump, or does not mention the resource,
says nothing about the window and is inconclusive too; so is one where drbdsetup says it
dropped events (``- skipped N``): what those events changed is not known.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from harness.drbd.disturbance import EventRules, Finding
from harness.drbd.errors import DrbdOutputError
from harness.drbd.events import Event, parse_event_line
from harness.drbd.state import CONNECTED, DISKLESS

__all__ = ["RunWatch", "Verdict", "check_capture", "check_events"]


@dataclass(frozen=True)
class Verdict:
    """``valid`` or ``inconclusive``, with one line saying why and the event that decided it.

    ``disturbances`` names every disturbance of the window in order (``reason`` is the first
    one's in full); the verdict's text lists them when there is more than one."""

    valid: bool
    reason: str
    event: Event | None = None
    disturbances: tuple[str, ...] = ()

    @property
    def status(self) -> Literal["valid", "inconclusive"]:
        return "valid" if self.valid else "inconclusive"

    @property
    def at(self) -> datetime | None:
        """When the deciding event happened (None for a valid window or an untimestamped stream)."""
        return self.event.timestamp if self.event is not None else None

    def __str__(self) -> str:
        every = f" (every disturbance: {'; '.join(self.disturbances)})" if len(self.disturbances) > 1 else ""
        return f"{self.status}: {self.reason}{every}"


@dataclass(frozen=True)
class _Seen:
    reason: str
    label: str
    event: Event | None


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

    ``diskless`` names the peers that are diskless by configuration (``disk none``, or an
    inventory's tie-breakers): their Diskless is no disturbance, on any link.  With None (the
    configuration is not known) a link that is not the pair's and whose peer is Diskless when
    the window starts is taken for a tie-breaker: it carries no replica, so nothing on it
    competes with the measurement until it gets a disk.  Given a set, a Diskless peer outside
    it is a disturbance wherever it is: it should have a disk.
    """

    def __init__(
        self, resource: str | None = None, peers: Collection[str] = (), diskless: Collection[str] | None = None
    ) -> None:
        self.resource = resource
        self._peers = frozenset(peers)
        self._rules = EventRules(None if diskless is None else frozenset(diskless))
        # the initial dump is held back until `exists -` when peers are given: which links are
        # the pair's is only known once every connection has been listed
        self._held: list[Event] = []
        # (resource, peer key) of the connections that are not the pair's, and those of them
        # that were down when the window started
        self._others: set[tuple[str, str]] = set()
        self._away: set[tuple[str, str]] = set()
        self._events: list[Event] = []
        self._found: list[_Seen] = []
        self._dump_complete = False
        self._seen_resource = False
        self._lines = 0

    # -- feeding ---------------------------------------------------------------------------
    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self._events)

    def feed(self, event: Event) -> Verdict | None:
        """Apply one event; returns the inconclusive verdict if this event is the first bad one."""
        before = len(self._found)
        self._events.append(event)
        if event.ends_initial_dump:
            self._dump_complete = True
            held, self._held = self._held, []
            self._others = self._other_links(held)
            for dumped in held:
                self._judge(dumped)
        elif self._peers and not self._dump_complete and event.action == "exists":
            self._held.append(event)
        else:
            self._judge(event)
        return self.verdict() if before == 0 and self._found else None

    def _other_links(self, dump: list[Event]) -> set[tuple[str, str]]:
        """The connections in the initial dump that are not the pair's, when the pair's is there."""
        links: dict[tuple[str, str], str | None] = {}
        for event in dump:
            if event.kind == "connection" and event.resource is not None:
                links[(event.resource, EventRules.peer_key(event))] = event.text("conn-name")
        mine = {res for (res, _), conn in links.items() if conn in self._peers}
        return {key for key, conn in links.items() if key[0] in mine and conn not in self._peers}

    def _note(self, reason: str, label: str, event: Event | None) -> None:
        self._found.append(_Seen(reason, label, event))

    def _judge(self, event: Event) -> None:
        if event.skipped is not None:
            # the stream's hole may hide a change of any resource: it counts whatever is watched
            self._note(
                f"DRBD dropped {event.skipped} events, so this window cannot be proved stable (at {event.when})",
                f"DRBD dropped {event.skipped} events",
                event,
            )
            return
        name = event.resource
        if name is None or (self.resource is not None and name != self.resource):
            return
        self._seen_resource = True
        finding = self._check(event, name)
        if finding is not None:
            self._note(f"{name}: {finding.text} at {event.when}", finding.label, event)

    def _check(self, event: Event, name: str) -> Finding | None:
        handled, finding = self._other_link(event, name)
        if not handled:
            return self._rules.judge(event, name)
        self._rules.remember(event, name)
        return finding

    def _other_link(self, event: Event, name: str) -> tuple[bool, Finding | None]:
        """For a link that is not the pair's: (True, what it disturbs) when the window sets it
        aside, (False, None) when it is judged like the pair's own."""
        key = (name, EventRules.peer_key(event))
        if event.kind not in {"connection", "peer-device"} or key not in self._others:
            return False, None
        state = event.get("connection") if event.kind == "connection" else None
        if event.action == "exists" and event.kind == "connection" and state != CONNECTED:
            self._away.add(key)
        if event.action == "exists" and event.get("peer-disk") == DISKLESS and self._rules.diskless is None:
            self._rules.diskless_at_start.add(key)
        if key not in self._away:
            return False, None
        if state != CONNECTED:
            return True, None
        self._away.discard(key)
        peer = self._rules.peer_label(event, name)
        return True, Finding(
            f"connection to {peer} (not the pair's) came back: the resync to it competes with the measurement",
            f"{peer} (not the pair's) came back",
        )

    def feed_line(self, line: str) -> Verdict | None:
        """Parse and apply one line; an unparseable line makes the window inconclusive."""
        self._lines += 1
        try:
            event = parse_event_line(line, lineno=self._lines)
        except DrbdOutputError as exc:
            first = not self._found
            self._note(f"cannot read the event stream: {exc}", f"unreadable line {self._lines}", None)
            return self.verdict() if first else None
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
        if self._found:
            first = self._found[0]
            labels = tuple(dict.fromkeys(seen.label for seen in self._found))
            return Verdict(False, first.reason, first.event, labels)
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


def check_events(
    events: Iterable[Event],
    *,
    resource: str | None = None,
    peers: Collection[str] = (),
    diskless: Collection[str] | None = None,
) -> Verdict:
    """Verdict for already-parsed events of one window."""
    watch = RunWatch(resource, peers, diskless)
    for event in events:
        watch.feed(event)
    return watch.verdict()


def check_capture(
    text: str, *, resource: str | None = None, peers: Collection[str] = (), diskless: Collection[str] | None = None
) -> Verdict:
    """Verdict for the text a watcher captured (``events2 --timestamps --statistics``)."""
    watch = RunWatch(resource, peers, diskless)
    watch.feed_text(text)
    return watch.verdict()
