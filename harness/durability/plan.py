"""The randomized crash trials' plan: which trials a run makes, reproducible from seeds.

A plan is ``count`` trials drawn from a :class:`TrialSpace` (product × protocol × placement ×
workload × crash moment × fault).  Each trial has a seed of its own, derived from the plan's
seed and its index; :func:`trial_of` rebuilds the whole trial from that seed alone, so a
failing trial is rerun (and minimized) from one number, without the plan that made it.

A plan draws every trial independently of the others: the same seed gives the same trials in
the same order, and a longer plan starts with a shorter one's trials.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, get_args

from harness.units import KIB, MIB

__all__ = [
    "DEFAULT_SPACE",
    "FAULTS",
    "PRODUCTS",
    "PROTOCOLS",
    "Fault",
    "Placement",
    "Product",
    "Trial",
    "TrialSpace",
    "Workload",
    "harness_protocol",
    "plan",
    "trial_of",
    "trial_seed",
]

Product = Literal["drbd", "md-nbd"]
Placement = Literal["same-az", "cross-az"]
#: what the trial does to the pair while the workload writes:
#: ``primary-crash`` the writer's node; ``peer-crash`` the replica; ``power-cut`` both at once;
#: ``resync-crash`` the primary while the peer resyncs from it; ``heal-crash`` the primary just
#: after a partition of the replication path heals (the peer is behind, resync starting);
#: ``new-primary-crash`` the peer promoted by a failover, once it writes as primary
Fault = Literal["primary-crash", "peer-crash", "power-cut", "resync-crash", "heal-crash", "new-primary-crash"]

PRODUCTS: Final[tuple[Product, ...]] = get_args(Product)
FAULTS: Final[tuple[Fault, ...]] = get_args(Fault)
#: the replication modes of each product: DRBD's three protocols, md's synchronous RAID1 and
#: its write-behind (the NBD leg write-mostly, writes to it completing before the peer has them)
PROTOCOLS: Final[dict[Product, tuple[str, ...]]] = {"drbd": ("C", "B", "A"), "md-nbd": ("sync", "write-behind")}
#: the protocol letter the harness's protocol switch takes for a mode (md-nbd: C is synchronous)
_SWITCH: Final = {"sync": "C", "write-behind": "A"}

#: cross-AZ trials add a one-way delay so the round trip grows by up to this much
MAX_ADDED_RTT_MS: Final = 10.0
_SEED_BITS: Final = 63


@dataclass(frozen=True)
class Workload:
    """The writer's shape: block size, writes in flight per job, jobs."""

    bs: int
    iodepth: int
    numjobs: int

    def describe(self) -> str:
        size = f"{self.bs // MIB}m" if self.bs % MIB == 0 else f"{self.bs // KIB}k"
        return f"randwrite-{size}-qd{self.iodepth}-nj{self.numjobs}"


@dataclass(frozen=True)
class TrialSpace:
    """What trials are drawn from (each choice uniform over its values)."""

    products: tuple[Product, ...] = PRODUCTS
    placements: tuple[Placement, ...] = ("same-az", "cross-az")
    faults: tuple[Fault, ...] = FAULTS
    block_sizes: tuple[int, ...] = (4 * KIB, 16 * KIB, 64 * KIB, 1 * MIB)
    iodepths: tuple[int, ...] = (1, 4, 16, 32)
    numjobs: tuple[int, ...] = (1, 2, 4)
    max_added_rtt_ms: float = MAX_ADDED_RTT_MS

    def __post_init__(self) -> None:
        for name in ("products", "placements", "faults", "block_sizes", "iodepths", "numjobs"):
            if not getattr(self, name):
                raise ValueError(f"trial space: {name} is empty, a trial needs at least one")
        if not 0.0 <= self.max_added_rtt_ms <= MAX_ADDED_RTT_MS:
            raise ValueError(f"trial space: max_added_rtt_ms {self.max_added_rtt_ms} is outside 0..{MAX_ADDED_RTT_MS}")


DEFAULT_SPACE: Final = TrialSpace()


@dataclass(frozen=True)
class Trial:
    """One crash trial, everything needed to run it again."""

    seed: int
    product: Product
    protocol: str
    placement: Placement
    #: round trip added on the replication path (0 on a same-AZ trial)
    added_rtt_ms: float
    workload: Workload
    #: when the fault strikes, as a share of the workload's writes acknowledged (0 < x < 1)
    crash_at: float
    fault: Fault

    @property
    def trial_id(self) -> str:
        """A short name of the trial, the same wherever it is rebuilt from its seed."""
        return f"t{self.seed:016x}"

    @property
    def synchronous(self) -> bool:
        """A mode whose acknowledgement waits for the peer's disk: it must lose nothing."""
        return self.protocol in ("C", "sync")

    @property
    def switch_protocol(self) -> str:
        """The letter the harness's protocol switch sets for this mode."""
        return _SWITCH.get(self.protocol, self.protocol)


def trial_seed(plan_seed: int, index: int) -> int:
    """The seed of trial ``index`` of the plan seeded ``plan_seed`` (well spread, never negative)."""
    digest = hashlib.sha256(f"durability-plan/{plan_seed}/{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - _SEED_BITS)


def _pick(rng: random.Random, values: Sequence[str]) -> str:
    return values[rng.randrange(len(values))]


def trial_of(seed: int, space: TrialSpace = DEFAULT_SPACE) -> Trial:
    """The trial seeded ``seed``: every choice drawn, in a fixed order, from a generator seeded
    with it alone."""
    if not 0 <= seed < 2**_SEED_BITS:
        raise ValueError(f"trial seed {seed} is outside 0..2**{_SEED_BITS}-1")
    rng = random.Random(seed)
    product = space.products[rng.randrange(len(space.products))]
    protocol = _pick(rng, PROTOCOLS[product])
    placement = space.placements[rng.randrange(len(space.placements))]
    rtt = round(rng.uniform(0.0, space.max_added_rtt_ms), 3)
    workload = Workload(
        bs=space.block_sizes[rng.randrange(len(space.block_sizes))],
        iodepth=space.iodepths[rng.randrange(len(space.iodepths))],
        numjobs=space.numjobs[rng.randrange(len(space.numjobs))],
    )
    # uniform over the open interval: a crash before the first or after the last write tests nothing
    crash_at = min(max(rng.random(), 1e-6), 1.0 - 1e-6)
    fault = space.faults[rng.randrange(len(space.faults))]
    return Trial(
        seed=seed,
        product=product,
        protocol=protocol,
        placement=placement,
        added_rtt_ms=rtt if placement == "cross-az" else 0.0,
        workload=workload,
        crash_at=crash_at,
        fault=fault,
    )


def plan(seed: int, count: int, space: TrialSpace = DEFAULT_SPACE) -> list[Trial]:
    """``count`` trials of the plan seeded ``seed``."""
    if count < 0:
        raise ValueError(f"trial count {count} is negative")
    return [trial_of(trial_seed(seed, i), space) for i in range(count)]


def harness_protocol(product: Product, protocol: str) -> str:
    """The protocol switch's letter for ``protocol`` of ``product`` (ValueError if it has none)."""
    if protocol not in PROTOCOLS[product]:
        raise ValueError(f"{product} has no mode {protocol!r}; it has {', '.join(PROTOCOLS[product])}")
    return _SWITCH.get(protocol, protocol)
