"""Round-trip time probes over the replication path (``ping`` on the node) and their parsing.

Used to check an impairment really took effect before fio starts, and for the lab's RTT
matrix.  We keep every reply's time, not ping's summary line, because the summary's mean is
dominated by outliers: the lab's UML guests show a 10 ms wake-up tail on guest-to-guest round
trips (a lost wake-up in their kernel's idle path), so the *median* and the *minimum* are
the robust figures.
"""

from __future__ import annotations

import ipaddress
import re
import statistics
from dataclasses import dataclass

__all__ = ["RttStats", "parse_ping", "ping_argv"]

_REPLY = re.compile(r"\btime[=<]([0-9]+(?:\.[0-9]+)?) ?ms\b")
# iputils prints "icmp_seq=N", BusyBox "seq=N"
_SEQ = re.compile(r"\b(?:icmp_)?seq=([0-9]+)\b")
# iputils: "5 packets transmitted, 5 received, +2 duplicates, +10 errors, ..."
# BusyBox: "3 packets transmitted, 3 packets received, 2 duplicates, ..."
_SENT = re.compile(r"([0-9]+) packets transmitted, ([0-9]+) (?:packets )?received")
_ERRORS = re.compile(r"\+([0-9]+) errors")
_DEST = re.compile(r"^PING (\S+)", re.MULTILINE)
# iputils: "From 10.213.1.11 icmp_seq=1 Destination Host Unreachable"
_ICMP_ERROR = re.compile(r"^From \S+:? (?:icmp_seq=[0-9]+ )?(.+?)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class RttStats:
    """Round-trip times in milliseconds."""

    samples: tuple[float, ...]
    sent: int
    received: int
    #: replies to a probe already answered (a broadcast address, a duplicating link): not samples
    duplicates: int = 0

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
    """Parse ``ping`` output (iputils, old and new, or BusyBox).  Raises ValueError when no
    reply came back, naming the destination and what ping said instead.

    One sample per probe: a second reply to the same sequence number is a duplicate, whether
    ping marks it ``(DUP!)`` or not (iputils leaves the mark out for broadcast and multicast
    destinations unless ``-v``), and is counted in :attr:`RttStats.duplicates` instead.
    """
    samples: list[float] = []
    seen: set[int] = set()
    duplicates = 0
    for line in output.splitlines():
        reply = _REPLY.search(line)
        if reply is None or line.startswith("From "):
            continue
        seq = _SEQ.search(line)
        if "(DUP!)" in line or (seq is not None and int(seq.group(1)) in seen):
            duplicates += 1
            continue
        if seq is not None:
            seen.add(int(seq.group(1)))
        samples.append(float(reply.group(1)))
    counts = _SENT.search(output)
    sent, received = (int(counts.group(1)), int(counts.group(2))) if counts else (len(samples), len(samples))
    if not samples:
        raise ValueError(_no_replies(output, sent))
    return RttStats(tuple(samples), sent, received, duplicates)


def _no_replies(output: str, sent: int) -> str:
    dest = _DEST.search(output)
    where = dest.group(1) if dest else "the destination"
    if not output.strip():
        return f"no replies from {where}: ping printed nothing"
    errors = _ERRORS.search(output)
    reasons = list(dict.fromkeys(m.group(1) for m in _ICMP_ERROR.finditer(output)))
    detail = f"{sent} sent, 0 replies"
    if errors:
        detail += f", {errors.group(1)} errors"
    if reasons:
        detail += f": {'; '.join(reasons)}"
    return f"no replies from {where} ({detail})"
