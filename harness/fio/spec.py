"""What a fio workload is, independent of where and how it runs.

A :class:`WorkloadSpec` is the single, validated description of one fio job: pattern, block
size (or range), concurrency, footprint, timing, sync flags and the optional verify and
steady-state settings.  It is frozen so it can key test ids, baselines and samples, and it is
validated at construction so a bad workload is refused with a clear :class:`ConfigError`
*before* anything touches a node (a half-started cell would leave changes to undo).  Turning a
spec into argv is :mod:`harness.fio.command`'s job; this module knows nothing about fio's
command line.

The verify and steady-state settings are :mod:`harness.fio.options`; reading a workload from
configuration text is :mod:`harness.fio.config`; profiles that scale it are
:mod:`harness.fio.profiles`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, Final, Literal, get_args

from harness.errors import ConfigError
from harness.fio.config import workload_fields
from harness.fio.options import SteadyState, VerifySpec
from harness.fio.text import fio_size_text
from harness.units import MIB, format_bytes

__all__ = [
    "DEFAULT_PERCENTILES",
    "DIRECT_ALIGN",
    "LABEL_ZONE_BYTES",
    "RW_MODES",
    "RwMode",
    "WorkloadSpec",
    "precondition_fill",
]

RwMode = Literal["read", "write", "randread", "randwrite", "rw", "randrw"]
RW_MODES: Final[tuple[RwMode, ...]] = get_args(RwMode)
_MIXED_MODES: Final[frozenset[str]] = frozenset({"rw", "randrw"})
_WRITE_MODES: Final[frozenset[str]] = frozenset({"write", "randwrite", "rw", "randrw"})
_RANDOM_MODES: Final[frozenset[str]] = frozenset({"randread", "randwrite", "randrw"})

#: Completion-latency percentiles reported by default; the parser's p50/p90/p99/p99.9 fields
#: come from these.
DEFAULT_PERCENTILES: Final[tuple[float, ...]] = (50.0, 90.0, 99.0, 99.9, 99.99)

# fio's FIO_IO_U_LIST_MAX_LEN: percentile_list holds at most 20 entries.
_MAX_PERCENTILES: Final = 20
# O_DIRECT needs sector-aligned sizes and offsets; 512 is the smallest logical block size.
DIRECT_ALIGN: Final = 512
#: Every job starts this far into its target (fio ``--offset``).  The kernel's partition
#: parsers (msdos, GPT, BSD, Sun, SGI, Atari, Acorn, Ultrix ...) read their labels within the
#: first 32 sectors, and an md array is scanned again each time it is assembled: random data
#: of our own there once read as a label (``md127p9``) and the device guard, rightly, refused
#: the device from then on.  A MiB keeps the alignment of any block size a job uses.
LABEL_ZONE_BYTES: Final = MIB
# A job name becomes fio's --name and part of file names on the node: keep it boring.
_NAME_RE: Final = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")


def _fail(what: str, message: str) -> ConfigError:
    return ConfigError(f"workload {what}: {message}")


@dataclass(frozen=True)
class WorkloadSpec:
    """One fio job, validated.  Sizes are bytes, times are whole seconds.

    ``size`` is per job (fio semantics).  With ``numjobs > 1`` every job covers
    ``[start + i*offset_increment, +size)`` where ``start`` is ``offset`` past the first
    :data:`LABEL_ZONE_BYTES` of the target, which no job writes; without ``offset_increment`` all jobs share one
    region.  ``bs_max`` turns ``bs`` into a ``bsrange`` (``4k-32k``).
    """

    name: str
    rw: RwMode
    size: int
    bs: int = 4096
    bs_max: int | None = None
    numjobs: int = 1
    iodepth: int = 1
    offset: int = 0
    offset_increment: int | None = None
    runtime_s: int | None = None
    ramp_s: int = 0
    time_based: bool = False
    rwmixread: int | None = None
    fsync: int = 0
    sync: bool = False
    end_fsync: bool = False
    norandommap: bool = False
    randseed: int | None = None
    number_ios: int | None = None
    verify: VerifySpec | None = None
    steady_state: SteadyState | None = None
    percentiles: tuple[float, ...] = field(default=DEFAULT_PERCENTILES)

    def __post_init__(self) -> None:
        self._check_name()
        self._check_block_sizes()
        self._check_concurrency()
        self._check_mix_and_sync()
        self._check_seed_and_count()
        self._check_layout()
        self._check_timing()
        self._check_verify()
        self._check_percentiles()

    # -- validation -------------------------------------------------------------------------

    def _check_name(self) -> None:
        if not isinstance(self.name, str) or not _NAME_RE.match(self.name):
            raise ConfigError(
                f"workload name {self.name!r} must be 1-64 characters of letters, digits, '_', '.', '-' "
                "and start with a letter or digit (it becomes fio's --name)"
            )
        if self.rw not in RW_MODES:
            raise _fail(self.name, f"rw must be one of {list(RW_MODES)}, got {self.rw!r}")

    def _check_block_sizes(self) -> None:
        for label, value in (("bs", self.bs), ("bs_max", self.bs_max)):
            if value is not None and (value <= 0 or value % DIRECT_ALIGN):
                raise _fail(
                    self.name,
                    f"{label} must be a positive multiple of {DIRECT_ALIGN} bytes (direct=1), got {value}",
                )
        if self.bs_max is not None and self.bs_max < self.bs:
            raise _fail(self.name, f"bsrange {self.bs}-{self.bs_max}: the upper bound is below the lower bound")

    def _check_concurrency(self) -> None:
        if self.numjobs < 1:
            raise _fail(self.name, f"numjobs must be >= 1, got {self.numjobs}")
        if self.iodepth < 1:
            raise _fail(self.name, f"iodepth must be >= 1, got {self.iodepth}")

    def _check_mix_and_sync(self) -> None:
        what = self.name
        if self.rwmixread is not None:
            if self.rw not in _MIXED_MODES:
                raise _fail(what, f"rwmixread only applies to rw/randrw, not {self.rw}")
            if not 0 <= self.rwmixread <= 100:
                raise _fail(what, f"rwmixread is a percentage 0-100, got {self.rwmixread}")
        if self.fsync < 0:
            raise _fail(what, f"fsync must be >= 0 (fsync every N writes), got {self.fsync}")
        if (self.fsync or self.sync or self.end_fsync) and self.rw not in _WRITE_MODES:
            raise _fail(what, f"fsync/sync/end_fsync need a write workload, not {self.rw}")

    def _check_seed_and_count(self) -> None:
        if self.randseed is not None and self.randseed < 0:
            raise _fail(self.name, f"randseed must be >= 0, got {self.randseed}")
        if self.number_ios is not None and self.number_ios <= 0:
            raise _fail(self.name, f"number_ios must be > 0, got {self.number_ios}")

    def _check_layout(self) -> None:
        what = self.name
        if self.size <= 0:
            raise _fail(what, f"size must be positive, got {self.size}")
        if self.size % DIRECT_ALIGN:
            raise _fail(what, f"size must be a multiple of {DIRECT_ALIGN} bytes (direct=1), got {self.size}")
        if self.size < self.max_bs:
            raise _fail(
                what,
                f"size {format_bytes(self.size)} is smaller than one block of {format_bytes(self.max_bs)}",
            )
        if self.offset < 0 or self.offset % DIRECT_ALIGN:
            raise _fail(what, f"offset must be >= 0 and a multiple of {DIRECT_ALIGN}, got {self.offset}")
        if self.offset_increment is not None and (self.offset_increment < 0 or self.offset_increment % DIRECT_ALIGN):
            raise _fail(
                what,
                f"offset_increment must be >= 0 and a multiple of {DIRECT_ALIGN}, got {self.offset_increment}",
            )

    def _check_timing(self) -> None:
        what = self.name
        if self.runtime_s is not None and self.runtime_s <= 0:
            raise _fail(what, f"runtime must be > 0 s, got {self.runtime_s}")
        if self.ramp_s < 0:
            raise _fail(what, f"ramp must be >= 0 s, got {self.ramp_s}")
        if self.time_based and self.runtime_s is None:
            raise _fail(what, "time_based needs a runtime (otherwise fio would loop forever)")
        ss = self.steady_state
        if ss is not None:
            if self.runtime_s is None:
                raise _fail(what, "steady-state detection needs a runtime as the upper bound of the job")
            if ss.ramp_s + ss.duration_s > self.runtime_s:
                raise _fail(
                    what,
                    f"steady-state window (ss_ramp {ss.ramp_s} s + ss_dur {ss.duration_s} s) exceeds the "
                    f"runtime of {self.runtime_s} s, so it could never be attained",
                )

    def _check_verify(self) -> None:
        what = self.name
        v = self.verify
        if v is None:
            return
        if self.norandommap:
            raise _fail(
                what,
                "verify with norandommap is refused: fio warns not to combine them with async engines "
                "(libaio) because overwritten blocks make verification report false corruption",
            )
        if v.verify_only and self.time_based:
            raise _fail(what, "verify_only cannot be time_based (fio refuses it: there is nothing to repeat)")
        if v.replays_later and self.time_based:
            raise _fail(
                what,
                "a write phase that a later verify_only pass replays must not be time_based: the replay "
                "must issue exactly the same I/O sequence",
            )
        if v.verify_only and self.runtime_s is not None:
            raise _fail(what, "verify_only must not have a runtime: a cap could end verification early and hide loss")
        if self.ramp_s:
            raise _fail(what, "verify workloads must not use ramp_time: the oracle has to count every I/O")
        if v.replays_later and self.rw in _RANDOM_MODES and self.randseed is None:
            raise _fail(
                what,
                "a random workload verified in a separate fio run needs a fixed randseed so both runs "
                "address the same blocks",
            )
        if v.verify_only and self.rw not in _WRITE_MODES:
            raise _fail(what, f"verify_only replays the write workload; rw={self.rw} writes nothing to verify")
        if self.numjobs > 1 and (self.offset_increment is None or self.offset_increment < self.size):
            raise _fail(
                what,
                f"verify with numjobs={self.numjobs} needs disjoint regions (offset_increment >= size "
                f"{format_bytes(self.size)}); jobs overwriting each other's blocks fail verification",
            )

    def _check_percentiles(self) -> None:
        what = self.name
        ps = self.percentiles
        if not ps:
            raise _fail(what, "percentiles must not be empty")
        if len(ps) > _MAX_PERCENTILES:
            raise _fail(what, f"fio reports at most {_MAX_PERCENTILES} percentiles, got {len(ps)}")
        if any(not 0 < p <= 100 for p in ps):
            raise _fail(what, f"percentiles must be in (0, 100], got {list(ps)}")
        if any(round(p, 6) != p for p in ps):
            raise _fail(what, f"percentiles have at most 6 decimals (fio prints them with %f), got {list(ps)}")
        if any(b <= a for a, b in pairwise(ps)):
            raise _fail(what, f"percentiles must be strictly increasing, got {list(ps)}")

    # -- derived values ---------------------------------------------------------------------

    @property
    def max_bs(self) -> int:
        """Largest block this job issues (``bs`` or the top of ``bsrange``)."""
        return self.bs_max if self.bs_max is not None else self.bs

    @property
    def is_write(self) -> bool:
        """True when the job writes (writes are what replication is about, and what guards protect)."""
        return self.rw in _WRITE_MODES

    @property
    def start_bytes(self) -> int:
        """Where the first job starts in the target (fio's ``--offset``)."""
        return LABEL_ZONE_BYTES + self.offset

    @property
    def footprint_bytes(self) -> int:
        """End (exclusive) of the highest byte any job can touch: what the device must hold."""
        step = self.offset_increment or 0
        return self.start_bytes + (self.numjobs - 1) * step + self.size

    def check_fits(self, device_bytes: int) -> None:
        """Refuse a layout that runs past the end of the target (size and offsets vs the device).

        Checked here, before anything runs, so the answer does not depend on how a given fio
        version treats a job past the end of a device; and a device smaller than planned usually
        means the wrong device, so it is an error, not a warning.
        """
        if device_bytes <= 0:
            raise _fail(self.name, f"target size must be positive, got {device_bytes} bytes")
        end = self.footprint_bytes
        if end > device_bytes:
            layout = f"{self.numjobs} job(s) x {format_bytes(self.size)}"
            if self.offset_increment:
                layout += f" every {format_bytes(self.offset_increment)}"
            layout += f" from offset {format_bytes(self.start_bytes)}"
            raise _fail(
                self.name,
                f"{layout} ends at byte {end} ({format_bytes(end)}) but the target holds only "
                f"{device_bytes} bytes ({format_bytes(device_bytes)})",
            )

    def id(self, *, with_size: bool = False) -> str:
        """Readable, stable cell id such as ``randwrite-4k-nj8-qd1``.

        Built only from what shapes the I/O (pattern, block size, concurrency, sync and verify
        flags), not from the profile-dependent runtime, so the same cell keeps its id across
        profiles.  ``with_size`` appends the per-job size (``-1g``) for profiles that sweep sizes.
        """
        rw = f"{self.rw}{self.rwmixread}" if self.rwmixread is not None else self.rw
        bs = fio_size_text(self.bs)
        if self.bs_max is not None:
            bs = f"{bs}-{fio_size_text(self.bs_max)}"
        parts = [rw, bs, f"nj{self.numjobs}", f"qd{self.iodepth}"]
        if self.sync:
            parts.append("sync")
        if self.fsync:
            parts.append(f"fsync{self.fsync}")
        if self.end_fsync:
            parts.append("endfsync")
        if self.norandommap:
            parts.append("norandommap")
        if self.verify is not None:
            parts.append("verifyonly" if self.verify.verify_only else "verify")
        if self.steady_state is not None:
            parts.append("ss")
        if with_size:
            parts.append(fio_size_text(self.size))
        return "-".join(parts)

    def replace(self, **changes: Any) -> WorkloadSpec:
        """A copy with some fields changed, validated again."""
        return dataclasses.replace(self, **changes)

    # -- construction from configuration ----------------------------------------------------

    @classmethod
    def from_mapping(cls, data: Mapping[str, object]) -> WorkloadSpec:
        """Build from inventory/CLI text: ``{"rw": "randwrite", "bs": "4k-32k", "size": "1g", ...}``.

        Accepts human units (``size: 64M``, ``runtime: 5s``, ``bs: 4k`` or a ``bsrange`` such as
        ``4k-32k``), a ``verify`` mapping and ``steady_state`` as ``{criterion: "iops:10%",
        duration: 30s, ramp: 5s}``.  Unknown keys are refused so a typo never silently falls back
        to a default.
        """
        return cls(**workload_fields(data))  # type: ignore[arg-type]


def precondition_fill(device_bytes: int, percent: float, *, bs: int = MIB, iodepth: int = 8) -> WorkloadSpec:
    """Sequential write that fills ``percent`` % of the target (past its label zone, which no
    job writes) before random-write cells.

    The seed studies filled SSDs to 99 % before measuring random writes, because a fresh
    device flatters them; this is that step as an ordinary, size-bound (not time-based) job.
    """
    if not 0 < percent <= 100:
        raise ConfigError(f"fill percentage must be in (0, 100], got {percent}")
    size = int(max(0, device_bytes - LABEL_ZONE_BYTES) * percent / 100) // bs * bs
    if size <= 0:
        raise ConfigError(f"filling {percent} % of {device_bytes} bytes is less than one {fio_size_text(bs)} block")
    spec = WorkloadSpec(name=f"fill-{percent:g}pct", rw="write", size=size, bs=bs, iodepth=iodepth)
    spec.check_fits(device_bytes)
    return spec
