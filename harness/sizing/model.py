"""Predict replicated-write throughput, IOPS and latency from published limits, naming the binding one.

The model answers the pre-sales question "will this pair sustain N MB/s of this workload?" the way
an SRE reasons about it: every resource on the write path (each node's volume, each instance's
dedicated EBS link, the primary's outbound and the peer's inbound network allowance, the single
TCP flow DRBD replicates over, and the latency of a synchronous write) allows at most some I/O
rate, and the workload gets the smallest of them.  Each limit is returned with its value, so the
answer says *which* limit binds and how much headroom the others leave.

Time matters because several AWS limits are credit buckets (gp2 I/O credits, st1 throughput
credits, the 30-minute EBS burst of smaller instances, network I/O credits).  The model starts
with full buckets, runs the workload at the rate the limits allow, drains each bucket by what the
workload uses above that bucket's baseline, and switches a limit to its baseline when its bucket
empties (or, if the workload then uses less than the baseline, at the rate that spends credits as
fast as they are earned).  The result is a list of phases ("3,000 IOPS for the first 33 minutes,
then 300").

Everything here is pure: no I/O, no clock.  Measured values (local write latency and bandwidth,
RTT and rate of the replication path) enter through :class:`Calibration` and replace the catalog
figures they correspond to, so the same model serves the lab and real clusters.

Units inside the model are SI base units: bytes, seconds, operations per second, bytes per second.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from harness.errors import ConfigError
from harness.sizing.catalog import (
    Catalog,
    FixedVolume,
    InstanceStoreVolume,
    InstanceType,
    ProvisionedThroughput,
    ProvisionedVolume,
    SizeScaledBurstVolume,
    ThroughputBurstVolume,
    VolumeType,
)

__all__ = [
    "LATENCY_KEY",
    "MIB",
    "RW_MODES",
    "Calibration",
    "LimitValue",
    "NodeSpec",
    "Phase",
    "Prediction",
    "Protocol",
    "Requirement",
    "Scenario",
    "SearchHit",
    "VolumePerformance",
    "VolumeSpec",
    "Workload",
    "predict",
    "search",
    "volume_performance",
]

MIB = 1024**2
GIB = 1024**3
TIB = 1024**4
KIB = 1024

Protocol = Literal["A", "B", "C"]

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

_REL_TIE = 1e-9


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


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
    """A volume as a user names it: ``gp2:100GiB``, ``io1:200GiB:8000``, ``gp3:500GiB:6000:500``."""

    type: str
    size_gib: float | None = None
    iops: float | None = None
    mib_s: float | None = None


@dataclass(frozen=True)
class NodeSpec:
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
    * ``replicated_iops``: replicated small writes per second the pair sustains however many
      are in flight (CPU, DRBD's worker threads); a limit only a measurement can give.
    * ``replicated_bandwidth`` (bytes/s): what the pair's replication moves with large writes,
      below the bare path rate by DRBD's per-request processing on both nodes.
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
    label: str = "calibration"

    def __post_init__(self) -> None:
        for name in (
            "local_write_latency_s",
            "local_read_latency_s",
            "local_bandwidth",
            "local_iops",
            "replicated_iops",
            "replicated_bandwidth",
        ):
            value = getattr(self, name)
            if value is not None and not (value > 0 and math.isfinite(value)):
                raise ConfigError(f"calibration {name} must be a positive number, got {value}")
        for name in ("rtt_s", "replication_overhead_s"):
            value = getattr(self, name)
            if value is not None and not (value >= 0 and math.isfinite(value)):
                raise ConfigError(f"calibration {name} must be >= 0, got {value}")
        if self.path_rate_bits is not None and not (self.path_rate_bits > 0 and math.isfinite(self.path_rate_bits)):
            raise ConfigError(f"calibration path_rate_bits must be positive, got {self.path_rate_bits}")


@dataclass(frozen=True)
class Scenario:
    """Everything a prediction depends on besides the catalog.

    ``peer`` defaults to a copy of ``primary``.  ``rtt_s`` overrides the named ``placement``'s RTT.
    ``duration_s`` is how long the load runs; ``None`` asks for the long-run steady state.
    """

    primary: NodeSpec
    workload: Workload
    peer: NodeSpec | None = None
    replicate: bool = True
    placement: str = "same-az"
    rtt_s: float | None = None
    protocol: Protocol = "C"
    duration_s: float | None = None
    calibration: Calibration | None = None

    def __post_init__(self) -> None:
        if self.protocol not in ("A", "B", "C"):
            raise ConfigError(f"protocol must be A, B or C, got {self.protocol!r}")
        if self.duration_s is not None and not (self.duration_s > 0 and math.isfinite(self.duration_s)):
            raise ConfigError(f"duration must be positive, got {self.duration_s}")
        if self.rtt_s is not None and not (self.rtt_s >= 0 and math.isfinite(self.rtt_s)):
            raise ConfigError(f"RTT must be >= 0, got {self.rtt_s}")

    @property
    def peer_node(self) -> NodeSpec | None:
        """The peer actually modelled: ``None`` without replication, else ``peer`` or ``primary``."""
        if not self.replicate:
            return None
        return self.peer if self.peer is not None else self.primary


# --------------------------------------------------------------------------------------------
# Volume performance
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VolumePerformance:
    """A volume's IOPS and throughput limits for one size/IOPS choice, with its burst bucket.

    ``iops`` count operations of up to ``io_unit`` bytes (EBS splits larger I/Os).  When
    ``read_iops`` is set, reads and writes have separate caps (instance store); otherwise they
    share ``baseline_iops``.  ``throughput_bucket`` says what gates ``burst_bytes_s``: the
    I/O-credit bucket (``"iops"``, gp2), a byte bucket (``"bytes"``, st1) or nothing.
    """

    type: str
    description: str
    io_unit: int
    baseline_iops: float
    burst_iops: float | None = None
    iops_bucket: float | None = None
    read_iops: float | None = None
    baseline_bytes_s: float | None = None
    burst_bytes_s: float | None = None
    throughput_bucket: Literal["iops", "bytes"] | None = None
    bytes_bucket: float | None = None
    write_latency_s: float = 0.001
    read_latency_s: float = 0.001
    latency_estimate: bool = False
    latency_note: str = ""
    notes: tuple[str, ...] = ()

    def burst_seconds(self, iops: float | None = None) -> float | None:
        """How long a full I/O-credit bucket lasts at ``iops`` (default: the burst rate).

        AWS gp2: burst duration = credit balance / (burst IOPS - 3 x size in GiB).
        ``None`` when there is no bucket or the rate does not exceed the baseline.
        """
        if self.iops_bucket is None or self.burst_iops is None:
            return None
        rate = self.burst_iops if iops is None else min(iops, self.burst_iops)
        if rate <= self.baseline_iops:
            return None
        return self.iops_bucket / (rate - self.baseline_iops)


class _LatencyFields(TypedDict):
    write_latency_s: float
    read_latency_s: float
    latency_estimate: bool
    latency_note: str


def volume_performance(name: str, volume: VolumeType, spec: VolumeSpec, instance: InstanceType) -> VolumePerformance:
    """Limits of volume type ``volume`` at ``spec``'s size/IOPS/throughput on ``instance``.

    Raises ConfigError for choices the provider would refuse (size out of range, IOPS above the
    per-GiB ratio, IOPS given for a type whose IOPS follow from its size, ...).
    """
    size = spec.size_gib
    latency: _LatencyFields = {
        "write_latency_s": volume.latency.write_ms / 1000,
        "read_latency_s": volume.latency.read_ms / 1000,
        "latency_estimate": volume.latency.estimate,
        "latency_note": volume.latency.note,
    }
    notes = tuple(volume.notes)
    if isinstance(volume, InstanceStoreVolume):
        store = instance.instance_store
        if store is None:
            raise ConfigError(f"{name}: this instance type has no instance store")
        if spec.iops is not None or spec.mib_s is not None:
            raise ConfigError(f"{name}: instance-store performance is fixed; drop the IOPS/MiBps fields")
        return VolumePerformance(
            type=name,
            description=f"{name} ({store.devices} x {store.device_size_gb:g} GB NVMe)",
            io_unit=volume.io_unit_kib * KIB,
            baseline_iops=store.write_iops_4k,
            read_iops=store.read_iops_4k,
            notes=notes,
            **latency,
        )

    if size is None:
        raise ConfigError(f"volume {name} needs a size, e.g. {name}:100GiB")
    if volume.min_size_gib is not None and size < volume.min_size_gib:
        raise ConfigError(f"{name} volumes are at least {volume.min_size_gib:g} GiB, got {size:g} GiB")
    if volume.max_size_gib is not None and size > volume.max_size_gib:
        raise ConfigError(f"{name} volumes are at most {volume.max_size_gib:g} GiB, got {size:g} GiB")
    unit = volume.io_unit_kib * KIB
    label = f"{name} {size:g} GiB"

    if isinstance(volume, SizeScaledBurstVolume):
        _no_provisioning(name, spec, "its IOPS and throughput follow from its size")
        baseline = min(max(volume.iops_per_gib * size, volume.min_iops), volume.max_iops)
        bursts = volume.burst_iops > baseline
        tier = [t for t in volume.throughput_tiers if t.from_gib <= size]
        chosen = tier[-1] if tier else volume.throughput_tiers[0]
        burst_tput = chosen.burst_mib_s if bursts else None
        return VolumePerformance(
            type=name,
            description=label,
            io_unit=unit,
            baseline_iops=baseline,
            burst_iops=volume.burst_iops if bursts else None,
            iops_bucket=volume.burst_bucket_io_credits if bursts else None,
            baseline_bytes_s=chosen.mib_s * MIB,
            burst_bytes_s=burst_tput * MIB if burst_tput is not None else None,
            throughput_bucket="iops" if burst_tput is not None else None,
            notes=notes,
            **latency,
        )

    if isinstance(volume, ProvisionedVolume):
        iops = spec.iops if spec.iops is not None else volume.default_iops
        if iops is None:
            raise ConfigError(f"{name} needs provisioned IOPS, e.g. {name}:{size:g}GiB:3000")
        ceiling = min(volume.max_iops, volume.max_iops_per_gib * size)
        if not volume.min_iops <= iops <= ceiling:
            raise ConfigError(
                f"{label} allows {volume.min_iops:g}..{ceiling:g} IOPS "
                f"({volume.max_iops_per_gib:g} IOPS/GiB, at most {volume.max_iops:g}), got {iops:g}"
            )
        extra_notes: list[str] = []
        effective = iops
        if volume.max_iops_non_nitro is not None and not instance.nitro and iops > volume.max_iops_non_nitro:
            effective = volume.max_iops_non_nitro
            extra_notes.append(
                f"{name} above {volume.max_iops_non_nitro:g} IOPS needs a Nitro instance; this one gets {effective:g}."
            )
        throughput = volume.throughput
        if isinstance(throughput, ProvisionedThroughput):
            mib_s = spec.mib_s if spec.mib_s is not None else throughput.default_mib_s
            tput_ceiling = min(throughput.max_mib_s, throughput.max_mib_s_per_iops * iops)
            if not 0 < mib_s <= tput_ceiling:
                raise ConfigError(
                    f"{label} with {iops:g} IOPS allows up to {tput_ceiling:g} MiB/s "
                    f"({throughput.max_mib_s_per_iops:g} MiB/s per IOPS, at most "
                    f"{throughput.max_mib_s:g}), got {mib_s:g}"
                )
        else:
            if spec.mib_s is not None:
                raise ConfigError(f"{name} throughput follows from its IOPS; drop the MiBps field")
            step = next((s for s in throughput.steps if effective <= s.up_to_iops), throughput.steps[-1])
            mib_s = min(step.max_mib_s, effective * step.kib_per_iops / 1024)
        return VolumePerformance(
            type=name,
            description=f"{label}, {iops:g} IOPS",
            io_unit=unit,
            baseline_iops=effective,
            baseline_bytes_s=mib_s * MIB,
            notes=notes + tuple(extra_notes),
            **latency,
        )

    if isinstance(volume, ThroughputBurstVolume):
        _no_provisioning(name, spec, "its throughput follows from its size")
        tib = size * GIB / TIB
        baseline_mib = min(volume.max_mib_s, volume.baseline_mib_s_per_tib * tib)
        burst_mib = min(volume.max_mib_s, volume.burst_mib_s_per_tib * tib)
        bursts = burst_mib > baseline_mib
        return VolumePerformance(
            type=name,
            description=label,
            io_unit=unit,
            baseline_iops=volume.max_iops,
            baseline_bytes_s=baseline_mib * MIB,
            burst_bytes_s=burst_mib * MIB if bursts else None,
            throughput_bucket="bytes" if bursts else None,
            bytes_bucket=volume.bucket_tib_per_tib * tib * TIB if bursts else None,
            notes=notes,
            **latency,
        )

    if isinstance(volume, FixedVolume):
        _no_provisioning(name, spec, "its performance is fixed")
        return VolumePerformance(
            type=name,
            description=label,
            io_unit=unit,
            baseline_iops=volume.iops,
            baseline_bytes_s=volume.mib_s * MIB,
            notes=notes,
            **latency,
        )
    raise AssertionError(f"unhandled volume model {volume!r}")  # pragma: no cover


def _no_provisioning(name: str, spec: VolumeSpec, why: str) -> None:
    if spec.iops is not None or spec.mib_s is not None:
        raise ConfigError(f"{name} takes no provisioned IOPS or MiB/s: {why}")


# --------------------------------------------------------------------------------------------
# Limits and buckets
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Bucket:
    """A credit bucket: ``capacity`` units, refilled at ``earn`` units/s, drained per I/O."""

    key: str
    capacity: float
    earn: float
    units_per_io: float


@dataclass(frozen=True)
class _Limit:
    """A cap of ``baseline`` (or ``burst`` while ``bucket`` has credits) units per second."""

    key: str
    label: str
    resource: str
    units_per_io: float
    baseline: float
    detail: str
    burst: float | None = None
    bucket: str | None = None
    estimate: bool = False
    sources: tuple[str, ...] = ()

    def rate(self, balances: Mapping[str, float], buckets: Mapping[str, _Bucket]) -> float:
        """Workload I/Os per second this limit allows given the current bucket balances.

        With credits left the limit runs at its burst level.  With its bucket empty it runs at the
        rate that spends credits exactly as fast as they are earned (never below its baseline):
        a fluid view of "burst, run dry, refill a little, burst again".  For most limits that is
        the baseline; for gp2 throughput in the 171-333 GiB band it is the baseline IOPS x the
        I/O size when that exceeds the 128 MiB/s floor.
        """
        baseline = self.baseline / self.units_per_io
        if self.burst is None or self.bucket is None:
            return baseline
        burst = self.burst / self.units_per_io
        if balances.get(self.bucket, 0.0) > 0:
            return burst
        bucket = buckets.get(self.bucket)
        if bucket is None:
            return baseline
        return max(baseline, min(burst, bucket.earn / bucket.units_per_io))


#: limits that carry replication traffic; their raw rate also delays each replicated write
_PATH_KEYS = ("primary.network.out", "peer.network.in", "replication.flow", "replication.path")
LATENCY_KEY = "latency"


@dataclass(frozen=True)
class _Latency:
    """Per-I/O service times the latency bound is built from."""

    outstanding: int
    read_fraction: float
    write_fraction: float
    local_write_s: float
    local_read_s: float
    peer_write_s: float | None
    rtt_s: float
    protocol: Protocol
    bs: int
    overhead_s: float = 0.0

    def per_io(self, path_rate: float | None) -> float:
        """Mean service time of one I/O given the replication path's current byte rate."""
        return self.read_fraction * self.local_read_s + self.write_fraction * self.write_s(path_rate)

    def write_s(self, path_rate: float | None) -> float:
        """Time until a write completes, per DRBD protocol (local and remote start together)."""
        if self.peer_write_s is None or self.protocol == "A":
            return self.local_write_s
        serialization = self.bs / path_rate if path_rate else 0.0
        remote = self.rtt_s + serialization + self.overhead_s
        if self.protocol == "C":
            remote += self.peer_write_s
        return max(self.local_write_s, remote)

    def describe(self, path_rate: float | None) -> str:
        ms = 1000.0
        write = self.write_s(path_rate)
        if self.peer_write_s is None:
            how = f"local write {self.local_write_s * ms:.3g} ms"
        elif self.protocol == "A":
            how = f"protocol A waits for the local write only ({self.local_write_s * ms:.3g} ms)"
        else:
            ser = self.bs / path_rate if path_rate else 0.0
            parts = f"RTT {self.rtt_s * ms:.3g} ms"
            if ser > 0:
                parts += f" + {ser * ms:.2g} ms on the wire"
            if self.overhead_s > 0:
                parts += f" + replication overhead {self.overhead_s * ms:.3g} ms"
            if self.protocol == "C":
                parts += f" + peer write {self.peer_write_s * ms:.3g} ms"
            how = (
                f"protocol {self.protocol}: max(local write {self.local_write_s * ms:.3g} ms, "
                f"{parts}) = {write * ms:.3g} ms"
            )
        if self.read_fraction > 0:
            how += f"; reads {self.local_read_s * ms:.3g} ms locally"
        return f"{self.outstanding} I/Os in flight / {self.per_io(path_rate) * ms:.3g} ms per I/O ({how})"


# --------------------------------------------------------------------------------------------
# Outputs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LimitValue:
    """One limit as the workload sees it: the I/O rate and bandwidth it allows.

    ``iops``/``bw`` are over the prediction's basis (steady state, or the mean over the run);
    ``baseline_iops``/``burst_iops`` are the two levels of a credit-limited resource and
    ``burst_ends_s`` is when its credits ran out under this workload (``None``: never within the
    horizon, or no burst).
    """

    key: str
    label: str
    resource: str
    iops: float
    bw: float
    baseline_iops: float
    burst_iops: float | None
    burst_ends_s: float | None
    detail: str
    estimate: bool
    sources: tuple[str, ...]


@dataclass(frozen=True)
class Phase:
    """A stretch of the run with constant limits; ``end_s`` is ``None`` for the open last one."""

    start_s: float
    end_s: float | None
    iops: float
    bw: float
    latency_s: float
    bottleneck: str
    limits: Mapping[str, float]

    @property
    def length_s(self) -> float | None:
        return None if self.end_s is None else self.end_s - self.start_s


@dataclass(frozen=True)
class Prediction:
    """The model's answer: rate, latency, the binding limit, every limit, and the phases.

    ``basis`` is ``"steady state"`` without a duration (values that hold indefinitely) and
    ``"mean over run"`` with one (time-weighted over the run, as fio reports).  ``sustained_*``
    is the lowest phase of the run (rates only fall as credits run out), the value a requirement
    must meet for the whole run.

    ``write_time_s`` is the modelled time one write takes (protocol-dependent, at the sustained
    link rate); ``write_time_budget_s`` is how long a write could take before the latency bound
    would fall to the predicted rate; ``break_even_rtt_s`` is the RTT at which that happens
    (synchronous protocols only).  They say how close latency is to binding.
    """

    scenario: Scenario
    bs: int
    basis: Literal["steady state", "mean over run"]
    iops: float
    latency_s: float
    bottleneck: str
    limits: tuple[LimitValue, ...]
    phases: tuple[Phase, ...]
    rtt_s: float | None
    write_time_s: float | None = None
    write_time_budget_s: float | None = None
    break_even_rtt_s: float | None = None
    notes: tuple[str, ...] = ()
    estimates: tuple[str, ...] = ()

    @property
    def bw(self) -> float:
        """Bytes per second over the basis."""
        return self.iops * self.bs

    @property
    def sustained_iops(self) -> float:
        """IOPS in the last (lowest) phase of the run."""
        return self.phases[-1].iops

    @property
    def sustained_bw(self) -> float:
        return self.sustained_iops * self.bs

    def limit(self, key: str) -> LimitValue:
        """The limit called ``key`` (KeyError if the scenario has no such limit)."""
        for value in self.limits:
            if value.key == key:
                return value
        raise KeyError(key)

    @property
    def binding(self) -> LimitValue:
        return self.limit(self.bottleneck)

    def headroom(self, key: str) -> float:
        """How far above the prediction limit ``key`` sits, as a fraction (0.25 = 25 % more)."""
        return self.limit(key).iops / self.iops - 1.0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary; the stable keys other tools read are documented in the CLI help."""
        mib = float(MIB)
        scenario = self.scenario
        workload = scenario.workload
        peer = scenario.peer_node
        return {
            "bw_mib_s": self.bw / mib,
            "iops": self.iops,
            "latency_ms": self.latency_s * 1000,
            "bottleneck": self.bottleneck,
            "bottleneck_label": self.binding.label,
            "basis": self.basis,
            "sustained_bw_mib_s": self.sustained_bw / mib,
            "sustained_iops": self.sustained_iops,
            "write_time_ms": _ms(self.write_time_s),
            "write_time_budget_ms": _ms(self.write_time_budget_s),
            "break_even_rtt_ms": _ms(self.break_even_rtt_s),
            "limits": {
                value.key: {
                    "bw_mib_s": value.bw / mib,
                    "iops": value.iops,
                    "label": value.label,
                    "resource": value.resource,
                    "headroom_pct": (value.iops / self.iops - 1.0) * 100,
                    "baseline_iops": value.baseline_iops,
                    "burst_iops": value.burst_iops,
                    "burst_ends_s": value.burst_ends_s,
                    "estimate": value.estimate,
                    "detail": value.detail,
                    "sources": list(value.sources),
                }
                for value in self.limits
            },
            "phases": [
                {
                    "start_s": phase.start_s,
                    "end_s": phase.end_s,
                    "bw_mib_s": phase.bw / mib,
                    "iops": phase.iops,
                    "latency_ms": phase.latency_s * 1000,
                    "bottleneck": phase.bottleneck,
                }
                for phase in self.phases
            ],
            "scenario": {
                "instance_type": scenario.primary.instance_type,
                "peer_instance_type": peer.instance_type if peer else None,
                "volume": _volume_text(scenario.primary.volume),
                "peer_volume": _volume_text(peer.volume) if peer else None,
                "replication": scenario.replicate,
                "placement": scenario.placement if scenario.rtt_s is None else "custom",
                "rtt_ms": self.rtt_s * 1000 if self.rtt_s is not None else None,
                "protocol": scenario.protocol if scenario.replicate else None,
                "workload": {
                    "rw": workload.rw,
                    "bs": workload.bs,
                    "numjobs": workload.numjobs,
                    "iodepth": workload.iodepth,
                    "rwmixread": workload.rwmixread if RW_MODES[workload.rw] is None else None,
                },
                "duration_s": scenario.duration_s,
                "calibrated": scenario.calibration is not None,
            },
            "notes": list(self.notes),
            "estimates": list(self.estimates),
        }


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000


def _volume_text(spec: VolumeSpec) -> str:
    parts = [spec.type]
    if spec.size_gib is not None:
        parts.append(f"{spec.size_gib:g}GiB")
    if spec.iops is not None:
        parts.append(f"{spec.iops:g}")
    if spec.mib_s is not None:
        parts.append(f"{spec.mib_s:g}")
    return ":".join(parts)


# --------------------------------------------------------------------------------------------
# Building the limits of a scenario
# --------------------------------------------------------------------------------------------


@dataclass
class _Build:
    """Accumulates limits, buckets, notes and estimates while a scenario is resolved."""

    catalog: Catalog
    limits: list[_Limit] = field(default_factory=list)
    buckets: list[_Bucket] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    estimates: list[str] = field(default_factory=list)
    latency_estimated: bool = False
    latency_sources: list[str] = field(default_factory=list)

    def add(self, limit: _Limit) -> None:
        if limit.units_per_io > 0:
            self.limits.append(limit)

    def add_bucket(self, bucket: _Bucket) -> None:
        if bucket.capacity > 0 and bucket.units_per_io > 0:
            self.buckets.append(bucket)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def estimate(self, text: str) -> None:
        if text not in self.estimates:
            self.estimates.append(text)


@dataclass(frozen=True)
class _Node:
    role: Literal["primary", "peer"]
    spec: NodeSpec
    instance: InstanceType
    volume: VolumePerformance
    writes: float
    reads: float
    ebs_backed: bool

    @property
    def name(self) -> str:
        return self.spec.instance_type


def _gbps(value: float) -> float:
    return value * 1e9 / 8


def _add_volume_limits(build: _Build, node: _Node, bs: int) -> None:
    perf = node.volume
    role = node.role
    sources = tuple(build.catalog.volume(perf.type).sources)
    units = math.ceil(bs / perf.io_unit)
    split = f"; {bs} B I/Os count as {units} x {perf.io_unit // KIB} KiB" if units > 1 else ""
    if perf.read_iops is not None:
        build.add(
            _Limit(
                key=f"{role}.volume.write_iops",
                label=f"{role} {perf.type} write IOPS",
                resource="volume",
                units_per_io=node.writes * units,
                baseline=perf.baseline_iops,
                detail=f"{perf.description}: {perf.baseline_iops:,.0f} write IOPS (4 KiB){split}",
                sources=sources,
            )
        )
        build.add(
            _Limit(
                key=f"{role}.volume.read_iops",
                label=f"{role} {perf.type} read IOPS",
                resource="volume",
                units_per_io=node.reads * units,
                baseline=perf.read_iops,
                detail=f"{perf.description}: {perf.read_iops:,.0f} read IOPS (4 KiB){split}",
                sources=sources,
            )
        )
    else:
        share = node.writes + node.reads
        bucket_key = None
        detail = f"{perf.description}: {perf.baseline_iops:,.0f} IOPS"
        if perf.iops_bucket is not None and perf.burst_iops is not None:
            bucket_key = f"{role}.volume.io_credits"
            build.add_bucket(_Bucket(bucket_key, perf.iops_bucket, perf.baseline_iops, share * units))
            detail += (
                f" baseline, {perf.burst_iops:,.0f} burst from a {perf.iops_bucket / 1e6:g}M I/O-credit "
                f"bucket ({perf.burst_seconds() or 0:,.0f} s at full burst)"
            )
        build.add(
            _Limit(
                key=f"{role}.volume.iops",
                label=f"{role} {perf.type} IOPS",
                resource="volume",
                units_per_io=share * units,
                baseline=perf.baseline_iops,
                burst=perf.burst_iops,
                bucket=bucket_key,
                detail=detail + split,
                sources=sources,
            )
        )
    if perf.baseline_bytes_s is not None:
        share = node.writes + node.reads
        bucket_key = None
        detail = f"{perf.description}: {perf.baseline_bytes_s / MIB:g} MiB/s"
        if perf.burst_bytes_s is not None and perf.throughput_bucket == "iops":
            bucket_key = f"{role}.volume.io_credits"
            detail += f", {perf.burst_bytes_s / MIB:g} MiB/s while I/O credits last"
        elif perf.burst_bytes_s is not None and perf.bytes_bucket is not None:
            bucket_key = f"{role}.volume.throughput_credits"
            build.add_bucket(_Bucket(bucket_key, perf.bytes_bucket, perf.baseline_bytes_s, share * bs))
            detail += (
                f" baseline, {perf.burst_bytes_s / MIB:g} MiB/s burst from "
                f"{perf.bytes_bucket / TIB:g} TiB of throughput credits"
            )
        build.add(
            _Limit(
                key=f"{role}.volume.throughput",
                label=f"{role} {perf.type} throughput",
                resource="volume",
                units_per_io=share * bs,
                baseline=perf.baseline_bytes_s,
                burst=perf.burst_bytes_s if bucket_key else None,
                bucket=bucket_key,
                detail=detail,
                sources=sources,
            )
        )
    for text in perf.notes:
        build.note(f"{perf.type}: {text}")
    build.latency_sources.extend(s for s in sources if s not in build.latency_sources)
    if perf.latency_estimate:
        build.latency_estimated = True
        build.estimate(
            f"{perf.type} latency {perf.write_latency_s * 1000:g} ms write / "
            f"{perf.read_latency_s * 1000:g} ms read ({perf.latency_note})"
        )


def _add_ebs_limits(build: _Build, node: _Node, bs: int) -> None:
    ebs = node.instance.ebs
    if not node.ebs_backed or not ebs.optimized:
        return
    role = node.role
    share = node.writes + node.reads
    units = math.ceil(bs / node.volume.io_unit)
    defaults = build.catalog.defaults
    minutes = ebs.burst_minutes if ebs.burst_minutes is not None else defaults.ebs_burst_minutes.value
    sources = tuple(node.instance.sources)
    base_bytes = ebs.sustained_mbps * 1e6 / 8
    max_bytes = (ebs.max_mbps or ebs.sustained_mbps) * 1e6 / 8
    byte_bucket = None
    detail = f"{node.name} dedicated EBS link: {ebs.sustained_mbps:,.0f} Mbps"
    if max_bytes > base_bytes:
        byte_bucket = f"{role}.ebs.byte_credits"
        build.add_bucket(_Bucket(byte_bucket, (max_bytes - base_bytes) * minutes * 60, base_bytes, share * bs))
        detail += f" baseline, {ebs.max_mbps:,.0f} Mbps for {minutes:g} min per 24 h"
    build.add(
        _Limit(
            key=f"{role}.ebs.throughput",
            label=f"{role} {node.name} EBS bandwidth",
            resource="ebs",
            units_per_io=share * bs,
            baseline=base_bytes,
            burst=max_bytes if byte_bucket else None,
            bucket=byte_bucket,
            detail=detail,
            estimate=ebs.estimate,
            sources=sources,
        )
    )
    iops_bucket = None
    detail = f"{node.name} EBS IOPS: {ebs.sustained_iops:,.0f}"
    max_iops = ebs.max_iops or ebs.sustained_iops
    if max_iops > ebs.sustained_iops:
        iops_bucket = f"{role}.ebs.iops_credits"
        build.add_bucket(
            _Bucket(iops_bucket, (max_iops - ebs.sustained_iops) * minutes * 60, ebs.sustained_iops, share * units)
        )
        detail += f" baseline, {max_iops:,.0f} for {minutes:g} min per 24 h"
    build.add(
        _Limit(
            key=f"{role}.ebs.iops",
            label=f"{role} {node.name} EBS IOPS",
            resource="ebs",
            units_per_io=share * units,
            baseline=ebs.sustained_iops,
            burst=max_iops if iops_bucket else None,
            bucket=iops_bucket,
            detail=detail + " (published at 16 KiB I/O)",
            estimate=ebs.estimate,
            sources=sources,
        )
    )


def _add_network_limit(
    build: _Build, node: _Node, direction: Literal["in", "out"], bytes_per_io: float, why: str
) -> None:
    network = node.instance.network
    defaults = build.catalog.defaults
    base = _gbps(network.baseline_gbps)
    burst = _gbps(network.burst_gbps) if network.burst_gbps is not None else None
    key = f"{node.role}.network.{direction}"
    detail = f"{node.name} network ({network.label or 'no label'}): {network.baseline_gbps:g} Gbps"
    bucket_key = None
    if burst is not None and burst > base:
        if network.burst_minutes is not None:
            minutes = network.burst_minutes
        else:
            minutes = defaults.network_burst_minutes.value
            if defaults.network_burst_minutes.estimate:
                build.estimate(
                    f"network burst lasts {minutes:g} min at full rate ({defaults.network_burst_minutes.note})"
                )
        bucket_key = f"{key}_credits"
        build.add_bucket(_Bucket(bucket_key, (burst - base) * minutes * 60, base, bytes_per_io))
        detail += f" baseline, {network.burst_gbps:g} Gbps burst (~{minutes:g} min at full burst)"
    detail += f" {direction}bound; carries {why}"
    if network.estimate:
        build.estimate(f"{node.name} network: {network.note}")
    build.add(
        _Limit(
            key=key,
            label=f"{node.role} {node.name} network {direction}",
            resource="network",
            units_per_io=bytes_per_io,
            baseline=base,
            burst=burst if bucket_key else None,
            bucket=bucket_key,
            detail=detail,
            estimate=network.estimate,
            sources=tuple(node.instance.sources),
        )
    )


def _add_network_limits(build: _Build, primary: _Node, peer: _Node | None, bs: int) -> None:
    writes = primary.writes
    # The primary: replication out; on an instance without dedicated EBS bandwidth its EBS
    # writes leave through the same interface and its EBS reads arrive through it.
    shared_primary = primary.ebs_backed and not primary.instance.ebs.optimized
    out_parts: list[str] = []
    out_bytes = 0.0
    if peer is not None:
        out_bytes += writes * bs
        out_parts.append("every write to the peer")
    if shared_primary:
        out_bytes += writes * bs
        out_parts.append("every write to EBS (not EBS-optimized: EBS shares the NIC)")
        build.note(
            f"{primary.name} is not EBS-optimized: EBS traffic shares its network interface "
            "(AWS), so the primary's outbound allowance carries each write twice when replicating."
        )
    if out_bytes > 0:
        _add_network_limit(build, primary, "out", out_bytes, " and ".join(out_parts))
    if shared_primary and primary.reads > 0:
        _add_network_limit(build, primary, "in", primary.reads * bs, "every read from EBS")
    if peer is None:
        return
    _add_network_limit(build, peer, "in", peer.writes * bs, "every replicated write")
    if peer.ebs_backed and not peer.instance.ebs.optimized:
        _add_network_limit(build, peer, "out", peer.writes * bs, "the peer's writes to EBS (not EBS-optimized)")
        build.note(f"{peer.name} is not EBS-optimized: the peer's EBS writes share its network interface.")
    flow = build.catalog.defaults.single_flow_gbps
    build.add(
        _Limit(
            key="replication.flow",
            label="single TCP flow cap",
            resource="flow",
            units_per_io=writes * bs,
            baseline=_gbps(flow.value),
            detail=(
                f"one 5-tuple flow is limited to {flow.value:g} Gbps outside a cluster placement "
                "group; DRBD replicates over one TCP connection per peer"
            ),
            estimate=flow.estimate,
            sources=tuple(flow.sources),
        )
    )


def _add_calibrated_limits(build: _Build, nodes: Sequence[_Node], calibration: Calibration, bs: int) -> None:
    for node in nodes:
        share = node.writes + node.reads
        if calibration.local_iops is not None:
            build.add(
                _Limit(
                    key=f"{node.role}.local.iops",
                    label=f"{node.role} measured device IOPS",
                    resource="volume",
                    units_per_io=share,
                    baseline=calibration.local_iops,
                    detail=f"{calibration.label}: {calibration.local_iops:,.0f} IOPS measured on the device",
                    sources=(calibration.label,),
                )
            )
        if calibration.local_bandwidth is not None:
            build.add(
                _Limit(
                    key=f"{node.role}.local.throughput",
                    label=f"{node.role} measured device bandwidth",
                    resource="volume",
                    units_per_io=share * bs,
                    baseline=calibration.local_bandwidth,
                    detail=(
                        f"{calibration.label}: {calibration.local_bandwidth / MIB:,.1f} MiB/s measured on the device"
                    ),
                    sources=(calibration.label,),
                )
            )


def _add_replication_capacities(build: _Build, calibration: Calibration, writes: float, bs: int) -> None:
    """What the pair's replication itself sustains, measured: large-write bandwidth and
    small-write IOPS (CPU and DRBD's threads on both nodes, not the disk or the wire)."""
    label = calibration.label
    bandwidth, iops = calibration.replicated_bandwidth, calibration.replicated_iops
    measured = (
        (
            "replication.bandwidth",
            "measured replicated bandwidth",
            writes * bs,
            bandwidth,
            f"replicated {(bandwidth or 0) / MIB:,.1f} MiB/s of large writes (DRBD's processing on both nodes, "
            "below the bare path rate)",
        ),
        (
            "replication.capacity",
            "measured replicated IOPS capacity",
            writes,
            iops,
            f"sustained {iops or 0:,.0f} replicated small writes/s with many in flight (CPU and DRBD's threads, "
            "not the disk or the wire)",
        ),
    )
    for key, what, units, rate, detail in measured:
        if rate is not None:
            build.add(
                _Limit(
                    key=key,
                    label=what,
                    resource="cpu",
                    units_per_io=units,
                    baseline=rate,
                    detail=f"{label}: the pair {detail}",
                    sources=(label,),
                )
            )


def _resolve_nodes(scenario: Scenario, catalog: Catalog) -> tuple[_Node, _Node | None]:
    workload = scenario.workload

    def node(role: Literal["primary", "peer"], spec: NodeSpec, writes: float, reads: float) -> _Node:
        instance = catalog.instance(spec.instance_type)
        volume = catalog.volume(spec.volume.type)
        perf = volume_performance(spec.volume.type, volume, spec.volume, instance)
        calibration = scenario.calibration
        if calibration is not None and calibration.local_write_latency_s is not None:
            read = calibration.local_read_latency_s or calibration.local_write_latency_s
            perf = _replace_latency(perf, calibration.local_write_latency_s, read)
        elif calibration is not None and calibration.local_read_latency_s is not None:
            perf = _replace_latency(perf, perf.write_latency_s, calibration.local_read_latency_s)
        return _Node(role, spec, instance, perf, writes, reads, volume.network_attached)

    primary = node("primary", scenario.primary, workload.write_fraction, workload.read_fraction)
    peer_spec = scenario.peer_node
    peer = node("peer", peer_spec, workload.write_fraction, 0.0) if peer_spec is not None else None
    return primary, peer


def _replace_latency(perf: VolumePerformance, write_s: float, read_s: float) -> VolumePerformance:
    from dataclasses import replace

    return replace(perf, write_latency_s=write_s, read_latency_s=read_s, latency_estimate=False)


def _rtt(scenario: Scenario, catalog: Catalog, build: _Build) -> float | None:
    if not scenario.replicate:
        return None
    if scenario.calibration is not None and scenario.calibration.rtt_s is not None:
        return scenario.calibration.rtt_s
    if scenario.rtt_s is not None:
        return scenario.rtt_s
    placement = catalog.placement(scenario.placement)
    build.latency_sources.extend(s for s in placement.sources if s not in build.latency_sources)
    if placement.estimate:
        build.latency_estimated = True
        build.estimate(f"{scenario.placement} RTT {placement.rtt_ms:g} ms ({placement.note})")
    return placement.rtt_ms / 1000


def _cpu_notes(build: _Build, nodes: Sequence[_Node]) -> None:
    for node in nodes:
        credits = node.instance.cpu_credits
        if credits is None:
            continue
        if credits.default_mode == "standard":
            effect = (
                "launches in standard mode: once its CPU credits are spent the CPU is held to that "
                "baseline, which can throttle fio and the replication threads"
            )
        else:
            effect = "launches in unlimited mode: CPU above the baseline is billed extra instead of throttled"
        build.note(
            f"{node.name}: burstable CPU earning {credits.earned_per_hour:g} credits/h "
            f"= {credits.baseline_per_vcpu_pct:g} % of each of {node.instance.vcpu} vCPU; {effect}. "
            "The model does not quantify CPU cost."
        )


# --------------------------------------------------------------------------------------------
# Time-stepping over credit buckets
# --------------------------------------------------------------------------------------------


_RawPhase = tuple[float, float | None, float, str, dict[str, float], float | None]


@dataclass(frozen=True)
class _LatencyBound:
    """The latency limit, whose value depends on how fast the replication path moves a write.

    The path runs at burst speed while its credit buckets hold credits and at baseline once they
    are spent.  A spent bucket refills whenever the workload uses less than the baseline, so a
    path bucket that is empty but would refill at the resulting rate counts as available; if
    reviving it pushes usage above the baseline again, the rate settles where usage equals the
    baseline (the same fluid view :meth:`_Limit.rate` takes).  Without this, the steady state
    would depend on which bucket happened to run dry first.
    """

    latency: _Latency
    path_limits: tuple[_Limit, ...]
    buckets: Mapping[str, _Bucket]

    def rate_at(self, path_rate: float | None) -> float:
        return self.latency.outstanding / self.latency.per_io(path_rate)

    def sustained_path(self) -> float | None:
        return min((limit.baseline for limit in self.path_limits), default=None)

    def evaluate(self, balances: Mapping[str, float], others: float) -> tuple[float, float | None]:
        """(I/Os per second the latency allows, path byte rate used) given the other limits' min."""
        caps: dict[str, float] = {}
        spent: list[tuple[_Limit, _Bucket]] = []
        for limit in self.path_limits:
            bucket = self.buckets.get(limit.bucket) if limit.bucket is not None else None
            if limit.burst is None or bucket is None:
                caps[limit.key] = limit.baseline
            elif balances.get(bucket.key, 0.0) > 0:
                caps[limit.key] = limit.burst
            else:
                caps[limit.key] = limit.baseline
                spent.append((limit, bucket))
        path = min(caps.values(), default=None)
        first = self.rate_at(path)
        rate = min(others, first)
        revived = [(lim, b) for lim, b in spent if rate * b.units_per_io < b.earn * (1 - _REL_TIE)]
        if not revived:
            return first, path
        for limit, _ in revived:
            caps[limit.key] = limit.burst or limit.baseline
        faster_path = min(caps.values(), default=None)
        second = self.rate_at(faster_path)
        rate = min(others, second)
        over = [b for _, b in revived if rate * b.units_per_io > b.earn * (1 + _REL_TIE)]
        if not over:
            return second, faster_path
        settle = min(b.earn / b.units_per_io for b in over)
        return max(first, min(second, settle)), path


def _binding(rates: Mapping[str, float], order: Sequence[str]) -> tuple[str, float]:
    """The smallest rate and its key; near-ties go to the earliest key in ``order``."""
    lowest = min(rates.values())
    for key in order:
        if rates[key] <= lowest * (1 + _REL_TIE):
            return key, lowest
    raise AssertionError("no binding limit")  # pragma: no cover


def _simulate(
    limits: Sequence[_Limit],
    buckets: Sequence[_Bucket],
    latency: _LatencyBound,
    duration_s: float | None,
) -> list[_RawPhase]:
    """Phases as (start, end, iops, binding key, iops allowed per limit, path byte rate)."""
    balances = {bucket.key: bucket.capacity for bucket in buckets}
    by_key = {bucket.key: bucket for bucket in buckets}
    order = [limit.key for limit in limits] + [LATENCY_KEY]
    phases: list[_RawPhase] = []
    now = 0.0
    for _ in range(len(buckets) + 2):
        rates = {limit.key: limit.rate(balances, by_key) for limit in limits}
        rates[LATENCY_KEY], path = latency.evaluate(balances, min(rates.values(), default=math.inf))
        key, rate = _binding(rates, order)
        drains = {
            bucket.key: rate * bucket.units_per_io - bucket.earn for bucket in buckets if balances[bucket.key] > 0
        }
        until_empty = {k: balances[k] / d for k, d in drains.items() if d > 0}
        step = min(until_empty.values(), default=math.inf)
        end = now + step
        if duration_s is not None:
            end = min(end, duration_s)
        if math.isinf(end):
            phases.append((now, None, rate, key, rates, path))
            return phases
        phases.append((now, end, rate, key, rates, path))
        if duration_s is not None and end >= duration_s:
            return phases
        for bucket_key, drain in drains.items():
            if drain > 0:
                balances[bucket_key] = max(0.0, balances[bucket_key] - drain * (end - now))
        for bucket_key, seconds in until_empty.items():
            if seconds <= step * (1 + _REL_TIE):
                balances[bucket_key] = 0.0
        now = end
    raise AssertionError("bucket simulation did not settle")  # pragma: no cover


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


def predict(scenario: Scenario, catalog: Catalog) -> Prediction:
    """Predict ``scenario``'s rate, latency and binding limit from ``catalog`` (and calibration).

    Raises ConfigError when the scenario names something the catalog lacks or a volume choice the
    provider would refuse.
    """
    workload = scenario.workload
    bs = workload.bs
    build, bound, peer, rtt = _collect(scenario, catalog)
    raw = _simulate(build.limits, build.buckets, bound, scenario.duration_s)
    phases = tuple(
        Phase(
            start_s=start,
            end_s=end,
            iops=rate,
            bw=rate * bs,
            latency_s=workload.outstanding / rate,
            bottleneck=key,
            limits=rates,
        )
        for start, end, rate, key, rates, _ in raw
    )
    final_path = raw[-1][5]
    basis, iops, bottleneck, values = _over_basis(scenario, build, phases)
    latency = bound.latency
    write_time = latency.write_s(final_path) if workload.write_fraction > 0 else None
    budget = None
    break_even = None
    if workload.write_fraction > 0:
        per_io_budget = workload.outstanding / iops
        budget = (per_io_budget - workload.read_fraction * latency.local_read_s) / workload.write_fraction
        if peer is not None and scenario.protocol != "A":
            serialization = bs / final_path if final_path else 0.0
            remote = peer.volume.write_latency_s if scenario.protocol == "C" else 0.0
            break_even = budget - serialization - remote - latency.overhead_s
    return Prediction(
        scenario=scenario,
        bs=bs,
        basis=basis,
        iops=iops,
        latency_s=workload.outstanding / iops,
        bottleneck=bottleneck,
        limits=_limit_values(build=build, values=values, phases=phases, bound=bound, final_path=final_path),
        phases=phases,
        rtt_s=rtt,
        write_time_s=write_time,
        write_time_budget_s=budget,
        break_even_rtt_s=break_even,
        notes=tuple(build.notes),
        estimates=tuple(build.estimates),
    )


def _collect(scenario: Scenario, catalog: Catalog) -> tuple[_Build, _LatencyBound, _Node | None, float | None]:
    """Every limit and credit bucket of ``scenario``, its latency bound, the peer and the RTT."""
    workload = scenario.workload
    bs = workload.bs
    build = _Build(catalog)
    primary, peer = _resolve_nodes(scenario, catalog)
    nodes = [primary] if peer is None else [primary, peer]
    calibration = scenario.calibration

    if calibration is not None and (calibration.local_bandwidth is not None or calibration.local_iops is not None):
        _add_calibrated_limits(build, nodes, calibration, bs)
    else:
        for node in nodes:
            _add_volume_limits(build, node, bs)
            _add_ebs_limits(build, node, bs)

    if calibration is not None and calibration.path_rate_bits is not None:
        if peer is not None:
            build.add(
                _Limit(
                    key="replication.path",
                    label="measured replication path",
                    resource="path",
                    units_per_io=workload.write_fraction * bs,
                    baseline=calibration.path_rate_bits / 8,
                    detail=f"{calibration.label}: {calibration.path_rate_bits / 1e6:,.1f} Mbit/s measured",
                    sources=(calibration.label,),
                )
            )
    else:
        _add_network_limits(build, primary, peer, bs)
    if calibration is not None and peer is not None:
        _add_replication_capacities(build, calibration, workload.write_fraction, bs)

    rtt = _rtt(scenario, catalog, build)
    latency = _Latency(
        outstanding=workload.outstanding,
        read_fraction=workload.read_fraction,
        write_fraction=workload.write_fraction,
        local_write_s=primary.volume.write_latency_s,
        local_read_s=primary.volume.read_latency_s,
        peer_write_s=peer.volume.write_latency_s if peer is not None else None,
        rtt_s=rtt or 0.0,
        protocol=scenario.protocol,
        bs=bs,
        overhead_s=(calibration.replication_overhead_s or 0.0) if calibration is not None else 0.0,
    )
    bound = _LatencyBound(
        latency=latency,
        path_limits=tuple(limit for limit in build.limits if limit.key in _PATH_KEYS),
        buckets={bucket.key: bucket for bucket in build.buckets},
    )
    _cpu_notes(build, nodes)
    if peer is not None and scenario.protocol == "A":
        build.note(
            "Protocol A acknowledges after the local write, but DRBD's buffers fill at the "
            "network or peer-disk rate, so those limits still cap sustained throughput (LINBIT)."
        )
    if any(limit.resource == "flow" for limit in build.limits):
        build.note(
            "A cluster placement group raises the single-flow cap to 10 Gbps (same AZ only); "
            "DRBD 9's lb-tcp transport spreads a peer over several flows."
        )
    return build, bound, peer, rtt


def _over_basis(
    scenario: Scenario, build: _Build, phases: Sequence[Phase]
) -> tuple[Literal["steady state", "mean over run"], float, str, dict[str, float]]:
    """(basis, IOPS, binding limit, value per limit) in the steady state or over the run.

    Over a run the binding limit is the one that binds for the longest time (the later one on a
    tie), and each limit's value is its time-weighted mean, so the mean rate never exceeds it.
    """
    if scenario.duration_s is None:
        final = phases[-1]
        return "steady state", final.iops, final.bottleneck, _steady_limit_values(build.limits, build.buckets, final)
    total = scenario.duration_s
    weights = [(phase, (phase.length_s or 0.0) / total) for phase in phases]
    iops = sum(phase.iops * weight for phase, weight in weights)
    time_bound: dict[str, float] = {}
    for phase, weight in weights:
        time_bound[phase.bottleneck] = time_bound.get(phase.bottleneck, 0.0) + weight
    longest = max(time_bound.values())
    bottleneck = next(phase.bottleneck for phase, _ in reversed(weights) if time_bound[phase.bottleneck] == longest)
    values = {key: sum(phase.limits[key] * weight for phase, weight in weights) for key in phases[0].limits}
    return "mean over run", iops, bottleneck, values


def _steady_limit_values(limits: Sequence[_Limit], buckets: Sequence[_Bucket], final: Phase) -> dict[str, float]:
    """What each limit allows indefinitely: its rate once every credit bucket is empty.

    A bucket the workload never drains still leaves the final phase at burst level, but that
    level is not sustainable for more load; the value reported is what a limit can give forever.
    """
    by_key = {bucket.key: bucket for bucket in buckets}
    empty = {bucket.key: 0.0 for bucket in buckets}
    values = {limit.key: limit.rate(empty, by_key) for limit in limits}
    values[LATENCY_KEY] = final.limits[LATENCY_KEY]
    return values


def _urls(catalog: Catalog, sources: Sequence[str]) -> tuple[str, ...]:
    """Reference ids resolved to URLs; URLs and free text (a calibration label) kept as they are."""
    return tuple(catalog.references[s].url if s in catalog.references else s for s in sources)


def _limit_values(
    *,
    build: _Build,
    values: Mapping[str, float],
    phases: Sequence[Phase],
    bound: _LatencyBound,
    final_path: float | None,
) -> tuple[LimitValue, ...]:
    """Public values of every limit, the latency bound last."""
    bs = bound.latency.bs
    outstanding = bound.latency.outstanding
    result: list[LimitValue] = []
    exhausted: dict[str, float] = {}
    for limit in build.limits:
        if limit.bucket is None or limit.burst is None:
            continue
        burst_rate = limit.burst / limit.units_per_io
        for phase in phases:
            if phase.limits[limit.key] < burst_rate * (1 - _REL_TIE):
                exhausted[limit.key] = phase.start_s
                break
    for limit in build.limits:
        iops = values[limit.key]
        burst = limit.burst / limit.units_per_io if limit.burst is not None else None
        result.append(
            LimitValue(
                key=limit.key,
                label=limit.label,
                resource=limit.resource,
                iops=iops,
                bw=iops * bs,
                baseline_iops=limit.baseline / limit.units_per_io,
                burst_iops=burst,
                burst_ends_s=exhausted.get(limit.key),
                detail=limit.detail,
                estimate=limit.estimate,
                sources=_urls(build.catalog, limit.sources),
            )
        )
    latency_iops = values[LATENCY_KEY]
    result.append(
        LimitValue(
            key=LATENCY_KEY,
            label=f"latency bound ({outstanding} I/Os in flight)",
            resource="latency",
            iops=latency_iops,
            bw=latency_iops * bs,
            baseline_iops=bound.rate_at(bound.sustained_path()),
            burst_iops=None,
            burst_ends_s=None,
            detail=bound.latency.describe(final_path),
            estimate=build.latency_estimated,
            sources=_urls(build.catalog, build.latency_sources),
        )
    )
    return tuple(result)


# --------------------------------------------------------------------------------------------
# Requirements and catalog search
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Requirement:
    """A throughput the customer needs: bytes per second or I/O operations per second."""

    kind: Literal["bw", "iops"]
    value: float
    text: str

    def met_by(self, prediction: Prediction) -> bool:
        """True when the rate holds for the whole run (the lowest phase meets it)."""
        return self.margin(prediction) >= 0

    def margin(self, prediction: Prediction) -> float:
        """Sustained rate over the requirement minus one (0.1 = 10 % to spare)."""
        have = prediction.sustained_bw if self.kind == "bw" else prediction.sustained_iops
        return have / self.value - 1.0


@dataclass(frozen=True)
class SearchHit:
    """One instance type evaluated by :func:`search`."""

    instance_type: str
    vcpu: int
    memory_gib: float
    prediction: Prediction


def search(
    catalog: Catalog, scenario_for: Callable[[str], Scenario], requirement: Requirement
) -> tuple[list[SearchHit], list[SearchHit]]:
    """Instance types whose prediction meets ``requirement`` and those that do not.

    ``scenario_for(name)`` builds the scenario for candidate ``name`` (so the caller decides
    whether the peer follows the candidate).  Both lists are ordered smallest first: vCPU, then
    memory, then name; the catalog has no prices, and size is what drives price within a region.
    Candidates the scenario does not fit (e.g. an instance-store volume on a type without one)
    are left out of both lists.
    """
    hits: list[SearchHit] = []
    misses: list[SearchHit] = []
    for name, instance in catalog.instance_types.items():
        try:
            prediction = predict(scenario_for(name), catalog)
        except ConfigError:
            continue
        hit = SearchHit(name, instance.vcpu, instance.memory_gib, prediction)
        (hits if requirement.met_by(prediction) else misses).append(hit)
    return sorted(hits, key=_size_order), sorted(misses, key=_size_order)


def _size_order(hit: SearchHit) -> tuple[int, float, str]:
    return (hit.vcpu, hit.memory_gib, hit.instance_type)
