"""Two questions a partition asks of DRBD: how long may the replication path stay silent before
DRBD declares the peer lost, and are the two replicas identical afterwards (online verify).

**Silence.**  DRBD's ack receiver waits ``ping-int`` seconds for anything from the peer; when
nothing came, it sends a ping and gives the peer ``ping-timeout`` (tenths of a second) to
answer, then drops the connection (the kernel logs "PingAck did not arrive in time", on 8.4
and 9).  So a silence shorter than ``ping-int`` never disconnects, and one longer than
``ping-int + ping-timeout`` always does.  ``timeout`` × ``ko-count`` bounds a
single request the peer does not complete, which a silent path reaches later still.

**Online verify** (``drbdadm verify``) reads a range on both nodes, compares checksums with the
configured ``verify-alg`` and marks every block that differs out of sync; it never writes.
The out-of-sync count once it has finished is the oracle: 0 means identical replicas.
Without a ``verify-alg`` DRBD refuses to start; the harness never sets one on a real cluster.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from harness.drbd.config import Statement, find_resources, parse_config, walk
from harness.drbd.errors import DrbdNotReady, DrbdOutputError
from harness.drbd.state import VERIFY_STATES, ResourceState
from harness.remote import polling

__all__ = ["ConnectionTimeouts", "VerifyReport", "parse_timeouts", "wait_verified"]

SECTOR: Final = 512
#: DRBD's own defaults (8.4 and 9), for keys a ``show`` without defaults omits
_DEFAULTS: Final = {"ping-int": 10.0, "ping-timeout": 5.0, "timeout": 60.0, "ko-count": 7.0, "connect-int": 10.0}


@dataclass(frozen=True)
class ConnectionTimeouts:
    """The resource's effective connection timeouts, in seconds."""

    ping_int_s: float
    ping_timeout_s: float
    timeout_s: float
    ko_count: int
    connect_int_s: float
    verify_alg: str

    @property
    def silence_tolerated_s(self) -> float:
        """A silent path shorter than this never makes DRBD drop the connection."""
        return self.ping_int_s

    @property
    def silence_detected_s(self) -> float:
        """A silent path longer than this always makes DRBD drop the connection."""
        return self.ping_int_s + self.ping_timeout_s

    @property
    def answer_timeout_s(self) -> float:
        """How long a ping may wait for its answer: an added round trip this long disconnects."""
        return self.ping_timeout_s

    @property
    def request_timeout_s(self) -> float:
        """How long the peer may take to answer a request (``timeout``)."""
        return self.timeout_s

    def describe(self) -> str:
        return (
            f"ping-int {self.ping_int_s:g} s, ping-timeout {self.ping_timeout_s:g} s, timeout {self.timeout_s:g} s, "
            f"ko-count {self.ko_count}, connect-int {self.connect_int_s:g} s, verify-alg {self.verify_alg or 'none'}"
        )


def _number(stmt: Statement) -> float:
    try:
        return float(stmt.args[0].rstrip("s"))
    except (IndexError, ValueError):
        raise DrbdOutputError(f"line {stmt.line}: {stmt.key} has no number: {' '.join(stmt.words)}") from None


def parse_timeouts(show_text: str, resource: str) -> ConnectionTimeouts:
    """The timeouts of ``resource`` from ``drbdsetup show [--show-defaults] RES``.

    A DRBD 9 resource has a ``net`` section per connection: the shortest ping interval and the
    longest detection win, so that "tolerated" and "detected" stay true of every connection."""
    resources = find_resources(parse_config(show_text), resource)
    if not resources:
        raise DrbdOutputError(f"resource {resource} is not in the configuration DRBD printed")
    found: dict[str, list[float]] = {}
    verify_alg = ""
    for path, stmt in walk(resources[0].block or ()):
        if "net" not in path or stmt.block is not None:
            continue
        if stmt.key == "verify-alg":
            verify_alg = stmt.args[0] if stmt.args else ""
        elif stmt.key in _DEFAULTS:
            found.setdefault(stmt.key, []).append(_number(stmt))

    def pick(key: str, choose: Callable[[list[float]], float]) -> float:
        return choose(found[key]) if key in found else _DEFAULTS[key]

    return ConnectionTimeouts(
        ping_int_s=pick("ping-int", min),
        ping_timeout_s=pick("ping-timeout", max) / 10.0,
        timeout_s=pick("timeout", max) / 10.0,
        ko_count=int(pick("ko-count", max)),
        connect_int_s=pick("connect-int", max),
        verify_alg=verify_alg,
    )


@dataclass(frozen=True)
class VerifyReport:
    """One finished online verify of ``[start_bytes, stop_bytes)`` from ``node``."""

    node: str
    resource: str
    start_bytes: int
    stop_bytes: int | None
    out_of_sync_kib: int
    duration_s: float

    @property
    def identical(self) -> bool:
        return self.out_of_sync_kib == 0

    def describe(self) -> str:
        span = f"{self.start_bytes}-{self.stop_bytes if self.stop_bytes is not None else 'end'}"
        return (
            f"{self.node}: online verify of {self.resource} bytes {span}: {self.out_of_sync_kib} KiB out of sync "
            f"in {self.duration_s:.1f} s"
        )


def wait_verified(
    state: Callable[[], ResourceState],
    *,
    deadline_s: float,
    poll_s: float = 0.5,
    clock: Callable[[], float] = polling.monotonic,
    sleep: Callable[[float], None] = polling.sleep,
) -> tuple[ResourceState, float]:
    """Poll until a verify started just now has finished: (final state, seconds waited).

    A short range may be done before the first poll, so a Connected resource that is not
    verifying is a finished verify; a verify still running at the deadline, or a connection
    lost meanwhile, is an error (its count would be partial)."""
    start = clock()
    while True:
        now = state()
        if now.replication_state not in VERIFY_STATES:
            if not now.connected:
                raise DrbdNotReady(f"online verify ended without a connection: {now.describe()}")
            return now, clock() - start
        if clock() - start >= deadline_s:
            raise DrbdNotReady(f"online verify still running after {deadline_s:g} s ({now.describe()})")
        sleep(poll_s)
