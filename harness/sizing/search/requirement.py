"""What the customer asks the search for: a rate, a workload, latency targets, how safe, where.

A :class:`SearchRequirement` is the whole question of ``harness sizing search``; its text forms
(``15000iops``, ``5ms``, ``rpo=0``, ``cross-zone``) are read by :func:`build_requirement`, every
bad value a one-line :class:`~harness.errors.ConfigError`.  Whether a configuration meets it is
:mod:`harness.sizing.search.predicate`'s alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import get_args

from harness.errors import ConfigError
from harness.fields import ReplicationProtocol
from harness.sizing.answer.search import Requirement, parse_requirement
from harness.sizing.catalog.clouds import CLOUDS, placement_for
from harness.sizing.catalog.loader import Catalog
from harness.sizing.scenario.question import Workload
from harness.units import UnitError, parse_duration, parse_size

__all__ = ["SAFEST_FIRST", "Placement", "SearchRequirement", "build_requirement", "parse_clouds", "placed"]

#: protocols in the order a tie in price is broken: the one that loses nothing first
SAFEST_FIRST: tuple[ReplicationProtocol, ...] = ("C", "B", "A")

#: what the search's zone words mean in the catalog's placement names
_ZONES = {"same-zone": "same-az", "same-az": "same-az", "cross-zone": "cross-az", "cross-az": "cross-az"}

#: the write patterns a write-latency target speaks of
_WRITE_MODES = ("randwrite", "write")


@dataclass(frozen=True)
class Placement:
    """Where the peer is: a catalog placement (``same-az``, ``cross-az``, or a named pair such
    as a region pair) or an explicit round trip ``rtt_s`` (``name`` is then ``custom``)."""

    name: str
    rtt_s: float | None = None

    def describe(self) -> str:
        return self.name if self.rtt_s is None else f"rtt={self.rtt_s * 1000:g}ms"


@dataclass(frozen=True)
class SearchRequirement:
    """The customer's question.  ``rate`` is met by the lowest phase of the run (``duration_s``
    long, or the steady state) with ``headroom`` to spare (0.2 = 20 % above the rate); the
    mean and p99 write-latency targets hold at the workload's queue depth; ``protocols`` are
    those safe enough (one named, or every one whose loss fits ``rpo_s``)."""

    rate: Requirement
    workload: Workload
    placement: Placement
    protocols: tuple[ReplicationProtocol, ...] = ("C",)
    rpo_s: float | None = None
    mean_latency_s: float | None = None
    p99_latency_s: float | None = None
    duration_s: float | None = None
    headroom: float = 0.0
    clouds: tuple[str, ...] = CLOUDS

    @property
    def need(self) -> float:
        """The rate a configuration must sustain, in the requirement's unit (B/s or IOPS)."""
        return self.rate.value * (1.0 + self.headroom)

    @property
    def written_bytes_s(self) -> float:
        """Bytes per second the customer writes at the required rate (what crosses to the peer)."""
        per_io = self.workload.bs if self.rate.kind == "iops" else 1
        return self.rate.value * per_io * self.workload.write_fraction

    def floor_iops(self) -> float:
        """The fewest IOPS any configuration that meets this must sustain: the rate with its
        headroom, and the IOPS at which the queue depth's mean latency reaches a target (the
        p99 is never below the mean)."""
        bs = self.workload.bs
        floor = self.need if self.rate.kind == "iops" else self.need / bs
        targets = [t for t in (self.mean_latency_s, self.p99_latency_s) if t is not None]
        if targets:
            floor = max(floor, self.workload.outstanding / min(targets))
        return floor


def parse_clouds(text: str | None) -> tuple[str, ...]:
    """``aws,gcp`` as a tuple in the catalog's order; every cloud when ``None``."""
    if text is None:
        return CLOUDS
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in CLOUDS]
    if unknown or not names:
        raise ConfigError(f"--cloud {text!r}: unknown cloud {', '.join(unknown) or '(none)'}; use {', '.join(CLOUDS)}")
    return tuple(cloud for cloud in CLOUDS if cloud in names)


def _seconds(text: str, option: str, *, positive: bool = True) -> float:
    try:
        value = parse_duration(text)
    except UnitError as exc:
        raise ConfigError(f"{option} {text!r}: {exc}") from None
    if text.strip().startswith("-") or (positive and value <= 0) or not math.isfinite(value):
        raise ConfigError(f"{option} {text!r}: must be {'positive' if positive else '>= 0'}")
    return value


def _placement(text: str) -> Placement:
    raw = text.strip()
    if raw.startswith("rtt="):
        return Placement("custom", _seconds(raw[4:], "--placement", positive=False))
    return Placement(_ZONES.get(raw, raw))


def _protocols(protocol: str | None, rpo: str | None) -> tuple[tuple[ReplicationProtocol, ...], float | None]:
    if protocol is not None and rpo is not None:
        raise ConfigError("--protocol and --rpo both say how safe a write is: give one")
    if rpo is not None:
        seconds = _seconds(rpo, "--rpo", positive=False)
        # Protocol B acknowledges a write the peer holds only in memory and A one still in the
        # primary's send buffer: only C loses nothing acknowledged when a node fails.
        return (("C",) if seconds == 0 else SAFEST_FIRST), seconds
    chosen = protocol or "C"
    if chosen not in get_args(ReplicationProtocol):
        raise ConfigError(f"--protocol {chosen!r}: use A, B or C")
    return (chosen,), None  # type: ignore[return-value]  # checked against the Literal above


def _workload(rw: str, bs: str, numjobs: int, iodepth: int) -> Workload:
    if rw not in _WRITE_MODES:
        raise ConfigError(f"--rw {rw!r}: the search sizes writes; use {' or '.join(_WRITE_MODES)}")
    try:
        size = parse_size(bs)
    except UnitError as exc:
        raise ConfigError(f"--bs {bs!r}: {exc}") from None
    return Workload(rw=rw, bs=size, numjobs=numjobs, iodepth=iodepth)


def build_requirement(
    *,
    rate: str,
    bs: str = "4k",
    rw: str = "randwrite",
    numjobs: int = 1,
    iodepth: int = 1,
    placement: str = "same-zone",
    protocol: str | None = None,
    rpo: str | None = None,
    mean_latency: str | None = None,
    p99_latency: str | None = None,
    duration: str | None = None,
    headroom_pct: float = 0.0,
    clouds: Sequence[str] | str | None = None,
) -> SearchRequirement:
    """The requirement from its text forms, each refused in one line naming its option."""
    if not (headroom_pct >= 0 and math.isfinite(headroom_pct)):
        raise ConfigError(f"--headroom {headroom_pct:g}: must be a percentage >= 0")
    protocols, rpo_s = _protocols(protocol, rpo)
    return SearchRequirement(
        rate=parse_requirement(rate, "--rate"),
        workload=_workload(rw, bs, numjobs, iodepth),
        placement=_placement(placement),
        protocols=protocols,
        rpo_s=rpo_s,
        mean_latency_s=_seconds(mean_latency, "--mean-latency") if mean_latency is not None else None,
        p99_latency_s=_seconds(p99_latency, "--p99") if p99_latency is not None else None,
        duration_s=_seconds(duration, "--duration") if duration is not None else None,
        headroom=headroom_pct / 100,
        clouds=parse_clouds(clouds if isinstance(clouds, str) or clouds is None else ",".join(clouds)),
    )


def placed(catalog: Catalog, requirement: SearchRequirement, explicit: bool) -> SearchRequirement:
    """``requirement`` on the clouds its placement exists on: a zone word on each cloud, a named
    placement (a region pair) on its own cloud only, refused when ``explicit`` clouds exclude it."""
    place = requirement.placement
    if place.rtt_s is not None:
        return requirement
    known = [c for c in CLOUDS if _on(catalog, place.name, c)]
    if not known:
        names = ", ".join(sorted(catalog.placements))
        raise ConfigError(
            f"--placement {place.name!r}: no placement of that name (known: same-zone, cross-zone, rtt=2ms, {names})"
        )
    missing = [c for c in requirement.clouds if c not in known]
    if missing and (explicit or len(missing) == len(requirement.clouds)):
        raise ConfigError(
            f"--placement {place.name!r} is impossible on {', '.join(missing)}: it exists on {', '.join(known)} only"
        )
    return replace(requirement, clouds=tuple(c for c in requirement.clouds if c in known))


def _on(catalog: Catalog, name: str, cloud: str) -> bool:
    key = placement_for(name, cloud)
    return key in catalog.placements and catalog.placements[key].cloud == cloud
