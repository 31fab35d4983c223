"""The thresholds a cell's validity certificate judges its figures by, and why each default is where it is.

A threshold is crossed when the figure is beyond it (``max_…``: above; ``min_…``: below); ``off``
(or ``null``) keeps a figure in the certificate without judging it.  The defaults, each
placed between what a quiet node reads and what a disturbed one does, were measured on a
2-vCPU Debian 12 guest (Linux 6.18, PSI on) shared with other work, quiet and under a short
``stress-ng`` hog started for the purpose:

* ``max_cpu_pressure_pct`` **10**: over 8-second windows PSI ``cpu some`` read 1.4–4.1 % with
  no hog and the host otherwise idle, 7.2–11.2 % with no hog of ours but both CPUs taken by
  other users' work, and 12–100 % under the hogs (one niced worker at 50 % load, the kind of
  background job that turned lab cells into false regressions: 14–41 %; two workers at 100 %,
  niced: 71–100 %, not niced: 12–98 %, as high as what else wanted a CPU meanwhile).  10 % is
  above every idle window and below every hog window; a window at 11 % because someone else's
  work took the CPUs is disturbed, which is what it was.
* ``max_host_cpu_pressure_pct`` **off**: the same figure read on the machine that runs the
  embedded lab's guests, recorded, not judged: the guests themselves are five processes
  wanting a CPU each on a host of two, and with nothing else running they kept it at 9–96 %
  (median 62 %) over the 2,096 windows of a whole ``./run scenarios`` whose 198 cells passed.
* ``max_host_other_cpu_pct`` **5**: what the lab host's other programs took (every user-space
  process neither a guest's nor the harness's own), % of all its CPU time over the window.
  The lab's bandwidth-cap and latency-sweep cells (16 windows each, two xdist workers) read
  0.7–1.6 % with nothing else running, 13–47 % (median 16 %) under one niced ``stress-ng``
  worker at 33 % (the background job that turned lab cells into false regressions) and
  27–71 % under two niced workers at 50 %.  5 % is three times the quiet maximum and under
  half the lightest hog's minimum.
* ``max_memory_pressure_pct`` **5**: PSI ``memory some`` read 0 quiet and under every hog
  (nothing reclaimed, nothing swapped).  A task stalled on memory for 5 % of the window is
  reclaiming or faulting a page back in on every few writes: far from the 0 of a node with
  room, and well below the thrashing a swapping node shows (tens of percent).
* ``max_io_pressure_pct`` **off**: fio's own writes wait for the disk by design, so PSI ``io``
  on the nodes measured is the workload, not a disturbance (it is still recorded).  An
  inventory that knows its nodes' figure may set one.
* ``max_steal_pct`` **5**: steal read 0.0–0.6 % quiet and under every hog (a hog inside the
  guest is not stolen time; steal is the hypervisor running someone else on this vCPU).  At
  5 % one scheduling tick in twenty went to another guest: a synchronous write, which needs
  the CPU at submission and at completion, then waits a tick more one time in ten.
* ``max_swapin_pages_s`` **10**: 0 on every window measured.  An idle daemon's stray page
  coming back now and then is harmless; ten 4 KiB pages a second is a working set that
  does not fit, each page a major fault on the path of a write.
* ``max_runnable_per_cpu`` **1.75** (only where the kernel has no PSI): ``procs_running``
  less the probe itself, per CPU, the mean of both ends of the window, read 0.5–1.5 with no hog
  and 1.25–2.5 under the hogs: two instants say less than PSI's whole window.  1.75 is above
  every window without a hog, so it flags a hog that saturates the CPUs (2.0–2.5) and misses
  a partial one; a false "disturbed" would hide a real regression, a missed one only leaves
  today's fail.  The load average is recorded, never judged: it counts tasks waiting for the
  disk (fio's own) and lags a short window by a minute.
* ``max_rtt_ratio`` **1.5** and ``min_rtt_excess_ms`` **0.1**: the replication path's ping
  before or after fio is disturbed when it is both more than 1.5 × its calibration and more
  than 0.1 ms above it.  A busy lab host turned a 0.06 ms same-AZ round trip into 0.38–0.50 ms
  (6–8 ×) while a cross-AZ path of a few milliseconds moves by a few percent with ordinary
  jitter; the ratio keeps that jitter clean, the excess keeps a 0.03 → 0.05 ms wobble clean.
* ``min_burst_balance_pct`` **20**: a gp2-style burst bucket drains in about half an hour at
  full burst; at 20 % a few minutes remain, less than a long cell, so the volume may drop to
  its baseline rate mid-window.

Pure: :class:`ValidityThresholds` is a frozen pydantic model, so the inventory can embed it (its
loader names file, line and key on a bad value); :func:`parse_validity_thresholds` is the same
check for a mapping on its own, a :class:`~harness.errors.ConfigError` naming the key and the
limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Final

from pydantic import BeforeValidator, Field, ValidationError

from harness.errors import ConfigError
from harness.fields import FrozenModel

__all__ = ["DEFAULT_THRESHOLDS", "ValidityThresholds", "parse_validity_thresholds"]


def _off(value: object) -> object:
    """``off`` (any case) means not judged, as ``null`` does."""
    return None if isinstance(value, str) and value.strip().lower() == "off" else value


Percent = Annotated[Annotated[float, Field(ge=0, le=100)] | None, BeforeValidator(_off)]
NonNegative = Annotated[Annotated[float, Field(ge=0)] | None, BeforeValidator(_off)]
Positive = Annotated[Annotated[float, Field(gt=0)] | None, BeforeValidator(_off)]
Ratio = Annotated[Annotated[float, Field(ge=1)] | None, BeforeValidator(_off)]


class ValidityThresholds(FrozenModel):
    """Where each figure of the certificate starts to say the measurement was disturbed."""

    max_cpu_pressure_pct: Percent = Field(10.0, description="PSI cpu some on a node, % of the window")
    max_host_cpu_pressure_pct: Percent = Field(
        None, description="PSI cpu some on the lab's host, % of the window (off: the guests' own demand)"
    )
    max_host_other_cpu_pct: Percent = Field(
        5.0, description="CPU the lab host's other programs took, % of all its CPU time"
    )
    max_memory_pressure_pct: Percent = Field(5.0, description="PSI memory some on a node, % of the window")
    max_io_pressure_pct: Percent = Field(None, description="PSI io some on a node, % (off: fio's own I/O waits)")
    max_steal_pct: Percent = Field(5.0, description="CPU steal on a node, % of all CPU time")
    max_swapin_pages_s: NonNegative = Field(10.0, description="pages swapped in per second on a node")
    max_runnable_per_cpu: Positive = Field(
        1.75, description="runnable tasks per CPU, judged on kernels without PSI only"
    )
    max_rtt_ratio: Ratio = Field(1.5, description="replication-path RTT before/after fio over its calibration")
    min_rtt_excess_ms: float = Field(0.1, ge=0, description="RTT above its calibration that is never disturbed, ms")
    min_burst_balance_pct: Percent = Field(20.0, description="a volume's burst balance, %")


#: The thresholds used when the inventory sets none.
DEFAULT_THRESHOLDS: Final = ValidityThresholds()


def _error_line(source: str, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        if err["type"] == "extra_forbidden":
            allowed = ", ".join(ValidityThresholds.model_fields)
            parts.append(f"{key}: unknown key (allowed: {allowed})")
        else:
            parts.append(f"{key}: {err['msg']}, got {err.get('input')!r}")
    return f"{source}: " + "; ".join(parts)


def parse_validity_thresholds(values: Mapping[str, object] | None, source: str = "validity") -> ValidityThresholds:
    """The defaults with ``values`` over them; :class:`ConfigError` naming ``source``, the key and
    the bound it broke (``validity: max_steal_pct: Input should be less than or equal to 100,
    got 250``)."""
    if not values:
        return DEFAULT_THRESHOLDS
    if not isinstance(values, Mapping):
        raise ConfigError(f"{source}: must be a mapping of threshold names to numbers, got {type(values).__name__}")
    try:
        return ValidityThresholds.model_validate(dict(values))
    except ValidationError as exc:
        raise ConfigError(_error_line(source, exc)) from None
