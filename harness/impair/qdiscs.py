"""``tc -j qdisc show dev X``, read into typed :class:`Qdisc` objects (nothing here runs a command).

The JSON shapes follow iproute2 6.1.0 (Debian 12, the lab guests' userland):

* qdisc objects: ``kind``, ``handle`` (``"4842:"``), ``root: true`` or ``parent``
  (``"4842:2"``), ``options`` (tc/tc_qdisc.c); recorded samples in tests/data/tc/.
* netem (tc/q_netem.c ``netem_print_opt``, JSON form since the 2020 JSON rework; read in
  niclashedam/iproute2@65244c75bac5400ae48c26f93cafaf770b83d9b2, whose print path matches the
  format strings in Debian's iproute2 6.1.0 ``/usr/sbin/tc``): ``limit`` (packets);
  ``delay: {delay, jitter, correlation}`` only when the delay is non-zero, times in
  **seconds** as ``%g`` floats computed as ``tc_core_tick2time(ticks) / 1e6`` (integer
  microseconds, truncated); ``loss-random: {loss, correlation}`` as a **fraction** (0.01 is
  1 %), only when set; ``rate: {rate (bytes/s), ...}``, ``duplicate``, ``reorder``,
  ``corrupt``, ``loss-state``, ``loss-gemodel``, ``slot`` only when set; ``ecn`` (bool) and
  ``gap`` always.  The jitter distribution is never printed.
* tbf (tc/q_tbf.c, recorded with the 6.1.0 binary): ``rate`` in **bytes/s**, ``burst`` in
  bytes (``"159999b/1"``-style strings with ``-d``), ``lat`` in **microseconds**; the burst
  comes back a few bytes off (160000 -> 159999) because tc converts it through time ticks.
  ``peakrate`` is in the JSON up to iproute2 5.10 and printed to text only since 5.11
  (recorded: 5.10 prints ``"peakrate":25000000``, 6.1 and 6.15 leave it out); ``minburst``,
  which tbf_print_opt prints only inside ``if (prate64)`` and which every peakrate has (tc
  refuses a peakrate without ``mtu``), stays in the JSON of every version, so either key
  means a peakrate is set.
* Every time value (netem delay/jitter, tbf latency and burst) goes through tc's tick
  conversion from ``/proc/net/psched``.  A tc that cannot read that file (a chroot or
  container without /proc) assumes 1 tick per microsecond instead of the kernel's 64 ns
  ticks: it prints times 15.625 times too large (recorded: a 5 ms netem delay as
  ``"delay": 0.078125``, with iproute2 5.10 and 6.1 alike) and applies them 15.625 times too
  small; :data:`PSCHED_TICKS_PER_US` names that factor for the read-back's diagnosis.
* prio (tc/q_prio.c at iproute2/iproute2@c061b75895870010ea38979760dfb6806dd6fcbd):
  ``bands``, ``priomap`` (array; older code named it ``"priomap "``), ``multiqueue``.
  pfifo_fast prints through the same function.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from harness.impair.tcjson import (
    TC_H_ROOT,
    Repeated,
    TcParseError,
    as_float,
    as_int,
    as_obj,
    as_str,
    format_tc_id,
    load_objects,
    one,
    parse_tc_id,
)
from harness.units import GIB, KIB, MIB

__all__ = ["PSCHED_TICKS_PER_US", "NetemOptions", "PrioOptions", "Qdisc", "TbfOptions", "parse_qdiscs"]

#: kernel packet-scheduler ticks per microsecond (PSCHED_SHIFT 6: 64 ns ticks, /proc/net/psched
#: "000003e8 00000040": 1000 / 64); a tc without /proc/net/psched takes 1
PSCHED_TICKS_PER_US = 1000 / 64

# netem features the harness never sets; any of them in a read-back means someone else's
# (or a stale) configuration.
_NETEM_EXTRAS = ("loss-state", "loss-gemodel", "duplicate", "reorder", "corrupt", "slot")


@dataclass(frozen=True)
class PrioOptions:
    """prio (or pfifo_fast) options."""

    bands: int
    priomap: tuple[int, ...]
    multiqueue: bool


@dataclass(frozen=True)
class NetemOptions:
    """netem options as iproute2 6.1 prints them, converted to seconds and percent."""

    limit: int
    delay_s: float
    jitter_s: float
    delay_correlation: float
    loss_pct: float
    loss_correlation: float
    rate_bytes: int | None
    ecn: bool
    gap: int
    extras: tuple[str, ...]


@dataclass(frozen=True)
class TbfOptions:
    """tbf options: rate in bytes/s, burst in bytes, queue latency in microseconds."""

    rate_bytes: int
    burst_bytes: int
    latency_us: int | None
    has_peakrate: bool


@dataclass(frozen=True)
class Qdisc:
    """One entry of ``tc -j qdisc show``; ``options`` stays raw, read it with the typed
    accessors (:meth:`prio`, :meth:`netem`, :meth:`tbf`), which raise TcParseError."""

    kind: str
    handle: int
    parent: int
    options: Mapping[str, object]

    @property
    def major(self) -> int:
        return self.handle >> 16

    @property
    def is_root(self) -> bool:
        return self.parent == TC_H_ROOT

    @property
    def parent_major(self) -> int:
        return self.parent >> 16 if not self.is_root else -1

    def label(self) -> str:
        where = "root" if self.is_root else f"parent {format_tc_id(self.parent)}"
        return f"{self.kind} {format_tc_id(self.handle)} {where}"

    def prio(self) -> PrioOptions:
        what = f"{self.label()} options"
        bands = as_int(one(self.options, "bands", what), f"{what}: bands")
        raw_map = self.options.get("priomap", self.options.get("priomap "))
        if not isinstance(raw_map, list) or isinstance(raw_map, Repeated):
            raise TcParseError(f"{what}: priomap missing or not an array")
        priomap = tuple(as_int(band, f"{what}: priomap") for band in raw_map)
        multiqueue = self.options.get("multiqueue", False)
        return PrioOptions(bands, priomap, multiqueue is True)

    def netem(self) -> NetemOptions:
        what = f"{self.label()} options"
        opts = self.options
        limit = as_int(one(opts, "limit", what), f"{what}: limit")
        delay_s = jitter_s = delay_corr = 0.0
        if "delay" in opts:
            delay = as_obj(one(opts, "delay", what), f"{what}: delay")
            delay_s = as_float(delay.get("delay"), f"{what}: delay.delay")
            jitter_s = as_float(delay.get("jitter", 0), f"{what}: delay.jitter")
            delay_corr = as_float(delay.get("correlation", 0), f"{what}: delay.correlation")
        loss_pct = loss_corr = 0.0
        if "loss-random" in opts:
            loss = as_obj(one(opts, "loss-random", what), f"{what}: loss-random")
            # JSON carries a fraction (0.01 == 1 %), the command line a percentage.
            loss_pct = 100 * as_float(loss.get("loss"), f"{what}: loss-random.loss")
            loss_corr = as_float(loss.get("correlation", 0), f"{what}: loss-random.correlation")
        rate_bytes = None
        if "rate" in opts:
            rate = as_obj(one(opts, "rate", what), f"{what}: rate")
            rate_bytes = as_int(rate.get("rate"), f"{what}: rate.rate")
        ecn = opts.get("ecn", False) is True
        gap = as_int(opts.get("gap", 0), f"{what}: gap")
        extras = tuple(key for key in _NETEM_EXTRAS if key in opts)
        return NetemOptions(limit, delay_s, jitter_s, delay_corr, loss_pct, loss_corr, rate_bytes, ecn, gap, extras)

    def tbf(self) -> TbfOptions:
        what = f"{self.label()} options"
        rate = as_int(one(self.options, "rate", what), f"{what}: rate")
        burst = _size(one(self.options, "burst", what), f"{what}: burst")
        lat = self.options.get("lat")
        latency = None if lat is None else as_int(lat, f"{what}: lat")
        # since iproute2 5.11 peakrate itself is text-only; minburst accompanies it in JSON
        return TbfOptions(rate, burst, latency, "peakrate" in self.options or "minburst" in self.options)


_SIZE_RE = re.compile(r"\A(\d+(?:\.\d+)?)(b|Kb|Mb|Gb)?(?:/\d+)?\Z")
_SIZE_UNITS = {None: 1, "b": 1, "Kb": KIB, "Mb": MIB, "Gb": GIB}


def _size(value: object, what: str) -> int:
    # Plain JSON prints bytes as a number; "-d" prints tc's sprint_size() text ("159999b/1",
    # "156Kb/1"), which rounds to the unit -- still within the tbf tolerance.
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    match = _SIZE_RE.match(as_str(value, what))
    if not match:
        raise TcParseError(f"{what}: not a size: {value!r}")
    return round(float(match[1]) * _SIZE_UNITS[match[2]])


def parse_qdiscs(text: str) -> list[Qdisc]:
    """Parse ``tc -j qdisc show dev X``.  Raises TcParseError on anything unexpected,
    including empty output (a failed read must never look like "no qdisc")."""
    qdiscs = []
    for i, item in enumerate(load_objects(text, "tc -j qdisc show")):
        what = f"qdisc #{i}"
        kind = as_str(one(item, "kind", what), f"{what}: kind")
        handle = parse_tc_id(as_str(one(item, "handle", what), f"{what}: handle"))
        if one(item, "root", what) is True:
            parent = TC_H_ROOT
        elif "parent" in item:
            parent = parse_tc_id(as_str(one(item, "parent", what), f"{what}: parent"))
        else:
            parent = 0
        options = item.get("options", {})
        qdiscs.append(Qdisc(kind, handle, parent, as_obj(options, f"{what}: options")))
    return qdiscs
