"""Poll intervals that start short and double up to a ceiling.

A wait that is over in a moment (a DRBD reconnect on a LAN is about a second, most of it the
handshake; a resync of a few megabytes follows within tens of milliseconds) then costs about
that moment, not a whole poll interval, and a long wait (a resync of gigabytes) still asks the
node no more often than the ceiling says.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

__all__ = ["FIRST_POLL_S", "backoff", "monotonic", "sleep", "wall"]

#: the first pause between two polls (each poll is a round trip to the node, about 25 ms)
FIRST_POLL_S = 0.05


def backoff(ceiling_s: float, first_s: float = FIRST_POLL_S) -> Iterator[float]:
    """``first_s``, then twice the previous pause, never more than ``ceiling_s``."""
    if ceiling_s <= 0 or first_s <= 0:
        raise ValueError(f"poll pauses must be positive, got first {first_s} s, ceiling {ceiling_s} s")
    delay = min(first_s, ceiling_s)
    while True:
        yield delay
        delay = min(delay * 2, ceiling_s)


# A wait's clock and sleep as default arguments: ``clock=time.monotonic`` would hold the real
# clock's function from import on, and a replayed session (harness.remote.replayclock) installs
# its own in ``time`` later.  These look ``time`` up on every call.
def monotonic() -> float:
    """``time.monotonic()``, as installed now."""
    return time.monotonic()


def wall() -> float:
    """``time.time()``, as installed now."""
    return time.time()


def sleep(seconds: float) -> None:
    """``time.sleep(seconds)``, as installed now."""
    time.sleep(seconds)
