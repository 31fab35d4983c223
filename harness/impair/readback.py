"""Read back what ``tc`` says is on an interface, and compare it with what the harness meant.

Input is the JSON printed by ``tc -j qdisc show dev X`` and ``tc -j filter show dev X parent
4842:`` (:func:`harness.impair.commands.readback_commands`).  Output: typed objects,
:func:`classify_root` (may the harness touch this interface?), :func:`verify_applied` (is
exactly the intended impairment in effect?) and :func:`verify_cleared`.  Nothing here runs
a command.

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
* prio (tc/q_prio.c at iproute2/iproute2@c061b75895870010ea38979760dfb6806dd6fcbd):
  ``bands``, ``priomap`` (array; older code named it ``"priomap "``), ``multiqueue``.
  pfifo_fast prints through the same function.
* u32 filters (tc/f_u32.c ``print_raw`` at Mu-L/iproute2@21a61425cb9a0993e422b1d2ee2f331b66548d86,
  and recorded with the 6.1.0 binary): each key is an object under the key
  ``"match"`` -- repeated once per key *in the same JSON object* -- with ``value``/``mask``
  as unpadded hex strings (``"ad5010c"`` for 10.213.1.12) and ``off``.  The duplicate keys
  are kept here (a plain ``json.loads`` would silently keep only the last one).  With ``-p``
  the keys print as ``{"dst": {"address", "prefixlen"}}``; that form is accepted too.
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from harness.errors import InfraError
from harness.impair.commands import (
    IMPAIRED_CLASS,
    NETEM_MAJOR,
    PRIO_BANDS,
    PRIOMAP,
    ROOT_MAJOR,
    TBF_MAJOR,
    TBF_PARENT,
    validate_peer_ip,
)
from harness.impair.profile import DEFAULT_HZ, DEFAULT_LINK_RATE_BITS, DEFAULT_MTU, NetemProfile
from harness.units import format_duration, format_rate_bits

__all__ = [
    "TC_H_ROOT",
    "Filter",
    "NetemOptions",
    "PrioOptions",
    "Qdisc",
    "RootClass",
    "TbfOptions",
    "TcParseError",
    "U32Key",
    "classify_root",
    "explain_root",
    "parse_filters",
    "parse_qdiscs",
    "parse_tc_id",
    "verify_applied",
    "verify_cleared",
]

TC_H_ROOT = 0xFFFFFFFF
_TC_H_INGRESS_MAJOR = 0xFFFF
_HARNESS_MAJORS = frozenset({ROOT_MAJOR, NETEM_MAJOR, TBF_MAJOR})

# Read-back tolerances, each from how tc round-trips the value (see the module docstring):
# times are truncated to whole microseconds through 64 ns kernel ticks and printed with %g
# (six significant digits); loss goes through a 32-bit fraction and %g; tc truncates the
# rate to whole bytes/s; tbf's burst and latency go through time ticks (recorded: 160000 ->
# 159999 bytes, 50 ms -> 49999 us; 12.5 MB -> 12498750 at 10 Gbit/s).
_TIME_ABS_S = 2e-6
_TIME_REL = 1e-5
_LOSS_ABS_PCT = 1e-6
_LOSS_REL = 1e-5
_RATE_ABS_BYTES = 1.0
_RATE_REL = 1e-6
_TBF_REL = 0.01
_TBF_BURST_ABS = 16
_TBF_LAT_ABS_US = 10

# netem features the harness never sets; any of them in a read-back means someone else's
# (or a stale) configuration.
_NETEM_EXTRAS = ("loss-state", "loss-gemodel", "duplicate", "reorder", "corrupt", "slot")
# u32 options that would change what a rule does beyond "match key -> flowid".
_U32_EXTRAS = ("actions", "police", "link", "input_dev", "offset_mask", "plus", "hash_mask", "fwmark_value")


class TcParseError(InfraError):
    """tc printed something that is not the JSON the harness understands."""


class _Repeated(list[object]):
    """Values of a key that appeared more than once in one JSON object (u32's "match")."""


def _keep_repeats(pairs: list[tuple[str, object]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in pairs:
        if key not in out:
            out[key] = value
        elif isinstance(out[key], _Repeated):
            existing = out[key]
            assert isinstance(existing, _Repeated)
            existing.append(value)
        else:
            out[key] = _Repeated([out[key], value])
    return out


def _load(text: str, what: str) -> list[Mapping[str, object]]:
    if not isinstance(text, str) or not text.strip():
        # An empty read-back is a failed read, never "nothing there" (iota#11738).
        raise TcParseError(f"empty output from {what}")
    try:
        data = json.loads(text, object_pairs_hook=_keep_repeats)
    except json.JSONDecodeError as exc:
        raise TcParseError(f"{what} did not print JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise TcParseError(f"{what} printed JSON that is not a list of objects")
    return data


def _one(obj: Mapping[str, object], key: str, what: str) -> object:
    value = obj.get(key)
    if isinstance(value, _Repeated):
        raise TcParseError(f"{what}: key {key!r} appears {len(value)} times")
    return value


def _all(obj: Mapping[str, object], key: str) -> list[object]:
    value = obj.get(key)
    if value is None:
        return []
    return list(value) if isinstance(value, _Repeated) else [value]


def _int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TcParseError(f"{what}: expected an integer, got {value!r}")
    return value


def _float(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TcParseError(f"{what}: expected a number, got {value!r}")
    return float(value)


def _str(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise TcParseError(f"{what}: expected a string, got {value!r}")
    return value


def _obj(value: object, what: str) -> Mapping[str, object]:
    if not isinstance(value, dict):
        raise TcParseError(f"{what}: expected an object, got {value!r}")
    return value


def _hex(value: object, what: str) -> int:
    # iproute2 6.1 prints print_hex() values as unpadded hex strings; accept ints too in
    # case a later version switches to numbers.
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = _str(value, what).lower().removeprefix("0x")
    if not re.fullmatch(r"[0-9a-f]{1,8}", text):
        raise TcParseError(f"{what}: expected hex digits, got {value!r}")
    return int(text, 16)


_ID_RE = re.compile(r"\A([0-9a-f]{0,4}):([0-9a-f]{0,4})\Z")


def parse_tc_id(text: str) -> int:
    """A handle/class id as printed by tc (``"4842:"``, ``"4842:2"``, ``":1"``, ``"root"``,
    ``"none"``) as the kernel's 32-bit ``major << 16 | minor``."""
    if text == "root":
        return TC_H_ROOT
    if text == "none":
        return 0
    match = _ID_RE.match(text.lower()) if isinstance(text, str) else None
    if not match:
        raise TcParseError(f"not a tc handle or class id: {text!r}")
    major, minor = (int(part, 16) if part else 0 for part in match.groups())
    return major << 16 | minor


def _format_id(value: int) -> str:
    if value == TC_H_ROOT:
        return "root"
    major, minor = value >> 16, value & 0xFFFF
    return f"{major:x}:{minor:x}" if minor else f"{major:x}:"


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
        where = "root" if self.is_root else f"parent {_format_id(self.parent)}"
        return f"{self.kind} {_format_id(self.handle)} {where}"

    def prio(self) -> PrioOptions:
        what = f"{self.label()} options"
        bands = _int(_one(self.options, "bands", what), f"{what}: bands")
        raw_map = self.options.get("priomap", self.options.get("priomap "))
        if not isinstance(raw_map, list) or isinstance(raw_map, _Repeated):
            raise TcParseError(f"{what}: priomap missing or not an array")
        priomap = tuple(_int(band, f"{what}: priomap") for band in raw_map)
        multiqueue = self.options.get("multiqueue", False)
        return PrioOptions(bands, priomap, multiqueue is True)

    def netem(self) -> NetemOptions:
        what = f"{self.label()} options"
        opts = self.options
        limit = _int(_one(opts, "limit", what), f"{what}: limit")
        delay_s = jitter_s = delay_corr = 0.0
        if "delay" in opts:
            delay = _obj(_one(opts, "delay", what), f"{what}: delay")
            delay_s = _float(delay.get("delay"), f"{what}: delay.delay")
            jitter_s = _float(delay.get("jitter", 0), f"{what}: delay.jitter")
            delay_corr = _float(delay.get("correlation", 0), f"{what}: delay.correlation")
        loss_pct = loss_corr = 0.0
        if "loss-random" in opts:
            loss = _obj(_one(opts, "loss-random", what), f"{what}: loss-random")
            # JSON carries a fraction (0.01 == 1 %), the command line a percentage.
            loss_pct = 100 * _float(loss.get("loss"), f"{what}: loss-random.loss")
            loss_corr = _float(loss.get("correlation", 0), f"{what}: loss-random.correlation")
        rate_bytes = None
        if "rate" in opts:
            rate = _obj(_one(opts, "rate", what), f"{what}: rate")
            rate_bytes = _int(rate.get("rate"), f"{what}: rate.rate")
        ecn = opts.get("ecn", False) is True
        gap = _int(opts.get("gap", 0), f"{what}: gap")
        extras = tuple(key for key in _NETEM_EXTRAS if key in opts)
        return NetemOptions(limit, delay_s, jitter_s, delay_corr, loss_pct, loss_corr, rate_bytes, ecn, gap, extras)

    def tbf(self) -> TbfOptions:
        what = f"{self.label()} options"
        rate = _int(_one(self.options, "rate", what), f"{what}: rate")
        burst = _size(_one(self.options, "burst", what), f"{what}: burst")
        lat = self.options.get("lat")
        latency = None if lat is None else _int(lat, f"{what}: lat")
        return TbfOptions(rate, burst, latency, "peakrate" in self.options)


_SIZE_RE = re.compile(r"\A(\d+(?:\.\d+)?)(b|Kb|Mb|Gb)?(?:/\d+)?\Z")
_SIZE_UNITS = {None: 1, "b": 1, "Kb": 1024, "Mb": 1024**2, "Gb": 1024**3}


def _size(value: object, what: str) -> int:
    # Plain JSON prints bytes as a number; "-d" prints tc's sprint_size() text ("159999b/1",
    # "156Kb/1"), which rounds to the unit -- still within the tbf tolerance.
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    match = _SIZE_RE.match(_str(value, what))
    if not match:
        raise TcParseError(f"{what}: not a size: {value!r}")
    return round(float(match[1]) * _SIZE_UNITS[match[2]])


def parse_qdiscs(text: str) -> list[Qdisc]:
    """Parse ``tc -j qdisc show dev X``.  Raises TcParseError on anything unexpected,
    including empty output (a failed read must never look like "no qdisc")."""
    qdiscs = []
    for i, item in enumerate(_load(text, "tc -j qdisc show")):
        what = f"qdisc #{i}"
        kind = _str(_one(item, "kind", what), f"{what}: kind")
        handle = parse_tc_id(_str(_one(item, "handle", what), f"{what}: handle"))
        if _one(item, "root", what) is True:
            parent = TC_H_ROOT
        elif "parent" in item:
            parent = parse_tc_id(_str(_one(item, "parent", what), f"{what}: parent"))
        else:
            parent = 0
        options = item.get("options", {})
        qdiscs.append(Qdisc(kind, handle, parent, _obj(options, f"{what}: options")))
    return qdiscs


@dataclass(frozen=True)
class U32Key:
    """One u32 match key: ``(packet[off:off+4] & mask) == value``, IP header relative."""

    value: int
    mask: int
    off: int
    nexthdr: bool = False

    def describe(self) -> str:
        return f"{self.value:08x}/{self.mask:08x} at {'nexthdr+' if self.nexthdr else ''}{self.off}"


@dataclass(frozen=True)
class Filter:
    """One entry of ``tc -j filter show``.  u32 prints a header entry per priority and one
    for the hash table (``ht_divisor``) besides the rules; :attr:`is_rule` tells them apart."""

    kind: str
    protocol: str
    pref: int
    handle: str | None
    flowid: int | None
    keys: tuple[U32Key, ...]
    extras: tuple[str, ...]
    is_rule: bool

    def label(self) -> str:
        flow = _format_id(self.flowid) if self.flowid is not None else "-"
        return f"{self.kind} pref {self.pref} fh {self.handle or '-'} flowid {flow}"


def _u32_keys(options: Mapping[str, object], what: str) -> tuple[U32Key, ...]:
    keys = []
    for entry in _all(options, "match"):
        match = _obj(entry, f"{what}: match")
        if "value" in match:
            offmask = match.get("offmask", "")
            keys.append(
                U32Key(
                    value=_hex(match.get("value"), f"{what}: match.value"),
                    mask=_hex(match.get("mask"), f"{what}: match.mask"),
                    off=_int(match.get("off"), f"{what}: match.off"),
                    nexthdr=bool(offmask),
                )
            )
            continue
        # "-p" form for IPv4 addresses: {"dst": {"address": "...", "prefixlen": 32}}.
        for field_name, off in (("src", 12), ("dst", 16)):
            if field_name in match:
                addr = _obj(match[field_name], f"{what}: match.{field_name}")
                try:
                    ip = ipaddress.IPv4Address(_str(addr.get("address"), f"{what}: address"))
                except ValueError:
                    raise TcParseError(f"{what}: bad address {addr.get('address')!r}") from None
                bits = _int(addr.get("prefixlen"), f"{what}: prefixlen")
                if not 0 <= bits <= 32:
                    raise TcParseError(f"{what}: prefixlen {bits} out of range")
                mask = (0xFFFFFFFF << (32 - bits)) & 0xFFFFFFFF
                keys.append(U32Key(int(ip), mask, off))
                break
        else:
            raise TcParseError(f"{what}: u32 key form not understood: {dict(match)!r}")
    return tuple(keys)


def parse_filters(text: str) -> list[Filter]:
    """Parse ``tc -j filter show dev X parent H``.  An empty list (``[]``) is valid; empty
    output is not.  u32 keys are decoded; other filter kinds keep no keys."""
    filters = []
    for i, item in enumerate(_load(text, "tc -j filter show")):
        what = f"filter #{i}"
        kind = _str(_one(item, "kind", what), f"{what}: kind")
        protocol = _str(item.get("protocol", ""), f"{what}: protocol")
        pref = _int(item.get("pref", 0), f"{what}: pref")
        options = item.get("options")
        if options is None:
            filters.append(Filter(kind, protocol, pref, None, None, (), (), is_rule=False))
            continue
        opts = _obj(options, f"{what}: options")
        handle = opts.get("fh")
        flowid = opts.get("flowid")
        is_table = "ht_divisor" in opts
        filters.append(
            Filter(
                kind=kind,
                protocol=protocol,
                pref=pref,
                handle=None if handle is None else _str(handle, f"{what}: fh"),
                flowid=None if flowid is None else parse_tc_id(_str(flowid, f"{what}: flowid")),
                keys=_u32_keys(opts, what) if kind == "u32" else (),
                extras=tuple(key for key in _U32_EXTRAS if key in opts),
                is_rule=not is_table,
            )
        )
    return filters


class RootClass(StrEnum):
    """Who owns an interface's root qdisc, as far as the harness may act on it."""

    DEFAULT = "default"  # none set: the kernel's implicit root (handle 0:); may be replaced
    HARNESS_OWNED = "harness-owned"  # our reserved handle: a leftover or our live fault
    FOREIGN = "foreign"  # anything else, or an ambiguous read-back: refuse to touch


def _classify(qdiscs: Sequence[Qdisc], allow_mq: bool) -> tuple[RootClass, str]:
    roots = [q for q in qdiscs if q.is_root]
    if len(roots) != 1:
        return RootClass.FOREIGN, f"read-back shows {len(roots)} root qdiscs; refusing to guess"
    root = roots[0]
    if root.major == ROOT_MAJOR:
        if root.kind == "prio":
            return RootClass.HARNESS_OWNED, f"harness root {root.label()}"
        return (
            RootClass.FOREIGN,
            f"{root.label()} uses the harness's reserved handle but is not its prio root",
        )
    if root.major != 0:
        # Roots someone created always have a handle: tc asks the kernel to allocate one
        # (8001: and up) when none is given.  Only kernel-attached defaults have 0:.
        return RootClass.FOREIGN, f"{root.label()} was configured by someone else; not touching it"
    egress = [q for q in qdiscs if not q.is_root and q.parent_major != _TC_H_INGRESS_MAJOR]
    if root.kind == "mq":
        if not allow_mq:
            return RootClass.FOREIGN, "multiqueue root (mq) and allow_mq is off"
        for child in egress:
            # mq's per-queue defaults hang off ":N" with handle 0:; a handle means someone
            # replaced a queue's qdisc.
            if child.parent_major != 0 or child.major != 0:
                return RootClass.FOREIGN, f"mq root has a configured child {child.label()}"
        return RootClass.DEFAULT, f"default multiqueue root mq with {len(egress)} default queue qdiscs"
    if egress:
        return RootClass.FOREIGN, f"default root {root.kind} but extra qdiscs: {egress[0].label()}"
    return RootClass.DEFAULT, f"default root {root.label()}"


def classify_root(qdiscs: Sequence[Qdisc], *, allow_mq: bool = True) -> RootClass:
    """Classify the egress root of one interface (ingress/clsact qdiscs are ignored).

    DEFAULT: the kernel's implicit root (handle ``0:``: noqueue, pfifo_fast, fq_codel, ...,
    or ``mq`` whose per-queue children are all defaults); the harness may add its root.
    HARNESS_OWNED: a prio root with the reserved handle.  FOREIGN: anything else, including
    a read-back without exactly one root; the harness must not touch the interface.
    ``allow_mq=False`` treats multiqueue roots as foreign (pumba's stricter rule; FAULT-2).
    """
    return _classify(qdiscs, allow_mq)[0]


def explain_root(qdiscs: Sequence[Qdisc], *, allow_mq: bool = True) -> str:
    """One sentence saying why :func:`classify_root` decided as it did, for error messages."""
    return _classify(qdiscs, allow_mq)[1]


def _close(actual: float, expected: float, abs_tol: float, rel_tol: float) -> bool:
    return abs(actual - expected) <= abs_tol + rel_tol * abs(expected)


def _check_netem(problems: list[str], netem: NetemOptions, expected: NetemProfile, limit: int) -> None:
    if netem.limit != limit:
        problems.append(f"netem limit: expected {limit} packets, read back {netem.limit}")
    for name, got, want in (
        ("delay", netem.delay_s, expected.delay_s),
        ("jitter", netem.jitter_s, expected.jitter_s),
    ):
        if not _close(got, want, _TIME_ABS_S, _TIME_REL):
            problems.append(f"netem {name}: expected {format_duration(want)}, read back {format_duration(got)}")
    if not _close(netem.loss_pct, expected.loss_pct, _LOSS_ABS_PCT, _LOSS_REL):
        problems.append(f"netem loss: expected {expected.loss_pct:g}%, read back {netem.loss_pct:g}%")
    if netem.delay_correlation or netem.loss_correlation:
        problems.append("netem has a delay/loss correlation the harness never sets")
    if netem.rate_bytes is not None:
        problems.append(f"netem has its own rate ({format_rate_bits(netem.rate_bytes * 8)}); the harness uses tbf")
    if netem.extras or netem.ecn or netem.gap:
        features = [*netem.extras, *(["ecn"] if netem.ecn else []), *(["gap"] if netem.gap else [])]
        problems.append(f"netem has features the harness never sets: {', '.join(features)}")


def _check_tbf(problems: list[str], tbf: TbfOptions, expected: NetemProfile, hz: int, mtu: int) -> None:
    rate_bits = expected.rate_bits or 0.0
    want_rate = rate_bits / 8
    if not _close(tbf.rate_bytes, want_rate, _RATE_ABS_BYTES, _RATE_REL):
        problems.append(
            f"tbf rate: expected {format_rate_bits(rate_bits)}, read back {format_rate_bits(tbf.rate_bytes * 8)}"
        )
    burst = expected.tbf_burst_bytes(hz, mtu) or 0
    if not _close(tbf.burst_bytes, burst, _TBF_BURST_ABS, _TBF_REL):
        problems.append(f"tbf burst: expected {burst} bytes, read back {tbf.burst_bytes}")
    latency_us = (expected.tbf_latency_s or 0.0) * 1e6
    if tbf.latency_us is None or not _close(tbf.latency_us, latency_us, _TBF_LAT_ABS_US, _TBF_REL):
        problems.append(f"tbf latency: expected {latency_us:.0f}us, read back {tbf.latency_us}us")
    if tbf.has_peakrate:
        problems.append("tbf has a peakrate the harness never sets")


def verify_applied(
    expected: NetemProfile,
    qdiscs: Sequence[Qdisc],
    filters: Sequence[Filter],
    peer_ip: str | ipaddress.IPv4Address,
    *,
    link_rate_bits: float = DEFAULT_LINK_RATE_BITS,
    mtu: int = DEFAULT_MTU,
    hz: int = DEFAULT_HZ,
) -> list[str]:
    """Compare a read-back with the impairment :func:`~harness.impair.commands.apply_commands`
    builds for ``expected`` toward ``peer_ip`` (same ``link_rate_bits``/``mtu``/``hz``).

    Returns one human-readable line per mismatch; an empty list means exactly the intended
    tree is in effect: harness prio root with the all-zero priomap, netem with the expected
    limit/delay/jitter/loss and nothing else, tbf with the expected rate/burst/latency (or
    none without a rate), no other qdisc in the tree, and a single u32 rule sending exactly
    ``<peer>/32`` to the impaired band.  The jitter distribution cannot be checked (tc
    never prints it).  Unreadable options are reported as mismatches, not raised.
    """
    peer = validate_peer_ip(peer_ip)
    state, why = _classify(qdiscs, allow_mq=True)
    if state is not RootClass.HARNESS_OWNED:
        return [f"root: expected the harness prio root {ROOT_MAJOR:x}:, found {why}"]
    problems: list[str] = []
    root = next(q for q in qdiscs if q.is_root)
    try:
        prio = root.prio()
        if prio.bands != PRIO_BANDS or prio.priomap != PRIOMAP or prio.multiqueue:
            problems.append(
                f"root prio: expected bands {PRIO_BANDS} priomap all 0, read back bands {prio.bands} "
                f"priomap {' '.join(map(str, prio.priomap))}{' multiqueue' if prio.multiqueue else ''}"
            )
    except TcParseError as exc:
        problems.append(f"root prio options unreadable: {exc}")

    in_tree = [q for q in qdiscs if not q.is_root and q.parent_major in _HARNESS_MAJORS]
    netems = [q for q in in_tree if q.major == NETEM_MAJOR]
    tbfs = [q for q in in_tree if q.major == TBF_MAJOR]
    impaired_class = parse_tc_id(IMPAIRED_CLASS)
    tbf_parent = parse_tc_id(TBF_PARENT)
    for q in in_tree:
        if q.major not in (NETEM_MAJOR, TBF_MAJOR) and q.major != 0:
            problems.append(f"unexpected qdisc in the harness tree: {q.label()}")
    if len(netems) != 1:
        problems.append(f"netem {NETEM_MAJOR:x}: expected once under {IMPAIRED_CLASS}, found {len(netems)}")
    else:
        netem_q = netems[0]
        if netem_q.kind != "netem" or netem_q.parent != impaired_class:
            problems.append(f"netem: expected netem {NETEM_MAJOR:x}: parent {IMPAIRED_CLASS}, found {netem_q.label()}")
        else:
            try:
                _check_netem(problems, netem_q.netem(), expected, expected.limit_packets(link_rate_bits, mtu))
            except TcParseError as exc:
                problems.append(f"netem options unreadable: {exc}")
    if expected.rate_bits is None:
        problems.extend(f"unexpected rate limiter (profile has no rate): {q.label()}" for q in tbfs)
    elif len(tbfs) != 1:
        problems.append(f"tbf {TBF_MAJOR:x}: expected once under {TBF_PARENT}, found {len(tbfs)}")
    else:
        tbf_q = tbfs[0]
        if tbf_q.kind != "tbf" or tbf_q.parent != tbf_parent:
            problems.append(f"tbf: expected tbf {TBF_MAJOR:x}: parent {TBF_PARENT}, found {tbf_q.label()}")
        else:
            try:
                _check_tbf(problems, tbf_q.tbf(), expected, hz, mtu)
            except TcParseError as exc:
                problems.append(f"tbf options unreadable: {exc}")
    problems.extend(_check_filters(filters, peer, impaired_class))
    return problems


def _check_filters(filters: Iterable[Filter], peer: ipaddress.IPv4Address, impaired_class: int) -> list[str]:
    rules = [f for f in filters if f.is_rule]
    want = U32Key(int(peer), 0xFFFFFFFF, 16)
    if not rules:
        return [f"filter: no rule steers {peer}/32 to {IMPAIRED_CLASS}; nothing is impaired"]
    problems = []
    if len(rules) > 1:
        problems.append(
            f"filter: expected exactly one rule, found {len(rules)} ({'; '.join(r.label() for r in rules)})"
        )
    for rule in rules:
        keys = ", ".join(k.describe() for k in rule.keys) or "no keys"
        if (
            rule.kind != "u32"
            or rule.protocol != "ip"
            or rule.flowid != impaired_class
            or rule.keys != (want,)
            or rule.extras
        ):
            problems.append(
                f"filter: expected u32 protocol ip match {want.describe()} (ip dst {peer}/32) flowid "
                f"{IMPAIRED_CLASS}, found {rule.label()} protocol {rule.protocol or '-'} match {keys}"
                + (f" with {', '.join(rule.extras)}" if rule.extras else "")
            )
    return problems


def verify_cleared(qdiscs: Sequence[Qdisc]) -> list[str]:
    """Mismatches if anything with a harness handle is still on the interface (FAULT-6).

    Comparing the remaining root with the pre-state recorded in the ledger is the caller's
    job; this only answers "did our objects go away".
    """
    return [
        f"harness qdisc still present: {q.label()}"
        for q in qdiscs
        if q.major in _HARNESS_MAJORS or (not q.is_root and q.parent_major in _HARNESS_MAJORS)
    ]
