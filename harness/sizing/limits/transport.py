"""What TCP itself puts on replication: the send-buffer window, header bytes, protocol A's lag.

* **Window.**  One TCP connection keeps at most its send buffer unacknowledged, so it carries at
  most ``sndbuf / RTT`` (the bandwidth-delay product read backwards).  DRBD leaves
  ``sndbuf-size`` to the kernel's autotuning by default, whose cap is ``tcp_wmem``'s maximum
  (4 MiB on a machine with enough RAM): at 10 ms RTT one peer gets 400 MiB/s however fast the
  network is.
* **Headers.**  The network allowances count bytes on the wire; each segment of ``MSS = MTU -
  headers`` payload bytes costs ``MTU`` bytes (1500 / 1448 = 3.6 % more at MTU 1500).
* **Receive window.**  The peer advertises at most its receive buffer less what the kernel
  counts as buffering overhead, set by ``tcp_adv_win_scale``: the kernel counts
  ``bytes / 2^scale`` of the buffer as overhead when the scale is positive, else
  ``bytes - bytes / 2^-scale``; the default 1 leaves half of ``tcp_rmem``'s maximum (Linux 6.6
  replaced the setting with a measured ratio that starts at half).  The window a
  connection keeps in flight is the smaller of the sender's buffer and that.
* **Window and processing together.**  A byte holds window space from the moment it is sent
  until its ack, and the ack waits for the round trip *and* for the peer to take the byte out of
  its socket: bytes queued behind the replication's processing (measured as ``B0``) hold window
  too.  So the window is a closed loop: ``window / 64 KiB`` segments (the most the stack hands
  down at once, Linux's ``GSO_LEGACY_MAX_SIZE``) cycle through the processing, which queues
  them like a CPU, and the round trip; mean-value analysis of that loop
  (:func:`~harness.sizing.limits.closedloop.closed_loop_rate`) gives the rate.  Far from each other the
  two bounds act alone (``min(B0, window / RTT)``); near each other the rate falls below both.
  The processing's time per segment comes from ``B0`` measured at its own round trip ``RTT0``,
  where the same loop already held it.
* **Protocol A.**  The write is acknowledged once it is in the local disk and the send buffer;
  the peer may lag by what the buffer holds, and a crash of the primary loses that much
  acknowledged data (DRBD's ``on-congestion`` policy decides what happens when it is full).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.errors import ConfigError
from harness.sizing.catalog.loader import Catalog
from harness.sizing.limits.closedloop import EXPONENTIAL, SATURATED, closed_loop_rate
from harness.sizing.limits.limit import Build
from harness.units import MIB

__all__ = [
    "ProtocolALag",
    "add_window_limit",
    "protocol_a_lag",
    "receive_window",
    "window_loop_rate",
    "wire_factor",
]

#: bytes the TCP stack hands down as one unit (the kernel's GSO_LEGACY_MAX_SIZE)
SEGMENT_BYTES = 65536


def wire_factor(catalog: Catalog, mtu: float | None) -> float:
    """Bytes on the wire per payload byte: ``MTU / (MTU - IP and TCP headers)``."""
    headers = catalog.defaults.tcp_ip_header_bytes.value
    size = mtu if mtu is not None else catalog.defaults.mtu_bytes.value
    if size <= headers:
        raise ConfigError(f"MTU {size:g} leaves no room for the {headers:g} bytes of IP and TCP headers")
    return size / (size - headers)


def receive_window(rmem_max: float, adv_win_scale: int) -> float:
    """The largest window a receiver with ``tcp_rmem`` maximum ``rmem_max`` advertises."""
    if rmem_max <= 0:
        raise ConfigError(f"tcp_rmem maximum must be positive, got {rmem_max:g}")
    if not -31 <= adv_win_scale <= 31:
        raise ConfigError(f"tcp_adv_win_scale must be in [-31, 31], got {adv_win_scale}")
    if adv_win_scale > 0:
        return float(rmem_max - rmem_max / 2.0**adv_win_scale)
    return float(rmem_max / 2.0 ** (-adv_win_scale))


def window_loop_rate(window: float, rtt_s: float, processing: float, processing_rtt_s: float | None = None) -> float:
    """Bytes/s one connection moves when ``window`` bytes cycle through the round trip and a
    processing measured at ``processing`` bytes/s (at ``processing_rtt_s``, if known)."""
    segments = max(1, round(window / SEGMENT_BYTES))
    size = window / segments

    def rate(service_s: float, think_s: float) -> float:
        return closed_loop_rate(segments, [service_s], think_s, [EXPONENTIAL]) * size

    service = size / processing
    if processing_rtt_s is not None and processing_rtt_s > 0:
        # the measured rate already ran in this loop at its own round trip: the service time
        # that gives it there (the rate falls as the service grows)
        low, high = service * 1e-3, service
        if rate(low, processing_rtt_s) >= processing:
            for _ in range(60):
                mid = (low + high) / 2
                low, high = (mid, high) if rate(mid, processing_rtt_s) >= processing else (low, mid)
            service = low
    return rate(service, rtt_s)


def add_window_limit(
    build: Build,
    writes: float,
    bs: int,
    *,
    rtt_s: float,
    sndbuf: float,
    explicit: bool,
    origin: str | None = None,
    processing: float | None = None,
    processing_rtt_s: float | None = None,
) -> None:
    """One connection per peer moves at most ``sndbuf`` bytes per round trip (``origin``: where
    a window read from the nodes came from).  With the replication's measured ``processing``
    (bytes/s, at ``processing_rtt_s``), a longer round trip than the measurement's runs the two
    as one loop (module docstring); where the window leaves the processing its rate, the bound
    is the bare ``sndbuf / RTT``."""
    if rtt_s <= 0 or writes <= 0:
        return
    figure = build.catalog.defaults.tcp_sndbuf_bytes
    explicit = explicit or origin is not None
    if origin is None:
        origin = "--sndbuf" if explicit else "tcp_wmem max (DRBD sndbuf-size 0 = autotuned)"
    rate = sndbuf / rtt_s
    detail = (
        f"one connection per peer keeps at most {sndbuf / MIB:g} MiB unacknowledged ({origin}): "
        f"{sndbuf / MIB:g} MiB / {rtt_s * 1000:.3g} ms RTT"
    )
    if processing is not None and processing > 0 and rtt_s > (processing_rtt_s or 0.0):
        looped = window_loop_rate(sndbuf, rtt_s, processing, processing_rtt_s)
        if looped < SATURATED * min(processing, rate):
            rate = looped
            detail += (
                f", less the window its bytes hold while queued behind the replication's "
                f"{processing / MIB:,.1f} MiB/s of processing: {looped / MIB:,.1f} MiB/s"
            )
    build.cap(
        key="replication.window",
        label="TCP send-buffer window",
        resource="window",
        units_per_io=writes * bs,
        baseline=rate,
        detail=detail,
        estimate=figure.estimate and not explicit,
        sources=() if explicit else tuple(figure.sources),
    )


@dataclass(frozen=True)
class ProtocolALag:
    """How far a protocol A peer may trail the primary, in bytes, writes and seconds."""

    bytes: float
    writes: float
    seconds: float


def protocol_a_lag(sndbuf: float, bs: int, replicated_bytes_s: float) -> ProtocolALag:
    """The send buffer full of acknowledged writes, drained at the replication rate."""
    seconds = sndbuf / replicated_bytes_s if replicated_bytes_s > 0 else float("inf")
    return ProtocolALag(bytes=sndbuf, writes=sndbuf / bs, seconds=seconds)
