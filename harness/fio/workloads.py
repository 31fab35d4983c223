"""The workload shapes the scenarios use; ``--profile`` scales their size and duration.

Kept in the library rather than in ``scenarios/`` so scenarios stay thin and the ids
(``randwrite-4k-nj8-qd1``) are the same in every scenario, table and baseline.
"""

from __future__ import annotations

from typing import Literal

from harness.fio.profiles import Profile
from harness.fio.spec import RwMode, WorkloadSpec
from harness.units import MIB

__all__ = ["for_profile", "io_job", "write_job"]

WriteMode = Literal["write", "randwrite"]


def write_job(rw: WriteMode, bs: int, numjobs: int = 1, iodepth: int = 1) -> WorkloadSpec:
    """A time-based write job (``direct=1``, libaio); each job writes its own region."""
    return io_job(rw, bs, numjobs, iodepth)


def io_job(rw: RwMode, bs: int, numjobs: int = 1, iodepth: int = 1, bs_max: int | None = None) -> WorkloadSpec:
    """A time-based job of any pattern (reads only ever run on scratch devices, see the disk
    studies); each job covers its own region; ``bs_max`` makes it a ``bsrange``."""
    size = 64 * MIB
    return WorkloadSpec(
        name=rw,
        rw=rw,
        bs=bs,
        bs_max=bs_max,
        numjobs=numjobs,
        iodepth=iodepth,
        size=size,
        offset_increment=size if numjobs > 1 else None,
        time_based=True,
        runtime_s=5,
        ramp_s=1,
    )


def for_profile(profile: Profile, base: WorkloadSpec) -> WorkloadSpec:
    """``base`` at the profile's runtime, ramp and (first) size."""
    return profile.apply(base)
