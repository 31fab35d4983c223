"""Round-trip time probes over the replication path (``ping`` on the node) and their parsing.

Used to check an impairment really took effect before fio starts, and for the lab's RTT
matrix.  We keep every reply's time, not ping's summary line, because the summary's mean is
dominated by outliers: the lab's UML guests show a 10 ms wake-up tail on guest-to-guest round
trips (LAB-NOTES P5), so the *median* and the *minimum* are the robust figures.
"""

from __future__ import annotations

import ipaddress
import re
import statistics
from dataclasses import dataclass

__all__ = ["RttStats", "parse_ping", "ping_argv"]

_REPLY = re.compile(r"\btime[=<]([0-9]+(?:\.[0-9]+)?) ?ms\b")
_SENT = re.compile(r"([0-9]+) packets transmitted, ([0-9]+) (?:packets )?received")


@dataclass(frozen=True)
class RttStats:
    """Round-trip times in milliseconds."""

    samples: tuple[float, ...]
    sent: int
    received: int

    @property
    def loss_pct(self) -> float:
        return 100.0 * (self.sent - self.received) / self.sent if self.sent else 100.0

    @property
    def min_ms(self) -> float:
        return min(self.samples)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.samples)

    @property
    def mean_ms(self) -> float:
        return statistics.fmean(self.samples)

    @property
    def max_ms(self) -> float:
        return max(self.samples)


def ping_argv(dest: str, *, count: int = 10, interval_s: float = 0.02, source: str | None = None) -> list[str]:
    """``ping`` argv for ``count`` probes to ``dest`` (root may use short intervals).

    >>> ping_argv("10.0.0.2", count=3)
    ['ping', '-n', '-c', '3', '-i', '0.02', '-W', '2', '10.0.0.2']
    """
    addr = str(ipaddress.IPv4Address(dest))
    if not 1 <= count <= 10000:
        raise ValueError(f"count must be 1..10000, got {count}")
    argv = ["ping", "-n", "-c", str(count), "-i", f"{interval_s:g}", "-W", "2"]
    if source is not None:
        argv += ["-I", str(ipaddress.IPv4Address(source))]
    return [*argv, addr]


def parse_ping(output: str) -> RttStats:
    """Parse iputils ``ping`` output.  Raises ValueError when no reply came back."""
    samples = tuple(float(m.group(1)) for m in _REPLY.finditer(output))
    counts = _SENT.search(output)
    sent, received = (int(counts.group(1)), int(counts.group(2))) if counts else (len(samples), len(samples))
    if not samples:
        raise ValueError(f"no ping replies ({sent} sent): {output.strip().splitlines()[-1:] or 'no output'}")
    return RttStats(samples, sent, received)
