"""The model's answer: the rate, the binding limit, every limit's value and the phases of a run.

A :class:`Prediction` is what :func:`harness.sizing.model.predict.predict` returns and what
:mod:`harness.sizing.answer.explain` and ``harness sizing --json`` (:meth:`Prediction.as_dict`) show.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from harness.sizing.model.cost import PairCost
from harness.sizing.scenario.notation import format_volume
from harness.sizing.scenario.question import RW_MODES, Scenario
from harness.units import MIB

__all__ = ["LimitValue", "Phase", "Prediction"]


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
    lag_bytes: float | None = None
    lag_s: float | None = None
    cost: PairCost | None = None

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
                "volume": format_volume(scenario.primary.volume),
                "peer_volume": format_volume(peer.volume) if peer else None,
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
                "peers": scenario.peers if scenario.replicate else 0,
                "calibrated": scenario.calibration is not None,
            },
            "protocol_a_lag": (
                {"bytes": self.lag_bytes, "seconds": self.lag_s} if self.lag_bytes is not None else None
            ),
            "cost_usd": self.cost.as_dict() if self.cost is not None else None,
            "notes": list(self.notes),
            "estimates": list(self.estimates),
        }


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000
