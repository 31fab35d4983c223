"""Does a node reach its peer over the replication path?  A few pings from the node's own
replication address to the peer's, read into a verdict.

A replication that stays unconnected ("Connecting", an array without its NBD leg) has two
causes a user fixes in different places: the network between the nodes, or the replication
itself.  The verdict tells them apart.  An ICMP that gets no answer while the replication is
connected is a filter (a cloud security group without ICMP), not a dead path: that is
:attr:`Reach.filtered`, and only the caller knows which of the two it saw.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.errors import HarnessError
from harness.probes.rtt import parse_ping, ping_argv
from harness.remote import CommandResult, Runner

__all__ = ["PROBE_COUNT", "Reach", "probe_reach", "reach_argv", "read_reach"]

#: three probes 0.2 s apart: about half a second on a live path, 2.4 s on a dead one
PROBE_COUNT = 3
_INTERVAL_S = 0.2


@dataclass(frozen=True)
class Reach:
    """What the pings from ``source`` to ``dest`` found."""

    node: str
    source: str
    dest: str
    sent: int
    received: int
    median_ms: float | None
    why: str
    """ping's own words when nothing came back ("Destination Host Unreachable", no output)."""

    @property
    def answers(self) -> bool:
        return self.received > 0

    def describe(self) -> str:
        if self.answers:
            assert self.median_ms is not None
            return (
                f"{self.node} reaches {self.dest} from {self.source}: {self.received}/{self.sent} replies, "
                f"median {self.median_ms:.2f} ms"
            )
        return f"{self.node} gets no answer from {self.dest} (from {self.source}): {self.why}"

    def dead_path(self, resource: str) -> str:
        """Why ``resource`` cannot connect, when nothing answered: the network, not the replication."""
        return (
            f"the replication path is down: {self.describe()}; {resource} cannot connect until the network "
            "between the nodes carries traffic again (a link, a route, a firewall or the peer itself)"
        )

    def filtered(self) -> str:
        """Nothing answered while the replication was connected: ICMP is filtered on the path."""
        return (
            f"{self.describe()}, yet the replication is connected: ICMP is filtered on the path "
            "(RTT proofs of impaired cells need it)"
        )


def reach_argv(dest: str, source: str) -> list[str]:
    """The probe: a few pings from the node's replication address to the peer's."""
    return ping_argv(dest, count=PROBE_COUNT, interval_s=_INTERVAL_S, source=source)


def read_reach(node: str, source: str, dest: str, result: CommandResult) -> Reach:
    """The probe's result as a :class:`Reach` (ping exits 1 when no reply came back)."""
    try:
        stats = parse_ping(result.stdout)
    except ValueError as exc:
        detail = str(exc)
        if not result.stdout.strip() and result.stderr.strip():
            detail = f"ping failed: {result.stderr.strip().splitlines()[0]}"
        return Reach(node, source, dest, PROBE_COUNT, 0, None, detail)
    return Reach(node, source, dest, stats.sent, stats.received, stats.median_ms, "")


def probe_reach(node: Runner, source: str, dest: str) -> Reach | None:
    """The probe run on ``node`` on its own (preflight rides it in a batch instead); None when it
    could not run (no connection to the node)."""
    try:
        result = node.run(reach_argv(dest, source), timeout=15, check=False)
    except HarnessError:
        return None
    return read_reach(node.name, source, dest, result)
