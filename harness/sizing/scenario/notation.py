"""The text forms of the sizing question, as a user writes them on the command line and in an
inventory (``gp3:500GiB:6000:500``, ``randwrite:4k:numjobs=8``, ``rtt=2ms``): :func:`parse_volume`
and :func:`format_volume` are the two directions of one notation.
"""

from __future__ import annotations

import math
import re

from harness.errors import ConfigError
from harness.sizing.scenario.question import RW_MODES, VolumeSpec, Workload
from harness.units import GIB, MIB, UnitError, parse_duration, parse_rate_bits, parse_size

__all__ = ["format_volume", "parse_placement", "parse_volume", "parse_workload", "positive_number"]


def positive_number(text: str, what: str) -> float:
    """``text`` as a positive finite number; errors name ``what``."""
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"{what} must be a number, got {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise ConfigError(f"{what} must be positive, got {text!r}")
    return value


#: ``4xgp3``: a RAID0 of four volumes of the type
_STRIPED = re.compile(r"(\d+)x(.+)")


def parse_volume(text: str, option: str = "--volume") -> VolumeSpec:
    """``[Nx]TYPE:SIZE[:IOPS[:MiBps]]`` (bare SIZE in GiB; MiBps a number or a rate like 500MiB/s;
    ``Nx`` a RAID0 of N such volumes).

    Errors start with ``option`` and the text (``--volume 'gp3:x'``); an inventory passes
    ``option=""``, as its error already names the key.
    """
    where = f"{option} {text!r}".strip()
    parts = text.split(":")
    if not parts[0] or len(parts) > 4:
        raise ConfigError(f"{where}: expected TYPE:SIZE[:IOPS[:MiBps]], e.g. gp2:100GiB")
    size = None
    if len(parts) > 1 and parts[1]:
        raw = parts[1].strip()
        try:
            size = float(raw) if raw.replace(".", "", 1).isdigit() else parse_size(raw) / GIB
        except UnitError as exc:
            if not raw.startswith("-"):
                raise ConfigError(f"{where}: {exc}") from None
            size = -1.0  # a negative size: said below, the same as zero
        if not (size > 0 and math.isfinite(size)):
            raise ConfigError(f"{where}: size must be a positive number, e.g. {parts[0]}:100GiB")
    iops = positive_number(parts[2], "volume IOPS") if len(parts) > 2 and parts[2] else None
    mib_s = None
    if len(parts) > 3 and parts[3]:
        raw = parts[3].strip()
        try:
            mib_s = (
                positive_number(raw, "volume MiBps")
                if raw.replace(".", "", 1).isdigit()
                else parse_rate_bits(raw) / 8 / MIB
            )
        except UnitError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    striped = _STRIPED.fullmatch(parts[0])
    if striped is None:
        return VolumeSpec(parts[0], size, iops, mib_s)
    try:
        return VolumeSpec(striped[2], size, iops, mib_s, int(striped[1]))
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def parse_workload(text: str) -> Workload:
    """``RW:BS[:numjobs=N][:iodepth=D][:rwmixread=P]`` as fio spells them."""
    parts = text.split(":")
    if len(parts) < 2:
        raise ConfigError(f"--workload {text!r}: expected RW:BS[:numjobs=N][:iodepth=D], e.g. randwrite:4k")
    rw, bs_text = parts[0].strip(), parts[1].strip()
    if rw not in RW_MODES:
        raise ConfigError(f"--workload {text!r}: rw must be one of {', '.join(RW_MODES)}")
    try:
        bs = parse_size(bs_text)
    except UnitError as exc:
        raise ConfigError(f"--workload {text!r}: {exc}") from None
    options: dict[str, int] = {}
    for item in parts[2:]:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in ("numjobs", "iodepth", "rwmixread"):
            raise ConfigError(f"--workload {text!r}: unknown option {item!r} (numjobs=N, iodepth=D, rwmixread=P)")
        if key in options:
            raise ConfigError(f"--workload {text!r}: {key} given twice")
        try:
            options[key] = int(value)
        except ValueError:
            raise ConfigError(f"--workload {text!r}: {key} must be a whole number") from None
    return Workload(rw=rw, bs=bs, **options)


def parse_placement(text: str) -> tuple[str, float | None]:
    """A catalog placement name (a region pair ``region:us-east-1/us-west-2`` too), or ``rtt=2ms``
    for an explicit round trip."""
    if text.startswith("rtt="):
        try:
            return "custom", parse_duration(text[4:])
        except UnitError as exc:
            raise ConfigError(f"--placement {text!r}: {exc}") from None
    return text, None


def format_volume(spec: VolumeSpec) -> str:
    """``spec`` written back as :func:`parse_volume` reads it (``gp3:500GiB:6000:500``, ``4xgp3:500GiB``)."""
    parts = [spec.type if spec.stripes == 1 else f"{spec.stripes}x{spec.type}"]
    if spec.size_gib is not None:
        parts.append(f"{spec.size_gib:g}GiB")
    if spec.iops is not None:
        parts.append(f"{spec.iops:g}")
    if spec.mib_s is not None:
        parts.append(f"{spec.mib_s:g}")
    return ":".join(parts)
