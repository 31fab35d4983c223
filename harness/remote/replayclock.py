"""The clock of a replayed session: time passes as it did in the recorded one, not as it does now.

A live run waits: it sleeps between two polls of a state and gives up on a deadline of its own
clock.  Replayed at full speed against a real clock, a loop that ended on its deadline would
poll more often than it did live (and take answers the session gave later, to other
questions), and every duration the harness measures would read zero.  While a
:class:`ReplayClock` is installed, ``time.monotonic``, ``time.time`` and ``time.sleep`` are its
own, and these rules make a replayed wait end between the same two polls as it did live:

* every answer served moves the clock to where the recorded call returned to the harness (its
  ``at_s`` plus its ``took_s``; its ``duration_s`` where the capture did not time the call at
  the seam, and that duration on from now where its start is unknown);
* a sleep of the harness's own code moves it on by what was asked, without waiting; a
  library's sleep (a file lock polling while another thread of the run holds it) is real and
  moves nothing, as what it waited for is an answer the clock already follows;
* every reading moves it on by a microsecond: code runs between two readings, and a wait that
  sleeps exactly up to its deadline must find it passed, as it did live;
* each thread keeps its own place (its answers and its sleeps: two threads sleeping side by
  side took the session's time once) and reads the later of that and the furthest any answer
  has reached (a thread that joined others sees where they got); it never runs back.

``time.time`` starts at the recorded session's start.  Only a replay installs one; it is never
used on a live run.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from harness.remote.replay import Recorded

__all__ = ["ReplayClock"]

#: the real sleep a replayed sleep still takes, so another thread (a stream's reader) gets to run
_YIELD_S = 0.0005
#: how far the clock moves each time it is read: the code between two reads took time live,
#: and a wait that sleeps exactly to its deadline must find it passed, as it did live
TICK_S = 1e-6


class ReplayClock:
    """Seconds since the recorded session began, moved on by sleeps and by the answers served."""

    def __init__(self, wall_start: float) -> None:
        self._wall_start = wall_start
        self._monotonic_start = time.monotonic()
        self._reached = 0.0  # the furthest any answer has moved the clock
        self._places = threading.local()  # each thread's own place: its answers and its sleeps
        self._lock = threading.Lock()
        self._real_sleep = time.sleep
        self._saved: tuple[Callable[[], float], Callable[[], float], Callable[[float], None]] | None = None

    @property
    def elapsed(self) -> float:
        """Seconds since the recorded session began, as this thread reads them."""
        with self._lock:
            return self._place()

    def _place(self) -> float:
        place: float = max(getattr(self._places, "now", 0.0), self._reached)
        self._places.now = place
        return place

    def _read(self) -> float:
        with self._lock:
            now = self._place() + TICK_S
            self._places.now = now
            return now

    def monotonic(self) -> float:
        return self._monotonic_start + self._read()

    def time(self) -> float:
        return self._wall_start + self._read()

    def sleep(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("sleep length must be non-negative")
        if not str(sys._getframe(1).f_globals.get("__name__", "")).startswith("harness."):
            self._real_sleep(seconds)
            return
        with self._lock:
            self._places.now = self._place() + seconds
        self._real_sleep(_YIELD_S)

    def answered(self, answer: Recorded) -> None:
        """Where the recorded call returned: never back, as the session's time never ran back."""
        took = answer.duration_s if answer.took_s is None else answer.took_s
        with self._lock:
            now = self._place()
            self._places.now = now + took if answer.at_s is None else max(now, answer.at_s + took)
            self._reached = max(self._reached, self._places.now)

    def install(self) -> None:
        """From now on ``time``'s clock and sleep are this one's (until :meth:`uninstall`)."""
        self._saved = (time.monotonic, time.time, time.sleep)
        time.monotonic, time.time = self.monotonic, self.time
        time.sleep = self.sleep  # type: ignore[assignment]  # takes what time.sleep takes, a float

    def uninstall(self) -> None:
        if self._saved is not None:
            time.monotonic, time.time, time.sleep = self._saved  # type: ignore[assignment]
            self._saved = None

    @contextmanager
    def installed(self) -> Iterator[ReplayClock]:
        """``time``'s clock and sleep are this one's until the block ends."""
        self.install()
        try:
            yield self
        finally:
            self.uninstall()
