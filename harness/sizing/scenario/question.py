"""The sizing question: what runs (workload), on what (nodes and their volumes), where, measured how.

A :class:`Scenario` is everything a prediction depends on besides the catalog; the text forms a
user writes its parts in are :mod:`harness.sizing.scenario.notation`.

Units inside the model are SI base units: bytes, seconds, operations per second, bytes per second.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from harness.errors import ConfigError
from harness.fields import ReplicationProtocol
from harness.limits import MAX_IN_FLIGHT
from harness.sizing.scenario.topology import MAX_PEERS, PeerSlot, check_topology

__all__ = [
    "MAX_STRIPES",
    "RW_MODES",
    "Calibration",
    "Scenario",
    "SizedNode",
    "VolumeSpec",
    "Workload",
]

#: the most volumes of one RAID0 stripe the model takes (Linux md allows more; past this the
#: instance's own storage cap binds on every type the catalog holds)
MAX_STRIPES = 64

#: fio ``rw`` modes the model understands and the fraction of their I/Os that are reads
#: (``None``: mixed, the split comes from ``rwmixread``).
RW_MODES: Mapping[str, float | None] = {
    "read": 1.0,
    "randread": 1.0,
    "write": 0.0,
    "randwrite": 0.0,
    "rw": None,
    "readwrite": None,
    "randrw": None,
}


@dataclass(frozen=True)
class Workload:
    """An fio-style workload: pattern, block size and how many I/Os are in flight."""

    rw: str
    bs: int
    numjobs: int = 1
    iodepth: int = 1
    rwmixread: int = 50

    def __post_init__(self) -> None:
        if self.rw not in RW_MODES:
            raise ConfigError(f"unknown rw mode {self.rw!r}; use one of {', '.join(RW_MODES)}")
        if self.bs <= 0:
            raise ConfigError(f"block size must be positive, got {self.bs}")
        if self.numjobs < 1 or self.iodepth < 1:
            raise ConfigError("numjobs and iodepth must be at least 1")
        if self.numjobs * self.iodepth > MAX_IN_FLIGHT:
            raise ConfigError(f"numjobs x iodepth must be at most {MAX_IN_FLIGHT} I/Os in flight")
        if not 0 <= self.rwmixread <= 100:
            raise ConfigError(f"rwmixread must be 0..100, got {self.rwmixread}")

    @property
    def read_fraction(self) -> float:
        """Share of I/Os that are reads (reads are served locally and never replicated)."""
        fixed = RW_MODES[self.rw]
        return self.rwmixread / 100 if fixed is None else fixed

    @property
    def write_fraction(self) -> float:
        """Share of I/Os that are writes (every write is replicated to the peer once)."""
        return 1.0 - self.read_fraction

    @property
    def outstanding(self) -> int:
        """I/Os in flight at any moment: ``numjobs x iodepth``."""
        return self.numjobs * self.iodepth


@dataclass(frozen=True)
class VolumeSpec:
    """A volume as a user names it: ``gp2:100GiB``, ``io1:200GiB:8000``, ``gp3:500GiB:6000:500``.

    ``stripes`` > 1 is a RAID0 of that many such volumes (``4xgp3:500GiB``): each one's size,
    IOPS and throughput as given, the stripe delivering their sum and costing their sum.
    ``on_demand_burst`` enables an Azure Premium SSD's on-demand bursting (P30 and larger).
    """

    type: str
    size_gib: float | None = None
    iops: float | None = None
    mib_s: float | None = None
    stripes: int = 1
    on_demand_burst: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.stripes <= MAX_STRIPES:
            raise ConfigError(f"a RAID0 stripe has 1..{MAX_STRIPES} volumes, got {self.stripes}")


@dataclass(frozen=True)
class SizedNode:
    """One node of the pair: its instance type and the volume under the replicated device."""

    instance_type: str
    volume: VolumeSpec


@dataclass(frozen=True)
class Calibration:
    """Measured values that replace catalog figures (the lab, or a real cluster's calibration step).

    * ``local_write_latency_s`` / ``local_read_latency_s``: per-I/O latency of the scratch device
      at queue depth 1; replaces the volume type's typical latency on both nodes (reads default
      to the write figure when only that was measured).
    * ``local_bandwidth`` (bytes/s) / ``local_iops``: what the scratch device sustained; replaces
      the volume *and* instance-EBS limits of both nodes (a measurement already includes both).
    * ``rtt_s``: measured round trip of the replication path; replaces the placement's RTT.
    * ``path_rate_bits``: measured rate of the replication path (bits/s); replaces the instance
      network, the single-flow cap and the shared-NIC accounting.
    * ``replication_overhead_s``: per-write time a replicated write (protocols B and C) takes
      beyond the RTT and the peer's disk write: DRBD's own processing, the TCP stacks, and on
      virtual machines the scheduling of both guests.  Measured as a replicated QD1 write's
      latency minus what the model explains of it; catalog values have no such term (0).
    * ``replicated_iops``: replicated small writes (of ``replicated_iops_bs`` bytes) per second
      the pair sustains however many are in flight (CPU, DRBD's worker threads); a limit only a
      measurement can give.  With ``replicated_bandwidth`` it also says what a write of another
      size costs: a fixed part per write and a part per byte, through both measured points.
    * ``replicated_bandwidth`` (bytes/s): what the pair's replication moves with large writes,
      below the bare path rate by DRBD's per-request processing on both nodes.
    * ``replicated_bandwidth_rtt_s``: the round trip ``replicated_bandwidth`` was measured at.
    * ``tcp_window_bytes``: the most one replication connection keeps in flight, read from the
      nodes' TCP buffers; it replaces the catalog's send buffer.  At a longer round trip than
      the bandwidth's, the window and the replication's processing run as one closed loop
      (:func:`~harness.sizing.limits.transport.window_loop_rate`): far apart each bounds the
      rate alone, ``min(bandwidth, window / RTT)``; close, the rate falls below both.
    """

    local_write_latency_s: float | None = None
    local_read_latency_s: float | None = None
    local_bandwidth: float | None = None
    local_iops: float | None = None
    rtt_s: float | None = None
    path_rate_bits: float | None = None
    replication_overhead_s: float | None = None
    replicated_iops: float | None = None
    replicated_bandwidth: float | None = None
    replicated_bandwidth_rtt_s: float | None = None
    tcp_window_bytes: float | None = None
    replicated_iops_bs: int = 4096
    label: str = "calibration"

    def __post_init__(self) -> None:
        for name in (
            "local_write_latency_s",
            "local_read_latency_s",
            "local_bandwidth",
            "local_iops",
            "replicated_iops",
            "replicated_bandwidth",
            "tcp_window_bytes",
        ):
            value = getattr(self, name)
            if value is not None and not (value > 0 and math.isfinite(value)):
                raise ConfigError(f"calibration {name} must be a positive number, got {value}")
        for name in ("rtt_s", "replication_overhead_s", "replicated_bandwidth_rtt_s"):
            value = getattr(self, name)
            if value is not None and not (value >= 0 and math.isfinite(value)):
                raise ConfigError(f"calibration {name} must be >= 0, got {value}")
        if self.path_rate_bits is not None and not (self.path_rate_bits > 0 and math.isfinite(self.path_rate_bits)):
            raise ConfigError(f"calibration path_rate_bits must be positive, got {self.path_rate_bits}")


@dataclass(frozen=True)
class Scenario:
    """Everything a prediction depends on besides the catalog.

    ``peer`` defaults to a copy of ``primary``; with ``peers`` > 1 (DRBD 9) every peer is like it.
    ``rtt_s`` overrides the named ``placement``'s RTT.  ``topology`` (DRBD 9) places each peer
    on its own instead (``placement``, ``rtt_s`` and ``peers`` then stay at their defaults), and
    may make some diskless tie-breakers.  ``duration_s`` is how long the load runs;
    ``None`` asks for the long-run steady state.  ``sndbuf_bytes`` and ``mtu_bytes`` replace the
    catalog's TCP send buffer and MTU.  ``launch_credits`` starts a burstable instance in
    standard mode with its launch CPU credits; by default its credits are spent (a replicated pair
    runs continuously, so a benchmark samples it at its CPU baseline).
    """

    primary: SizedNode
    workload: Workload
    peer: SizedNode | None = None
    replicate: bool = True
    placement: str = "same-az"
    rtt_s: float | None = None
    protocol: ReplicationProtocol = "C"
    duration_s: float | None = None
    calibration: Calibration | None = None
    peers: int = 1
    sndbuf_bytes: float | None = None
    mtu_bytes: float | None = None
    launch_credits: bool = False
    topology: tuple[PeerSlot, ...] = ()

    def __post_init__(self) -> None:
        if self.protocol not in ("A", "B", "C"):
            raise ConfigError(f"protocol must be A, B or C, got {self.protocol!r}")
        if not 1 <= self.peers <= MAX_PEERS:
            raise ConfigError(
                f"peers must be 1..{MAX_PEERS} (DRBD 9 allows {MAX_PEERS} peers per resource), got {self.peers}"
            )
        if self.topology:
            check_topology(self.topology)
            if (self.peers, self.placement, self.rtt_s) != (1, "same-az", None):
                raise ConfigError("a topology places every peer itself: give it without peers, placement or RTT")
            if not self.replicate:
                raise ConfigError("a topology has peers: it cannot be modelled without replication")
        for name in ("sndbuf_bytes", "mtu_bytes"):
            value = getattr(self, name)
            if value is not None and not (value > 0 and math.isfinite(value)):
                raise ConfigError(f"{name} must be a positive number, got {value}")
        if self.duration_s is not None and not (self.duration_s > 0 and math.isfinite(self.duration_s)):
            raise ConfigError(f"duration must be positive, got {self.duration_s}")
        if self.rtt_s is not None and not (self.rtt_s >= 0 and math.isfinite(self.rtt_s)):
            raise ConfigError(f"RTT must be >= 0, got {self.rtt_s}")

    @property
    def peer_slots(self) -> tuple[PeerSlot, ...]:
        """Every peer of the primary with its placement: the topology's, else ``peers`` alike."""
        if not self.replicate:
            return ()
        return self.topology or (PeerSlot(self.placement, self.rtt_s),) * self.peers

    @property
    def data_peers(self) -> tuple[PeerSlot, ...]:
        """The peers that hold a replica: every write goes to each, and waits for the slowest."""
        return tuple(slot for slot in self.peer_slots if not slot.diskless)

    def protocol_of(self, slot: PeerSlot) -> ReplicationProtocol:
        """The DRBD protocol of the connection to ``slot``: its own, else the resource's."""
        return slot.protocol if slot.protocol is not None else self.protocol

    @property
    def waited_peers(self) -> tuple[PeerSlot, ...]:
        """The replicas a write waits for: every one but those under protocol A."""
        return tuple(slot for slot in self.data_peers if self.protocol_of(slot) != "A")

    @property
    def write_protocol(self) -> ReplicationProtocol:
        """The protocol a write's completion follows: the strictest of the replicas' (C waits for
        a peer's disk, B for its receipt, A for neither), or the resource's without replication."""
        protocols = {self.protocol_of(slot) for slot in self.data_peers}
        strictest: tuple[ReplicationProtocol, ...] = ("C", "B", "A")
        return next((p for p in strictest if p in protocols), self.protocol)

    @property
    def peer_node(self) -> SizedNode | None:
        """The peer actually modelled: ``None`` without replication, else ``peer`` or ``primary``."""
        if not self.replicate:
            return None
        return self.peer if self.peer is not None else self.primary
