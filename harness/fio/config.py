"""Reading a workload from configuration text: human units, nested verify/steady-state
mappings, and unknown keys refused so a typo never silently falls back to a default.

:func:`workload_fields` turns such a mapping into the keyword arguments of
:class:`~harness.fio.spec.WorkloadSpec` (which validates them); :func:`whole_seconds` and
:func:`size_bytes` read one duration or size the same way for other tables of fio settings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Final

from harness.errors import ConfigError
from harness.fio.options import SteadyState, VerifySpec
from harness.units import UnitError, parse_duration, parse_size

__all__ = ["size_bytes", "whole_seconds", "workload_fields"]


def whole_seconds(key: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ConfigError(f"workload {key}: expected a duration such as 5s, got {value!r}")
    try:
        seconds = parse_duration(value)
    except UnitError as exc:
        raise ConfigError(f"workload {key}: {exc}") from exc
    if seconds != int(seconds):
        raise ConfigError(f"workload {key}: fio times are whole seconds here, got {value!r}")
    return int(seconds)


def size_bytes(key: str, value: object) -> int:
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


#: The keys that hold one plain value: the spec's field each fills and how it is read.
_SCALARS: Final[Mapping[str, tuple[str, Callable[[str, object], object]]]] = {
    "size": ("size", size_bytes),
    "offset": ("offset", size_bytes),
    "offset_increment": ("offset_increment", size_bytes),
    "runtime": ("runtime_s", whole_seconds),
    "ramp": ("ramp_s", whole_seconds),
    **{key: (key, _int) for key in ("numjobs", "iodepth", "rwmixread", "fsync", "randseed", "number_ios")},
    **{key: (key, _bool) for key in ("time_based", "sync", "end_fsync", "norandommap")},
}
_OTHER_KEYS: Final = frozenset({"name", "rw", "bs", "bsrange", "verify", "steady_state", "percentiles"})
_VERIFY_KEYS: Final = frozenset(
    {"alg", "do_verify", "verify_only", "state_save", "state_load", "fatal", "backlog", "dump"}
)


def _parse_bs(key: str, value: object) -> tuple[int, int | None]:
    if isinstance(value, str) and "-" in value:
        low, _, high = value.partition("-")
        return size_bytes(key, low.strip()), size_bytes(key, high.strip())
    return size_bytes(key, value), None


def workload_fields(data: Mapping[str, object]) -> dict[str, object]:
    """The keyword arguments of :class:`~harness.fio.spec.WorkloadSpec` that ``data`` spells."""
    _check_keys("workload", data, _SCALARS.keys() | _OTHER_KEYS)
    kwargs: dict[str, object] = {}
    for key, value in data.items():
        if key in _SCALARS:
            field, read = _SCALARS[key]
            kwargs[field] = read(key, value)
    kwargs.update(_block_size(data))
    kwargs.update(_name_and_pattern(data))
    if "size" not in data:
        raise ConfigError("workload: missing required key 'size'")
    kwargs.update(_settings(data))
    return kwargs


def _block_size(data: Mapping[str, object]) -> dict[str, object]:
    """``bs`` (one size, or ``4k-32k``) or ``bsrange``, never both."""
    if "bs" in data and "bsrange" in data:
        raise ConfigError("workload: give either bs or bsrange, not both")
    for key in ("bs", "bsrange"):
        if key in data:
            bs, bs_max = _parse_bs(key, data[key])
            return {"bs": bs, "bs_max": bs_max}
    return {}


def _name_and_pattern(data: Mapping[str, object]) -> dict[str, object]:
    """The two texts every workload names: ``name`` and ``rw``."""
    texts: dict[str, object] = {}
    for key in ("name", "rw"):
        if key not in data:
            raise ConfigError(f"workload: missing required key {key!r}")
        if not isinstance(data[key], str):
            raise ConfigError(f"workload {key}: expected text, got {data[key]!r}")
        texts[key] = data[key]
    return texts


def _settings(data: Mapping[str, object]) -> dict[str, object]:
    """The nested verify and steady-state mappings (null: none) and the percentile list."""
    settings: dict[str, object] = {}
    if data.get("verify") is not None:
        settings["verify"] = _verify_from(data["verify"])
    if data.get("steady_state") is not None:
        settings["steady_state"] = _steady_state_from(data["steady_state"])
    if "percentiles" in data:
        settings["percentiles"] = _percentiles_from(data["percentiles"])
    return settings


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
        duration_s=whole_seconds("steady_state duration", value["duration"]),
        ramp_s=whole_seconds("steady_state ramp", value.get("ramp", 0)),
    )


def _percentiles_from(value: object) -> tuple[float, ...]:
    if not isinstance(value, list | tuple) or not all(
        isinstance(p, int | float) and not isinstance(p, bool) for p in value
    ):
        raise ConfigError(f"workload percentiles: expected a list of numbers, got {value!r}")
    return tuple(float(p) for p in value)
