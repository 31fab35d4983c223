"""A cell's validity certificate: was anything else in the way while it measured?

:func:`certify` judges what was read around the measurement window against
:class:`~harness.rules.validitythresholds.ValidityThresholds`:

* per node (both ends of the pair), the window's CPU, memory and I/O pressure (PSI), CPU
  steal, swap-ins, and the run queue (judged where the kernel has no PSI) and load (recorded
  only) — anything with the attributes of :class:`NodeFigures`, such as the node probe's
  ``NodeWindow``;
* the replication path's RTT before and after fio against its calibration;
* each volume's burst balance, where the cloud exposes one;
* on the embedded lab, the host's own pressure, each guest's share of its CPU (recorded only:
  a guest using its CPU is the measurement, not a disturbance) and the share other programs
  took (judged: it is the disturbance the guests' own kernels cannot see).

The result is a :class:`Certificate`: every figure with its threshold, its source and
whether it crossed the threshold; ``clean`` or ``disturbed`` with a short reason ("cpu pressure
34 % on a1 > 20 %"), and the same flattened into key/value pairs for samples and JUnit
properties (:meth:`Certificate.properties`).  Pure: figures in, a certificate out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from harness.rules.validitythresholds import DEFAULT_THRESHOLDS, ValidityThresholds

__all__ = ["Certificate", "NodeFigures", "RttCheck", "ValidityField", "certify"]

Status = Literal["clean", "disturbed"]


class NodeFigures(Protocol):
    """What a node went through over the window; shares are fractions 0–1, ``None`` unknown."""

    @property
    def node(self) -> str: ...
    @property
    def seconds(self) -> float: ...
    @property
    def steal(self) -> float: ...
    @property
    def runnable_per_cpu(self) -> float: ...
    @property
    def load_per_cpu(self) -> float: ...
    @property
    def cpu_some(self) -> float | None: ...
    @property
    def io_some(self) -> float | None: ...
    @property
    def memory_some(self) -> float | None: ...
    @property
    def swapin_per_s(self) -> float | None: ...
    @property
    def has_psi(self) -> bool: ...


@dataclass(frozen=True)
class RttCheck:
    """The replication path's median ping (ms) before and after fio, and what the cell expects
    of it: the calibration's figure for this path plus any delay the cell's impairment adds."""

    path: str
    calibration_ms: float
    before_ms: float | None = None
    after_ms: float | None = None


def _text(value: float) -> str:
    """Two significant figures, no exponent: 34, 5.4, 0.38."""
    return f"{value:.0f}" if abs(value) >= 10 else f"{value:.2g}"


@dataclass(frozen=True)
class ValidityField:
    """One figure of the certificate."""

    #: Machine name with its unit: ``cpu_pressure_pct``, ``rtt_after_ms``.
    name: str
    #: Where it was read: a node, ``host``, or the replication path.
    where: str
    figure: float
    #: What read it: ``/proc/pressure/cpu some``, ``ping after fio``.
    source: str
    #: Words for the reason: ``cpu pressure``.
    label: str
    unit: str = ""
    #: ``None``: recorded, not judged.
    threshold: float | None = None
    limit: Literal["max", "min"] = "max"

    @property
    def disturbed(self) -> bool:
        if self.threshold is None:
            return False
        return self.figure > self.threshold if self.limit == "max" else self.figure < self.threshold

    @property
    def reason(self) -> str:
        """``cpu pressure 34 % on a1 > 20 %``."""
        unit = f" {self.unit}" if self.unit else ""
        op = ">" if self.limit == "max" else "<"
        # the figure to two digits, the threshold as it was set
        threshold = "" if self.threshold is None else f" {op} {self.threshold:g}{unit}"
        return f"{self.label} {_text(self.figure)}{unit} on {self.where}{threshold}"


def _number(value: float) -> str:
    return f"{value:.6g}"


@dataclass(frozen=True)
class Certificate:
    fields: tuple[ValidityField, ...]

    @property
    def disturbances(self) -> tuple[ValidityField, ...]:
        return tuple(f for f in self.fields if f.disturbed)

    @property
    def status(self) -> Status:
        return "disturbed" if self.disturbances else "clean"

    @property
    def disturbed(self) -> bool:
        return bool(self.disturbances)

    @property
    def reason(self) -> str:
        """``clean``, or every disturbance: ``cpu pressure 34 % on a1 > 20 %; steal 9 % on a2 > 5 %``."""
        return "; ".join(f.reason for f in self.disturbances) or "clean"

    def properties(self, prefix: str = "validity") -> dict[str, str]:
        """Flat key/value pairs for a sample or JUnit properties::

        validity = disturbed
        validity.reason = cpu pressure 34 % on a1 > 20 %
        validity.a1.cpu_pressure_pct = 34.1
        validity.a1.cpu_pressure_pct.max = 20
        validity.a1.cpu_pressure_pct.source = /proc/pressure/cpu some
        validity.a1.cpu_pressure_pct.disturbed = yes
        """
        out = {prefix: self.status, f"{prefix}.reason": self.reason}
        for f in self.fields:
            key = f"{prefix}.{f.where}.{f.name}"
            out[key] = _number(f.figure)
            if f.threshold is not None:
                out[f"{key}.{f.limit}"] = _number(f.threshold)
            out[f"{key}.source"] = f.source
            out[f"{key}.disturbed"] = "yes" if f.disturbed else "no"
        return out


def _pct(share: float) -> float:
    return 100.0 * share


def _psi_fields(w: NodeFigures, where: str, t: ValidityThresholds, cpu_max: float | None) -> list[ValidityField]:
    out = []
    psi = (
        ("cpu", w.cpu_some, cpu_max),
        ("memory", w.memory_some, t.max_memory_pressure_pct),
        ("io", w.io_some, t.max_io_pressure_pct),
    )
    for resource, share, threshold in psi:
        if share is not None:
            source = f"/proc/pressure/{resource} some"
            out.append(
                ValidityField(
                    f"{resource}_pressure_pct", where, _pct(share), source, f"{resource} pressure", "%", threshold
                )
            )
    return out


def _node_fields(w: NodeFigures, where: str, t: ValidityThresholds, cpu_max: float | None) -> list[ValidityField]:
    out = _psi_fields(w, where, t, cpu_max)
    out.append(ValidityField("steal_pct", where, _pct(w.steal), "/proc/stat steal", "cpu steal", "%", t.max_steal_pct))
    if w.swapin_per_s is not None:
        out.append(
            ValidityField(
                "swapin_pages_s",
                where,
                w.swapin_per_s,
                "/proc/vmstat pswpin",
                "swap-in",
                "pages/s",
                t.max_swapin_pages_s,
            )
        )
    # With PSI the run queue only repeats what cpu pressure measures better; without it, it is
    # the one CPU figure left.
    runnable_max = None if w.has_psi else t.max_runnable_per_cpu
    out += [
        ValidityField(
            "runnable_per_cpu",
            where,
            w.runnable_per_cpu,
            "/proc/stat procs_running",
            "run queue per cpu",
            threshold=runnable_max,
        ),
        ValidityField("load_per_cpu", where, w.load_per_cpu, "/proc/loadavg", "load per cpu"),
        ValidityField("window_s", where, w.seconds, "/proc/uptime", "window", "s"),
    ]
    return out


def _rtt_fields(rtt: RttCheck, t: ValidityThresholds) -> list[ValidityField]:
    threshold = None
    if t.max_rtt_ratio is not None:
        threshold = max(rtt.calibration_ms * t.max_rtt_ratio, rtt.calibration_ms + t.min_rtt_excess_ms)
    out = [ValidityField("rtt_calibration_ms", rtt.path, rtt.calibration_ms, "calibration", "calibrated RTT", "ms")]
    for when, value in (("before", rtt.before_ms), ("after", rtt.after_ms)):
        if value is not None:
            source = f"ping {when} fio"
            out.append(ValidityField(f"rtt_{when}_ms", rtt.path, value, source, f"RTT {when} fio", "ms", threshold))
    return out


def certify(
    windows: Sequence[NodeFigures],
    thresholds: ValidityThresholds = DEFAULT_THRESHOLDS,
    *,
    rtt: RttCheck | None = None,
    burst_balance_pct: Mapping[str, float] | None = None,
    host: NodeFigures | None = None,
    guest_cpu_shares: Mapping[str, float] | None = None,
    other_cpu_share: float | None = None,
) -> Certificate:
    """The certificate of one cell's window.

    ``windows``: each node's window (both ends of the pair); ``rtt``: the replication path;
    ``burst_balance_pct``: node → its volume's burst balance (0–100) at the end of the window;
    ``host``: the embedded lab's host window; ``guest_cpu_shares``: guest → its share (0–1) of
    the host's CPU time over the window; ``other_cpu_share``: the share (0–1) every other
    program on the host took meanwhile.
    """
    t = thresholds
    fields: list[ValidityField] = []
    for w in windows:
        fields += _node_fields(w, w.node, t, t.max_cpu_pressure_pct)
    if rtt is not None:
        fields += _rtt_fields(rtt, t)
    for node, balance in (burst_balance_pct or {}).items():
        fields.append(
            ValidityField(
                "burst_balance_pct",
                node,
                balance,
                "burst balance",
                "burst balance",
                "%",
                t.min_burst_balance_pct,
                "min",
            )
        )
    if host is not None:
        fields += _node_fields(host, "host", t, t.max_host_cpu_pressure_pct)
    for guest, share in (guest_cpu_shares or {}).items():
        fields.append(
            ValidityField(f"guest_{guest}_cpu_pct", "host", _pct(share), "host /proc/PID/stat", f"{guest} cpu")
        )
    if other_cpu_share is not None:
        fields.append(
            ValidityField(
                "other_cpu_pct",
                "host",
                _pct(other_cpu_share),
                "host /proc/PID/stat, neither guest nor harness",
                "other programs' cpu",
                "%",
                t.max_host_other_cpu_pct,
            )
        )
    return Certificate(tuple(fields))
