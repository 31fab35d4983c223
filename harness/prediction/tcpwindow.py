"""The most one replication connection keeps in flight, read from the pair's own TCP buffers.

DRBD leaves ``sndbuf-size`` and ``rcvbuf-size`` at 0 by default: the kernel autotunes both,
up to ``tcp_wmem``'s maximum on the sender and ``tcp_rmem``'s on the receiver, and the
receiver advertises its buffer less what ``tcp_adv_win_scale`` counts as overhead
(:func:`~harness.sizing.limits.transport.receive_window`).  The kernel scales those maxima to
the machine's memory at boot (1.8-1.9 MB on a 256 MiB lab guest, 4 and 6 MiB by default on a
larger one), so they are read, not assumed.  Read once per calibration; kept with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from harness.errors import InfraError
from harness.remote import Runner
from harness.sizing.limits.transport import receive_window

__all__ = ["TCP_BUFFERS_ARGV", "TcpBuffers", "connection_window", "parse_tcp_buffers", "read_window"]

#: read-only; four lines: tcp_wmem, tcp_rmem, tcp_adv_win_scale, the kernel release
TCP_BUFFERS_ARGV: Final = (
    "cat",
    "/proc/sys/net/ipv4/tcp_wmem",
    "/proc/sys/net/ipv4/tcp_rmem",
    "/proc/sys/net/ipv4/tcp_adv_win_scale",
    "/proc/sys/kernel/osrelease",
)
#: the kernel that made tcp_adv_win_scale obsolete (its receive window starts at half the
#: buffer, TCP_DEFAULT_SCALING_RATIO, and follows the payload share it measures)
_MEASURED_RATIO_KERNEL: Final = (6, 6)


@dataclass(frozen=True)
class TcpBuffers:
    """One node's autotuning maxima (bytes), its ``tcp_adv_win_scale`` and kernel release."""

    wmem_max: int
    rmem_max: int
    adv_win_scale: int
    kernel: str

    @property
    def receive_window(self) -> float:
        scale = self.adv_win_scale
        if _kernel_version(self.kernel) >= _MEASURED_RATIO_KERNEL:
            scale = 1
        return receive_window(self.rmem_max, scale)


def _kernel_version(release: str) -> tuple[int, int]:
    parts = release.split(".")
    try:
        return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)
    except (IndexError, ValueError):
        return (0, 0)


def parse_tcp_buffers(text: str, node: str = "node") -> TcpBuffers:
    """:data:`TCP_BUFFERS_ARGV`'s output; :class:`InfraError` names what is missing."""
    lines = [line.split() for line in text.strip().splitlines()]
    try:
        wmem, rmem, scale, release = lines
        return TcpBuffers(int(wmem[2]), int(rmem[2]), int(scale[0]), release[0])
    except (ValueError, IndexError):
        raise InfraError(f"{node}: unreadable TCP buffer sysctls: {text.strip()[:200]!r}") from None


def connection_window(sender: TcpBuffers, receiver: TcpBuffers) -> float:
    """Bytes one connection from ``sender`` to ``receiver`` keeps in flight at most."""
    return min(float(sender.wmem_max), receiver.receive_window)


def read_window(sender: Runner, receiver: Runner) -> float:
    """:func:`connection_window` of the two nodes, read now."""
    sides = [parse_tcp_buffers(n.run(list(TCP_BUFFERS_ARGV), timeout=20).stdout, n.name) for n in (sender, receiver)]
    return connection_window(*sides)
