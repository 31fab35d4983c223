"""md-nbd: SIOS DataKeeper's architecture, a Linux md RAID1 whose second leg is an NBD device on the peer.

DataKeeper for Linux builds its mirror ("NetRAID") from a local disk and a Network Block Device:
nbd-client on the primary talks to nbd-server on the backup, and md mirrors every write to both
legs.  Two modes:

- **synchronous**: md completes a write when both legs have it, so a write costs the slower of
  the local write and the remote one (a round trip, the payload on the wire, the peer's write);
- **write-behind** (mdadm ``--write-behind`` on the write-mostly NBD leg; it needs a bitmap): a
  write completes when the local leg has it, while up to ``write_behind`` (mdadm's default 256)
  remote writes stay outstanding; when the peer cannot keep up the queue fills and writes wait
  for it, so the peer's rate binds and latency rises to what Little's law gives.

Both keep md's write-intent bitmap (DataKeeper's intent log, which spares a full resync after an
interruption): a write to a chunk whose bit is clean first writes the bit to both legs, which
costs one more round of the slower leg.  A bit stays dirty for ``dirty_s`` after its last write
(md's bitmap daemon clears bits on its ``time_base`` period, 5 s by default: an estimate of how
long, not a published figure); an internal bitmap's chunk defaults to 64 MiB (mdadm(8)).  The
NBD leg is one TCP connection per device unless ``connections`` says more, so the single-flow
limit of the path (5 Gbps between AWS instances outside a cluster placement group) binds it, and
so does TCP's window: a connection keeps at most its send buffer (``window_bytes``) unacknowledged
per round trip, however many writes md lets be outstanding (256 write-behind writes of 1 MiB
over 30 ms would otherwise be 8.9 GB/s; a 4 MiB buffer carries 140 MB/s).

All quantities are SI: seconds, bytes, bytes per second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final, Literal

from harness.errors import ConfigError

__all__ = [
    "MDADM_BITMAP_CHUNK",
    "MDADM_WRITE_BEHIND",
    "MdNbd",
    "MdNbdAnswer",
    "Mode",
    "clean_chunk_fraction",
    "predict_mdnbd",
]

#: mdadm(8): "When using an internal bitmap, the chunksize defaults to 64Meg"
MDADM_BITMAP_CHUNK: Final = 64 * 2**20
#: mdadm(8) --write-behind: the maximum number of outstanding writes, "The default value is 256"
MDADM_WRITE_BEHIND: Final = 256
_BISECTIONS: Final = 100

Mode = Literal["sync", "write-behind"]


@dataclass(frozen=True)
class MdNbd:
    """One md-nbd mirror and the writes it carries."""

    bs: int
    outstanding: int
    local_write_s: float
    remote_write_s: float
    rtt_s: float
    local_bps: float
    path_bps: float
    single_flow_bps: float
    mode: Mode = "sync"
    connections: int = 1
    write_behind: int = MDADM_WRITE_BEHIND
    working_set_bytes: float = 100 * 2**30
    bitmap_chunk_bytes: float = MDADM_BITMAP_CHUNK
    #: the send buffer of one NBD connection (``None``: no window is modelled)
    window_bytes: float | None = None
    dirty_s: float = 5.0
    sequential: bool = False

    def __post_init__(self) -> None:
        positive = {
            "bs": self.bs,
            "outstanding": self.outstanding,
            "local_bps": self.local_bps,
            "path_bps": self.path_bps,
            "single_flow_bps": self.single_flow_bps,
            "connections": self.connections,
            "write_behind": self.write_behind,
            "working_set_bytes": self.working_set_bytes,
            "bitmap_chunk_bytes": self.bitmap_chunk_bytes,
        }
        for name, value in positive.items():
            if not value > 0 or not math.isfinite(value):
                raise ConfigError(f"md-nbd: {name} must be a positive finite number, got {value}")
        if self.window_bytes is not None and not (self.window_bytes > 0 and math.isfinite(self.window_bytes)):
            raise ConfigError(f"md-nbd: window_bytes must be a positive finite number, got {self.window_bytes}")
        for name, value in {"local_write_s": self.local_write_s, "remote_write_s": self.remote_write_s}.items():
            if not value > 0:
                raise ConfigError(f"md-nbd: {name} must be above 0 s, got {value}")
        if self.rtt_s < 0 or self.dirty_s < 0:
            raise ConfigError("md-nbd: rtt_s and dirty_s must not be negative")
        if self.mode not in ("sync", "write-behind"):
            raise ConfigError(f"md-nbd: mode {self.mode!r} is neither 'sync' nor 'write-behind'")


@dataclass(frozen=True)
class MdNbdAnswer:
    """What the mirror sustains, what one write costs, and which limit binds."""

    throughput_bps: float
    write_latency_s: float
    binding: str
    clean_fraction: float
    remote_write_s: float


def clean_chunk_fraction(writes_per_s: float, mirror: MdNbd) -> float:
    """Share of writes that find their bitmap chunk clean and must set its bit first.

    Random writes spread over ``working_set / chunk`` chunks; a chunk is clean when none of the
    writes of the last ``dirty_s`` hit it: ``exp(-writes_per_s x dirty_s / chunks)``.  Sequential
    writes dirty a new chunk once per chunk of data: ``bs / chunk`` (at most 1).
    """
    if mirror.sequential:
        return min(1.0, mirror.bs / mirror.bitmap_chunk_bytes)
    chunks = max(1.0, mirror.working_set_bytes / mirror.bitmap_chunk_bytes)
    return math.exp(-writes_per_s * mirror.dirty_s / chunks)


def _remote_s(mirror: MdNbd) -> float:
    """One write on the NBD leg: the round trip, the payload at the connection's rate, the peer's write."""
    wire = min(mirror.path_bps, mirror.single_flow_bps * mirror.connections)
    return mirror.rtt_s + mirror.bs / wire + mirror.remote_write_s


def _rate(mirror: MdNbd, clean: float) -> tuple[float, float, str]:
    """(bytes per second, seconds per write, binding limit) when ``clean`` of the writes set a bit."""
    remote = _remote_s(mirror)
    bit = clean * max(mirror.local_write_s, mirror.rtt_s + mirror.remote_write_s)
    wire = min(mirror.path_bps, mirror.single_flow_bps * mirror.connections)
    wire_name = (
        "replication path" if mirror.path_bps <= mirror.single_flow_bps * mirror.connections else "NBD single flow"
    )
    if mirror.mode == "sync":
        latency = max(mirror.local_write_s, remote) + bit
        limits = {
            "queue depth over write latency": mirror.outstanding * mirror.bs / latency,
            "local volume": mirror.local_bps,
            wire_name: wire,
        }
    else:
        latency = mirror.local_write_s + bit
        limits = {
            "queue depth over write latency": mirror.outstanding * mirror.bs / latency,
            "local volume": mirror.local_bps,
            wire_name: wire,
            "write-behind depth over remote write": mirror.write_behind * mirror.bs / (remote + bit),
        }
    if mirror.window_bytes is not None and mirror.rtt_s > 0:
        limits["TCP send-buffer window"] = mirror.connections * mirror.window_bytes / mirror.rtt_s
    binding = min(limits, key=lambda name: limits[name])
    rate = limits[binding]
    return rate, max(latency, mirror.outstanding * mirror.bs / rate), binding


def predict_mdnbd(mirror: MdNbd) -> MdNbdAnswer:
    """The rate the mirror sustains, the latency of one write, and the binding limit.

    The bitmap share depends on the write rate and the rate on the share, so the answer is the
    fixed point ``X = rate(clean(X / bs))``, found by bisection: ``rate`` falls as ``clean`` rises
    and ``clean`` falls as the rate rises, so ``rate(clean(X)) - X`` falls and crosses zero once.

    Worked example (synchronous, same AZ): 4 KiB writes, 8 in flight, local write 0.5 ms, peer's
    write 0.5 ms, RTT 0.2 ms, a 10 Gbps path and 5 Gbps single flow, 1 TiB written at random
    (16,384 chunks of 64 MiB).  The remote leg costs 0.2 + 4096 B / 625 MB/s (0.0066 ms) + 0.5 =
    0.7066 ms; with no bit to set 8 x 4096 B / 0.7066 ms = 46.4 MB/s (11,322 writes/s), which in
    5 s would leave exp(-11,322 x 5 / 16,384) = 3.2 % of writes on a clean chunk, each paying one
    more 0.7 ms bit write.  The fixed point: 3.55 % clean, 0.7066 + 0.0355 x 0.7 = 0.731 ms a
    write, 8 x 4096 B / 0.731 ms = 44.8 MB/s.  At RTT 30 ms the same mirror in write-behind mode
    is held by the bitmap, not the data: 1.15 MB/s, 92 % of writes setting a bit across the WAN.
    """
    low, high = 0.0, _rate(mirror, 0.0)[0]
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2
        if _rate(mirror, clean_chunk_fraction(middle / mirror.bs, mirror))[0] >= middle:
            low = middle
        else:
            high = middle
    clean = clean_chunk_fraction(low / mirror.bs, mirror)
    rate, latency, binding = _rate(mirror, clean)
    return MdNbdAnswer(min(rate, high), latency, binding, clean, _remote_s(mirror))
