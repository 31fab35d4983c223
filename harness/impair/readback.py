"""Compare what ``tc`` says is on an interface with what the harness meant.

Input is the typed read-back of ``tc -j qdisc show dev X`` and ``tc -j filter show dev X parent
4842:`` (:func:`harness.impair.commands.readback_commands`), parsed by
:mod:`harness.impair.qdiscs` and :mod:`harness.impair.filters`.  Output:
:func:`classify_root` (may the harness touch this interface?), :func:`verify_applied` (is
exactly the intended impairment in effect?) and :func:`verify_cleared`.  Nothing here runs
a command.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from enum import StrEnum

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
from harness.impair.filters import Filter
from harness.impair.profile import DEFAULT_HZ, DEFAULT_LINK_RATE_BITS, DEFAULT_MTU, NetemProfile
from harness.impair.qdiscs import PSCHED_TICKS_PER_US, NetemOptions, Qdisc, TbfOptions
from harness.impair.steering import SteerRule, steering_rules_to
from harness.impair.tcjson import TcParseError, parse_tc_id
from harness.units import format_duration, format_rate_bits

__all__ = [
    "RootClass",
    "classify_root",
    "explain_root",
    "verify_applied",
    "verify_cleared",
]

_TC_H_INGRESS_MAJOR = 0xFFFF
_HARNESS_MAJORS = frozenset({ROOT_MAJOR, NETEM_MAJOR, TBF_MAJOR})

# Read-back tolerances, each from how tc round-trips the value (see :mod:`harness.impair.qdiscs`):
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
    ``allow_mq=False`` treats multiqueue roots as foreign (pumba's stricter rule).
    """
    return _classify(qdiscs, allow_mq)[0]


def explain_root(qdiscs: Sequence[Qdisc], *, allow_mq: bool = True) -> str:
    """One sentence saying why :func:`classify_root` decided as it did, for error messages."""
    return _classify(qdiscs, allow_mq)[1]


def _close(actual: float, expected: float, abs_tol: float, rel_tol: float) -> bool:
    return abs(actual - expected) <= abs_tol + rel_tol * abs(expected)


_TICKS_AS_US = (
    " — exactly 15.625 times the value set: the tc that printed it could not read /proc/net/psched "
    "(a chroot or container without /proc?) and took kernel ticks for microseconds; such a tc also "
    "applies times 15.625 times too small"
)


def _ticks_hint(got: float, want: float, abs_tol: float, rel_tol: float) -> str:
    """Why a time read back wrong, when it is the psched factor off (see :mod:`harness.impair.qdiscs`)."""
    if want > 0 and _close(got / PSCHED_TICKS_PER_US, want, abs_tol, rel_tol):
        return _TICKS_AS_US
    return ""


def _check_netem(problems: list[str], netem: NetemOptions, expected: NetemProfile, limit: int) -> None:
    if netem.limit != limit:
        problems.append(f"netem limit: expected {limit} packets, read back {netem.limit}")
    for name, got, want in (
        ("delay", netem.delay_s, expected.delay_s),
        ("jitter", netem.jitter_s, expected.jitter_s),
    ):
        if not _close(got, want, _TIME_ABS_S, _TIME_REL):
            hint = _ticks_hint(got, want, _TIME_ABS_S, _TIME_REL)
            problems.append(f"netem {name}: expected {format_duration(want)}, read back {format_duration(got)}{hint}")
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
        hint = _ticks_hint(tbf.burst_bytes, burst, _TBF_BURST_ABS, _TBF_REL)
        problems.append(f"tbf burst: expected {burst} bytes, read back {tbf.burst_bytes}{hint}")
    latency_us = (expected.tbf_latency_s or 0.0) * 1e6
    if tbf.latency_us is None or not _close(tbf.latency_us, latency_us, _TBF_LAT_ABS_US, _TBF_REL):
        got = "no latency" if tbf.latency_us is None else f"{tbf.latency_us}us"
        problems.append(f"tbf latency: expected {latency_us:.0f}us, read back {got}")
    if tbf.has_peakrate:
        problems.append("tbf has a peakrate the harness never sets")


def _check_prio(root: Qdisc) -> list[str]:
    try:
        prio = root.prio()
    except TcParseError as exc:
        return [f"root prio options unreadable: {exc}"]
    if prio.bands != PRIO_BANDS or prio.priomap != PRIOMAP or prio.multiqueue:
        return [
            f"root prio: expected bands {PRIO_BANDS} priomap all 0, read back bands {prio.bands} "
            f"priomap {' '.join(map(str, prio.priomap))}{' multiqueue' if prio.multiqueue else ''}"
        ]
    return []


def _check_netem_qdisc(
    problems: list[str], netems: Sequence[Qdisc], expected: NetemProfile, link_rate_bits: float, mtu: int
) -> None:
    """Exactly one netem, under the impaired band, with the expected options."""
    if len(netems) != 1:
        problems.append(f"netem {NETEM_MAJOR:x}: expected once under {IMPAIRED_CLASS}, found {len(netems)}")
        return
    netem_q = netems[0]
    if netem_q.kind != "netem" or netem_q.parent != parse_tc_id(IMPAIRED_CLASS):
        problems.append(f"netem: expected netem {NETEM_MAJOR:x}: parent {IMPAIRED_CLASS}, found {netem_q.label()}")
        return
    try:
        _check_netem(problems, netem_q.netem(), expected, expected.limit_packets(link_rate_bits, mtu))
    except TcParseError as exc:
        problems.append(f"netem options unreadable: {exc}")


def _check_tbf_qdisc(problems: list[str], tbfs: Sequence[Qdisc], expected: NetemProfile, hz: int, mtu: int) -> None:
    """No tbf without a rate in the profile; with one, exactly one tbf under netem with the expected options."""
    if expected.rate_bits is None:
        problems.extend(f"unexpected rate limiter (profile has no rate): {q.label()}" for q in tbfs)
        return
    if len(tbfs) != 1:
        problems.append(f"tbf {TBF_MAJOR:x}: expected once under {TBF_PARENT}, found {len(tbfs)}")
        return
    tbf_q = tbfs[0]
    if tbf_q.kind != "tbf" or tbf_q.parent != parse_tc_id(TBF_PARENT):
        problems.append(f"tbf: expected tbf {TBF_MAJOR:x}: parent {TBF_PARENT}, found {tbf_q.label()}")
        return
    try:
        _check_tbf(problems, tbf_q.tbf(), expected, hz, mtu)
    except TcParseError as exc:
        problems.append(f"tbf options unreadable: {exc}")


def verify_applied(
    expected: NetemProfile,
    qdiscs: Sequence[Qdisc],
    filters: Sequence[Filter],
    peer_ip: str | ipaddress.IPv4Address,
    *,
    link_rate_bits: float = DEFAULT_LINK_RATE_BITS,
    mtu: int = DEFAULT_MTU,
    hz: int = DEFAULT_HZ,
    port: int | None = None,
    also_to: Sequence[str | ipaddress.IPv4Address] = (),
) -> list[str]:
    """Compare a read-back with the impairment :func:`~harness.impair.commands.apply_commands`
    builds for ``expected`` toward ``peer_ip`` (same ``link_rate_bits``/``mtu``/``hz``/``port``/``also_to``).

    Returns one human-readable line per mismatch; an empty list means exactly the intended
    tree is in effect: harness prio root with the all-zero priomap, netem with the expected
    limit/delay/jitter/loss and nothing else, tbf with the expected rate/burst/latency (or
    none without a rate), no other qdisc in the tree, and exactly the u32 rules of
    :func:`~harness.impair.steering.steering_rules` sending to the impaired band.  The jitter
    distribution cannot be checked (tc never prints it).  Unreadable options are reported as mismatches, not raised.
    """
    peers = [validate_peer_ip(ip) for ip in (peer_ip, *also_to)]
    state, why = _classify(qdiscs, allow_mq=True)
    if state is not RootClass.HARNESS_OWNED:
        return [f"root: expected the harness prio root {ROOT_MAJOR:x}:, found {why}"]
    problems = _check_prio(next(q for q in qdiscs if q.is_root))
    in_tree = [q for q in qdiscs if not q.is_root and q.parent_major in _HARNESS_MAJORS]
    problems.extend(
        f"unexpected qdisc in the harness tree: {q.label()}"
        for q in in_tree
        if q.major not in (NETEM_MAJOR, TBF_MAJOR) and q.major != 0
    )
    netems = [q for q in in_tree if q.major == NETEM_MAJOR]
    _check_netem_qdisc(problems, netems, expected, link_rate_bits, mtu)
    _check_tbf_qdisc(problems, [q for q in in_tree if q.major == TBF_MAJOR], expected, hz, mtu)
    problems.extend(_check_filters(filters, steering_rules_to(peers, port), parse_tc_id(IMPAIRED_CLASS)))
    return problems


def _check_filters(filters: Iterable[Filter], wanted: list[SteerRule], impaired_class: int) -> list[str]:
    rules = [f for f in filters if f.is_rule]
    if not rules:
        return [f"filter: no rule steers {wanted[0].what} to {IMPAIRED_CLASS}; nothing is impaired"]
    problems = []
    missing = list(wanted)
    for rule in rules:
        keys = ", ".join(k.describe() for k in rule.keys) or "no keys"
        match = next((w for w in missing if frozenset(rule.keys) == w.keys and len(rule.keys) == len(w.keys)), None)
        if match is None or rule.kind != "u32" or rule.protocol != "ip" or rule.flowid != impaired_class or rule.extras:
            problems.append(
                f"filter: unexpected {rule.label()} protocol {rule.protocol or '-'} match {keys}"
                + (f" with {', '.join(rule.extras)}" if rule.extras else "")
                + f"; expected u32 protocol ip flowid {IMPAIRED_CLASS} for: {'; '.join(w.what for w in wanted)}"
            )
        else:
            missing.remove(match)
    # an unexpected rule's line already names every rule wanted
    problems.extend(
        f"filter: no rule steers {w.what} ({', '.join(sorted(k.describe() for k in w.keys))}) to {IMPAIRED_CLASS}"
        for w in (missing if not problems else [])
    )
    return problems


def verify_cleared(qdiscs: Sequence[Qdisc]) -> list[str]:
    """Mismatches if anything with a harness handle is still on the interface.

    Comparing the remaining root with the pre-state recorded in the ledger is the caller's
    job; this only answers "did our objects go away".
    """
    return [
        f"harness qdisc still present: {q.label()}"
        for q in qdiscs
        if q.major in _HARNESS_MAJORS or (not q.is_root and q.parent_major in _HARNESS_MAJORS)
    ]
