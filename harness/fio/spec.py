"""What a fio workload is, independent of where and how it runs.

A :class:`WorkloadSpec` is the single, validated description of one fio job: pattern, block
size (or range), concurrency, footprint, timing, sync flags and the optional verify and
steady-state settings.  It is frozen so it can key test ids, baselines and samples, and it is
validated at construction so a bad workload is refused with a clear :class:`ConfigError`
*before* anything touches a node (DESIGN "Bad input gets a clear error before any remote
change").  Turning a spec into argv is :mod:`harness.fio.command`'s job; this module knows
nothing about fio's command line.

Profiles (:data:`PROFILES`) are data: ``quick`` for the embedded lab, ``standard`` for CI on
real clusters and ``full`` for the seed study (``-size=1g|3g|6g -runtime=120``).  A profile sets
the scale (runtime, ramp, per-job size) of a base workload and leaves its shape alone, so a
scenario declares *what* it measures once and the profile decides *how long*.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from types import MappingProxyType
from typing import Any, Final, Literal, TypedDict, get_args

from harness.errors import ConfigError
from harness.units import UnitError, format_bytes, parse_duration, parse_size

__all__ = [
    "DEFAULT_PERCENTILES",
    "PROFILES",
    "RW_MODES",
    "SS_METRICS",
    "VERIFY_ALGS",
    "Profile",
    "RwMode",
    "SsMetric",
    "SteadyState",
    "VerifySpec",
    "WorkloadSpec",
    "fio_number_text",
    "fio_size_text",
    "precondition_fill",
]

RwMode = Literal["read", "write", "randread", "randwrite", "rw", "randrw"]
RW_MODES: Final[tuple[RwMode, ...]] = get_args(RwMode)
_MIXED_MODES: Final[frozenset[str]] = frozenset({"rw", "randrw"})
_WRITE_MODES: Final[frozenset[str]] = frozenset({"write", "randwrite", "rw", "randrw"})
_RANDOM_MODES: Final[frozenset[str]] = frozenset({"randread", "randwrite", "randrw"})

SsMetric = Literal["iops", "iops_slope", "bw", "bw_slope"]
SS_METRICS: Final[tuple[SsMetric, ...]] = get_args(SsMetric)

#: Checksums fio 3.33 accepts for ``verify=`` (``fio --cmdhelp=verify``), minus ``meta``
#: (obsolete), ``pattern`` (needs ``verify_pattern``) and ``null`` (pretends to verify, which
#: would make the failover oracle vacuous).
VERIFY_ALGS: Final[frozenset[str]] = frozenset(
    {
        "md5",
        "crc64",
        "crc32",
        "crc32c",
        "crc32c-intel",
        "crc16",
        "crc7",
        "sha1",
        "sha256",
        "sha512",
        "sha3-224",
        "sha3-256",
        "sha3-384",
        "sha3-512",
        "xxhash",
    }
)

#: Completion-latency percentiles reported by default; the parser's p50/p90/p99/p99.9 fields
#: come from these.
DEFAULT_PERCENTILES: Final[tuple[float, ...]] = (50.0, 90.0, 99.0, 99.9, 99.99)

# fio's FIO_IO_U_LIST_MAX_LEN: percentile_list holds at most 20 entries.
_MAX_PERCENTILES: Final = 20
# O_DIRECT needs sector-aligned sizes and offsets; 512 is the smallest logical block size.
_DIRECT_ALIGN: Final = 512
# A job name becomes fio's --name and part of file names on the node: keep it boring.
_NAME_RE: Final = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")


def _fail(what: str, message: str) -> ConfigError:
    return ConfigError(f"workload {what}: {message}")


def fio_size_text(n: int) -> str:
    """Compact fio-style size for ids and messages: ``4096 -> '4k'``, ``1048576 -> '1m'``.

    Uses the largest power-of-1024 unit that divides ``n`` exactly, so the text is lossless
    (fio reads ``4k`` as 4096 with its default ``kb_base=1024``).
    """
    for suffix, factor in (("t", 1024**4), ("g", 1024**3), ("m", 1024**2), ("k", 1024)):
        if n >= factor and n % factor == 0:
            return f"{n // factor}{suffix}"
    return str(n)


def fio_number_text(x: float) -> str:
    """Plain decimal text for fio option values: ``50000000.0 -> '50000000'``, ``99.9 -> '99.9'``.

    ``f"{x:g}"`` would print ``5e+07``, which fio does not read back as the same number.
    """
    return f"{x:.6f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class VerifySpec:
    """fio data verification, as used by the failover oracle (reliability.md §2.4-2.5).

    The write phase runs with ``do_verify=False, state_save=True``; after the fail-over the
    *same* workload runs again with ``verify_only=True, state_load=True`` so only writes that
    completed (were acknowledged) before the primary died are checked.
    """

    alg: str = "crc32c"
    do_verify: bool = True
    verify_only: bool = False
    state_save: bool = True
    state_load: bool = False
    fatal: bool = False
    backlog: int | None = None

    def __post_init__(self) -> None:
        if self.alg not in VERIFY_ALGS:
            raise ConfigError(f"verify: unknown checksum {self.alg!r} (use one of {sorted(VERIFY_ALGS)})")
        if self.state_load and not self.verify_only:
            raise ConfigError(
                "verify: state_load only makes sense with verify_only (it bounds a verify-only pass "
                "to the writes the earlier write phase completed)"
            )
        if self.backlog is not None:
            if self.backlog <= 0:
                raise ConfigError(f"verify: backlog must be a positive number of blocks, got {self.backlog}")
            if self.verify_only:
                raise ConfigError("verify: backlog verifies while writing; a verify_only pass writes nothing")

    @property
    def replays_later(self) -> bool:
        """True when another fio invocation will verify what this one writes (or verifies one).

        Such jobs must be exactly repeatable: fixed seed, no ``time_based``.
        """
        return self.verify_only or (not self.do_verify and self.state_save)


@dataclass(frozen=True)
class SteadyState:
    """fio's steady-state detection (``--ss``, ``--ss_dur``, ``--ss_ramp``), for precondition cells.

    ``metric:limit[%]`` ends the job once the metric stayed within the limit for ``duration_s``
    seconds, after ``ramp_s`` seconds of warm-up; the parser reports whether it was attained.
    """

    metric: SsMetric
    limit: float
    duration_s: int
    percent: bool = True
    ramp_s: int = 0

    def __post_init__(self) -> None:
        if self.metric not in SS_METRICS:
            raise ConfigError(f"steady state: unknown metric {self.metric!r} (use one of {list(SS_METRICS)})")
        if not self.limit > 0:
            raise ConfigError(f"steady state: limit must be > 0, got {self.limit}")
        if self.duration_s <= 0:
            raise ConfigError(f"steady state: duration must be > 0 s, got {self.duration_s}")
        if self.ramp_s < 0:
            raise ConfigError(f"steady state: ramp must be >= 0 s, got {self.ramp_s}")

    @property
    def criterion(self) -> str:
        """The ``--ss`` value, e.g. ``iops:10%`` or ``bw_slope:0.5%``."""
        return f"{self.metric}:{fio_number_text(self.limit)}{'%' if self.percent else ''}"

    @classmethod
    def parse(cls, text: str, *, duration_s: int, ramp_s: int = 0) -> SteadyState:
        """Build from fio's own spelling, ``iops:10%`` / ``bw:50000000``."""
        match = re.fullmatch(r"\s*([a-z_]+)\s*:\s*(\d+(?:\.\d+)?)\s*(%?)\s*", text)
        if not match:
            raise ConfigError(f"steady state: expected METRIC:LIMIT[%] such as 'iops:10%', got {text!r}")
        metric = match[1]
        if metric not in SS_METRICS:
            raise ConfigError(f"steady state: unknown metric {metric!r} (use one of {list(SS_METRICS)})")
        return cls(
            metric=metric,
            limit=float(match[2]),
            percent=bool(match[3]),
            duration_s=duration_s,
            ramp_s=ramp_s,
        )


@dataclass(frozen=True)
class WorkloadSpec:
    """One fio job, validated.  Sizes are bytes, times are whole seconds.

    ``size`` is per job (fio semantics).  With ``numjobs > 1`` every job covers
    ``[offset + i*offset_increment, +size)``; without ``offset_increment`` all jobs share one
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
        self._check_shape()
        self._check_layout()
        self._check_timing()
        self._check_verify()
        self._check_percentiles()

    # -- validation -------------------------------------------------------------------------

    def _check_shape(self) -> None:
        if not isinstance(self.name, str) or not _NAME_RE.match(self.name):
            raise ConfigError(
                f"workload name {self.name!r} must be 1-64 characters of letters, digits, '_', '.', '-' "
                "and start with a letter or digit (it becomes fio's --name)"
            )
        what = self.name
        if self.rw not in RW_MODES:
            raise _fail(what, f"rw must be one of {list(RW_MODES)}, got {self.rw!r}")
        for label, value in (("bs", self.bs), ("bs_max", self.bs_max)):
            if value is None:
                continue
            if value <= 0 or value % _DIRECT_ALIGN:
                raise _fail(
                    what,
                    f"{label} must be a positive multiple of {_DIRECT_ALIGN} bytes (direct=1), got {value}",
                )
        if self.bs_max is not None and self.bs_max < self.bs:
            raise _fail(what, f"bsrange {self.bs}-{self.bs_max}: the upper bound is below the lower bound")
        if self.numjobs < 1:
            raise _fail(what, f"numjobs must be >= 1, got {self.numjobs}")
        if self.iodepth < 1:
            raise _fail(what, f"iodepth must be >= 1, got {self.iodepth}")
        if self.rwmixread is not None:
            if self.rw not in _MIXED_MODES:
                raise _fail(what, f"rwmixread only applies to rw/randrw, not {self.rw}")
            if not 0 <= self.rwmixread <= 100:
                raise _fail(what, f"rwmixread is a percentage 0-100, got {self.rwmixread}")
        if self.fsync < 0:
            raise _fail(what, f"fsync must be >= 0 (fsync every N writes), got {self.fsync}")
        if (self.fsync or self.sync or self.end_fsync) and self.rw not in _WRITE_MODES:
            raise _fail(what, f"fsync/sync/end_fsync need a write workload, not {self.rw}")
        if self.randseed is not None and self.randseed < 0:
            raise _fail(what, f"randseed must be >= 0, got {self.randseed}")
        if self.number_ios is not None and self.number_ios <= 0:
            raise _fail(what, f"number_ios must be > 0, got {self.number_ios}")

    def _check_layout(self) -> None:
        what = self.name
        if self.size <= 0:
            raise _fail(what, f"size must be positive, got {self.size}")
        if self.size % _DIRECT_ALIGN:
            raise _fail(what, f"size must be a multiple of {_DIRECT_ALIGN} bytes (direct=1), got {self.size}")
        if self.size < self.max_bs:
            raise _fail(
                what,
                f"size {format_bytes(self.size)} is smaller than one block of {format_bytes(self.max_bs)}",
            )
        if self.offset < 0 or self.offset % _DIRECT_ALIGN:
            raise _fail(what, f"offset must be >= 0 and a multiple of {_DIRECT_ALIGN}, got {self.offset}")
        if self.offset_increment is not None and (self.offset_increment < 0 or self.offset_increment % _DIRECT_ALIGN):
            raise _fail(
                what,
                f"offset_increment must be >= 0 and a multiple of {_DIRECT_ALIGN}, got {self.offset_increment}",
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
    def footprint_bytes(self) -> int:
        """End (exclusive) of the highest byte any job can touch: what the device must hold."""
        step = self.offset_increment or 0
        return self.offset + (self.numjobs - 1) * step + self.size

    def check_fits(self, device_bytes: int) -> None:
        """Refuse a layout that runs past the end of the target (SAFE-3: size/offset vs the device).

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
            if self.offset:
                layout += f" from offset {format_bytes(self.offset)}"
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
        return _from_mapping(data)


def _whole_seconds(key: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ConfigError(f"workload {key}: expected a duration such as 5s, got {value!r}")
    try:
        seconds = parse_duration(value)
    except UnitError as exc:
        raise ConfigError(f"workload {key}: {exc}") from exc
    if seconds != int(seconds):
        raise ConfigError(f"workload {key}: fio times are whole seconds here, got {value!r}")
    return int(seconds)


def _bytes(key: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ConfigError(f"workload {key}: expected a size such as 4k or 1g, got {value!r}")
    try:
        return parse_size(value)
    except UnitError as exc:
        raise ConfigError(f"workload {key}: {exc}") from exc


def _int(key: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"workload {key}: expected an integer, got {value!r}")
    return value


def _bool(key: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"workload {key}: expected true or false, got {value!r}")
    return value


def _check_keys(where: str, data: Mapping[str, object], allowed: Iterable[str]) -> None:
    allowed_set = set(allowed)
    unknown = sorted(set(data) - allowed_set)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {unknown} (allowed: {sorted(allowed_set)})")


_SIZE_KEYS: Final = frozenset({"size", "offset", "offset_increment"})
_TIME_KEYS: Final = frozenset({"runtime", "ramp"})
_INT_KEYS: Final = frozenset({"numjobs", "iodepth", "rwmixread", "fsync", "randseed", "number_ios"})
_BOOL_KEYS: Final = frozenset({"time_based", "sync", "end_fsync", "norandommap"})
_OTHER_KEYS: Final = frozenset({"name", "rw", "bs", "bsrange", "verify", "steady_state", "percentiles"})
_VERIFY_KEYS: Final = frozenset({"alg", "do_verify", "verify_only", "state_save", "state_load", "fatal", "backlog"})


def _parse_bs(key: str, value: object) -> tuple[int, int | None]:
    if isinstance(value, str) and "-" in value:
        low, _, high = value.partition("-")
        return _bytes(key, low.strip()), _bytes(key, high.strip())
    return _bytes(key, value), None


def _from_mapping(data: Mapping[str, object]) -> WorkloadSpec:
    _check_keys("workload", data, _SIZE_KEYS | _TIME_KEYS | _INT_KEYS | _BOOL_KEYS | _OTHER_KEYS)
    kwargs: dict[str, object] = {}
    for key, value in data.items():
        if key in _SIZE_KEYS:
            kwargs[key] = _bytes(key, value)
        elif key in _TIME_KEYS:
            kwargs["runtime_s" if key == "runtime" else "ramp_s"] = _whole_seconds(key, value)
        elif key in _INT_KEYS:
            kwargs[key] = _int(key, value)
        elif key in _BOOL_KEYS:
            kwargs[key] = _bool(key, value)
    if "bs" in data and "bsrange" in data:
        raise ConfigError("workload: give either bs or bsrange, not both")
    for key in ("bs", "bsrange"):
        if key in data:
            kwargs["bs"], kwargs["bs_max"] = _parse_bs(key, data[key])
    for key in ("name", "rw"):
        if key not in data:
            raise ConfigError(f"workload: missing required key {key!r}")
        if not isinstance(data[key], str):
            raise ConfigError(f"workload {key}: expected text, got {data[key]!r}")
        kwargs[key] = data[key]
    if "size" not in data:
        raise ConfigError("workload: missing required key 'size'")
    if "verify" in data and data["verify"] is not None:
        kwargs["verify"] = _verify_from(data["verify"])
    if "steady_state" in data and data["steady_state"] is not None:
        kwargs["steady_state"] = _steady_state_from(data["steady_state"])
    if "percentiles" in data:
        kwargs["percentiles"] = _percentiles_from(data["percentiles"])
    return WorkloadSpec(**kwargs)  # type: ignore[arg-type]


def _verify_from(value: object) -> VerifySpec:
    if not isinstance(value, Mapping):
        raise ConfigError(f"workload verify: expected a mapping such as {{alg: crc32c}}, got {value!r}")
    _check_keys("workload verify", value, _VERIFY_KEYS)
    kwargs: dict[str, object] = {}
    for key, item in value.items():
        if key == "alg":
            if not isinstance(item, str):
                raise ConfigError(f"workload verify alg: expected text, got {item!r}")
            kwargs[key] = item
        elif key == "backlog":
            kwargs[key] = None if item is None else _int("verify backlog", item)
        else:
            kwargs[key] = _bool(f"verify {key}", item)
    return VerifySpec(**kwargs)  # type: ignore[arg-type]


def _steady_state_from(value: object) -> SteadyState:
    if not isinstance(value, Mapping):
        raise ConfigError(f"workload steady_state: expected {{criterion: 'iops:10%', duration: 30s}}, got {value!r}")
    _check_keys("workload steady_state", value, {"criterion", "duration", "ramp"})
    criterion = value.get("criterion")
    if not isinstance(criterion, str):
        raise ConfigError("workload steady_state: 'criterion' such as 'iops:10%' is required")
    if "duration" not in value:
        raise ConfigError("workload steady_state: 'duration' is required")
    return SteadyState.parse(
        criterion,
        duration_s=_whole_seconds("steady_state duration", value["duration"]),
        ramp_s=_whole_seconds("steady_state ramp", value.get("ramp", 0)),
    )


def _percentiles_from(value: object) -> tuple[float, ...]:
    if not isinstance(value, list | tuple) or not all(
        isinstance(p, int | float) and not isinstance(p, bool) for p in value
    ):
        raise ConfigError(f"workload percentiles: expected a list of numbers, got {value!r}")
    return tuple(float(p) for p in value)


def precondition_fill(device_bytes: int, percent: float, *, bs: int = 1024**2, iodepth: int = 8) -> WorkloadSpec:
    """Sequential write that fills ``percent`` % of the target before random-write cells.

    The seed studies filled SSDs to 99 % before measuring random writes, because a fresh
    device flatters them; this is that step as an ordinary, size-bound (not time-based) job.
    """
    if not 0 < percent <= 100:
        raise ConfigError(f"fill percentage must be in (0, 100], got {percent}")
    size = int(device_bytes * percent / 100) // bs * bs
    if size <= 0:
        raise ConfigError(f"filling {percent} % of {device_bytes} bytes is less than one {fio_size_text(bs)} block")
    spec = WorkloadSpec(name=f"fill-{percent:g}pct", rw="write", size=size, bs=bs, iodepth=iodepth)
    spec.check_fits(device_bytes)
    return spec


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
            increment = increment * new_size // base.size // _DIRECT_ALIGN * _DIRECT_ALIGN
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
            runtime_s=_whole_seconds("runtime", row["runtime"]),
            ramp_s=_whole_seconds("ramp", row["ramp"]),
            sizes=tuple(_bytes("size", s) for s in row["sizes"]),
            description=row["description"],
        )
    return MappingProxyType(profiles)


#: Named profiles, read-only.  ``PROFILES["quick"].apply(spec)``.
PROFILES: Final[Mapping[str, Profile]] = _build_profiles(_PROFILE_TABLE)
