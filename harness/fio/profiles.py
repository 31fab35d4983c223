"""Profiles: how long and how big every cell of a run is, as data.

:data:`PROFILES` holds ``quick`` for the embedded lab, ``standard`` for CI on real clusters and
``full`` for the seed study (``-size=1g|3g|6g -runtime=120``).  A profile sets the scale
(runtime, ramp, per-job size) of a base workload and leaves its shape alone, so a scenario
declares *what* it measures once and the profile decides *how long*.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, TypedDict

from harness.errors import ConfigError
from harness.fio.config import size_bytes, whole_seconds
from harness.fio.spec import DIRECT_ALIGN, WorkloadSpec
from harness.fio.text import fio_size_text

__all__ = ["PROFILES", "Profile", "profile_hint"]


@dataclass(frozen=True)
class Profile:
    """How long and how big every cell of a run is; see :data:`PROFILES`."""

    name: str
    runtime_s: int
    ramp_s: int
    sizes: tuple[int, ...]
    description: str

    def __post_init__(self) -> None:
        if self.runtime_s <= 0 or self.ramp_s < 0 or not self.sizes or any(s <= 0 for s in self.sizes):
            raise ConfigError(f"profile {self.name!r}: runtime > 0, ramp >= 0 and positive sizes are required")

    def apply(self, base: WorkloadSpec, size: int | None = None) -> WorkloadSpec:
        """``base`` scaled to this profile: runtime, ramp and per-job size (default: the first).

        The workload's shape (pattern, bs, jobs, depth, flags) is kept; ``offset_increment`` is
        scaled with the size so disjoint per-job regions stay disjoint.  Verify workloads get
        no ramp and (for ``verify_only``) no runtime cap, because the data-loss oracle must see
        every I/O.
        """
        new_size = self.sizes[0] if size is None else size
        if size is not None and size not in self.sizes:
            raise ConfigError(f"profile {self.name!r} has sizes {[fio_size_text(s) for s in self.sizes]}, not {size}")
        increment = base.offset_increment
        if increment is not None:
            increment = increment * new_size // base.size // DIRECT_ALIGN * DIRECT_ALIGN
        runtime: int | None = self.runtime_s
        ramp = self.ramp_s
        if base.verify is not None:
            ramp = 0
            if base.verify.verify_only:
                runtime = None
        return base.replace(size=new_size, offset_increment=increment, runtime_s=runtime, ramp_s=ramp)

    def expand(self, base: WorkloadSpec) -> tuple[WorkloadSpec, ...]:
        """One workload per profile size (``full`` sweeps 1g/3g/6g like the seed study)."""
        return tuple(self.apply(base, size) for size in self.sizes)


class _ProfileRow(TypedDict):
    runtime: str
    ramp: str
    sizes: tuple[str, ...]
    description: str


# Data, not code: add a profile by adding a row.
_PROFILE_TABLE: Final[dict[str, _ProfileRow]] = {
    "quick": {
        "runtime": "5s",
        "ramp": "1s",
        "sizes": ("64M",),
        "description": "embedded lab: seconds per cell, small footprint",
    },
    "standard": {
        "runtime": "30s",
        "ramp": "5s",
        "sizes": ("1G",),
        "description": "CI gate on real clusters: long enough to leave burst behaviour, GB footprint",
    },
    "full": {
        "runtime": "120s",
        "ramp": "10s",
        "sizes": ("1G", "3G", "6G"),
        "description": "seed study: -size=1g|3g|6g -runtime=120 per cell (plus a ramp the seed lacked)",
    },
}


def _build_profiles(table: Mapping[str, _ProfileRow]) -> Mapping[str, Profile]:
    profiles: dict[str, Profile] = {}
    for name, row in table.items():
        profiles[name] = Profile(
            name=name,
            runtime_s=whole_seconds("runtime", row["runtime"]),
            ramp_s=whole_seconds("ramp", row["ramp"]),
            sizes=tuple(size_bytes("size", s) for s in row["sizes"]),
            description=row["description"],
        )
    return MappingProxyType(profiles)


#: Named profiles, read-only.  ``PROFILES["quick"].apply(spec)``.
PROFILES: Final[Mapping[str, Profile]] = _build_profiles(_PROFILE_TABLE)


def profile_hint(workload: WorkloadSpec, capacity_bytes: int) -> str | None:
    """Which profiles scale ``workload`` to fit ``capacity_bytes`` (a device too small for this
    run's profile), as advice for a refusal; None when none does."""
    fitting = [(p.name, p.apply(workload).footprint_bytes) for p in PROFILES.values()]
    fitting = [(name, size) for name, size in fitting if size <= capacity_bytes]
    if not fitting:
        return None
    return "; ".join(f"--profile {name} fits (its job writes {size} bytes)" for name, size in fitting)
