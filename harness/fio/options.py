"""The optional settings of a fio job: data verification and steady-state detection.

Each is frozen and validated at construction, like the :class:`~harness.fio.spec.WorkloadSpec`
that carries it; how they combine with the rest of a job is the workload's check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal, get_args

from harness.errors import ConfigError
from harness.fio.text import fio_number_text

__all__ = ["SS_METRICS", "VERIFY_ALGS", "SsMetric", "SteadyState", "VerifySpec"]

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


@dataclass(frozen=True)
class VerifySpec:
    """fio data verification, as the failover and partition cells use it to count the
    acknowledged writes a fail-over lost.

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
    #: on a bad block, fio writes what it read (``*.received``) and expected in its working
    #: directory: the evidence a human needs to tell lost writes from a harness bug
    dump: bool = False

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
