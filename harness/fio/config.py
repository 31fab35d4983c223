"""Reading a workload from configuration text: human units, nested verify/steady-state
mappings, and unknown keys refused so a typo never silently falls back to a default.

:func:`workload_fields` turns such a mapping into the keyword arguments of
:class:`~harness.fio.spec.WorkloadSpec` (which validates them); :func:`whole_seconds` and
:func:`size_bytes` read one duration or size the same way for other tables of fio settings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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


_SIZE_KEYS: Final = frozenset({"size", "offset", "offset_increment"})
_TIME_KEYS: Final = frozenset({"runtime", "ramp"})
_INT_KEYS: Final = frozenset({"numjobs", "iodepth", "rwmixread", "fsync", "randseed", "number_ios"})
_BOOL_KEYS: Final = frozenset({"time_based", "sync", "end_fsync", "norandommap"})
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
    _check_keys("workload", data, _SIZE_KEYS | _TIME_KEYS | _INT_KEYS | _BOOL_KEYS | _OTHER_KEYS)
    kwargs: dict[str, object] = {}
    for key, value in data.items():
        if key in _SIZE_KEYS:
            kwargs[key] = size_bytes(key, value)
        elif key in _TIME_KEYS:
            kwargs["runtime_s" if key == "runtime" else "ramp_s"] = whole_seconds(key, value)
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
    return kwargs


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
