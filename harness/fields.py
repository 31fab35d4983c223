"""Field types of the frozen pydantic specs (the inventory, the transport's SSH spec).

A duration, size or rate may be written as a number or with a unit (``2ms``, ``4k``,
``128mbit``; :mod:`harness.units`); a path must be absolute.  :class:`FrozenModel` is the base
of every spec: frozen, unknown keys refused (a misspelled key is an error naming the key, never
a silently ignored setting) and every number finite.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict

from harness.units import UnitError, parse_duration, parse_rate_bits, parse_size

__all__ = ["AbsPath", "Duration", "FrozenModel", "Rate", "Size"]


def _duration(value: object) -> float:
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        try:
            return parse_duration(value)
        except UnitError as exc:
            raise ValueError(str(exc)) from None
    raise ValueError(f"expected a duration such as 2ms or 1.5s, got {value!r}")


def _size(value: object) -> int:
    if isinstance(value, str | int) and not isinstance(value, bool):
        try:
            return parse_size(value)
        except UnitError as exc:
            raise ValueError(str(exc)) from None
    raise ValueError(f"expected a size such as 4k, 2GiB, got {value!r}")


def _rate(value: object) -> float:
    if isinstance(value, str):
        try:
            return parse_rate_bits(value)
        except UnitError as exc:
            raise ValueError(str(exc)) from None
    raise ValueError(f"expected a rate such as 128mbit or 40MB/s, got {value!r}")


def _absolute(path: Path) -> Path:
    if not path.is_absolute():
        raise ValueError(f"must be an absolute path, got {str(path)!r}")
    return path


Duration = Annotated[float, BeforeValidator(_duration)]
Size = Annotated[int, BeforeValidator(_size)]
Rate = Annotated[float, BeforeValidator(_rate)]
AbsPath = Annotated[Path, AfterValidator(_absolute)]


class FrozenModel(BaseModel):
    # allow_inf_nan: every number of an inventory is finite (an `inf` minimum fails every
    # cell; `nan` compares false with everything, so a `nan` bound judges nothing)
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
