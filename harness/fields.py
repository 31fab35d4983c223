"""Field types of the frozen pydantic specs (the inventory, the transport's SSH spec).

A duration, size or rate may be written as a number or with a unit (``2ms``, ``4k``,
``128mbit``; :mod:`harness.units`); a path must be absolute.  :class:`FrozenModel` is the base
of every spec: frozen, unknown keys refused (a misspelled key is an error naming the key, never
a silently ignored setting) and every number finite.

The names of a replicated pair (its resource, its devices, its replication protocol) and of a
scratch device are checked twice, by the inventory when it is read and by the product's command builders before a name
reaches a node; both take the patterns here, so a name one accepts the other never refuses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Final, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict

from harness.units import UnitError, parse_duration, parse_rate_bits, parse_size

__all__ = [
    "ARRAY_NAME_PATTERN",
    "DRBD_DEVICE_PATTERN",
    "IFACE_PATTERN",
    "MD_DEVICE_PATTERN",
    "NBD_DEVICE_PATTERN",
    "REPLICATED_DEVICE_PATTERN",
    "RESOURCE_PATTERN",
    "SCRATCH_DEVICE_PATTERN",
    "AbsPath",
    "Duration",
    "FrozenModel",
    "Rate",
    "ReplicationProtocol",
    "Size",
    "reserved_resource_name",
]

#: a replicated write is acknowledged once it is on the local disk and sent (A), received by
#: the peer (B), or on the peer's disk too (C)
ReplicationProtocol = Literal["A", "B", "C"]

# An interface, by the kernel's rule (1..15 bytes, not "." or "..", no '/', ':' or blank) in a
# fixed safe alphabet with no leading '-', so no tool reads it as an option.
_IFNAME_CHAR: Final = r"[A-Za-z0-9_.-]"
IFACE_PATTERN: Final = (
    rf"^([A-Za-z0-9_]{_IFNAME_CHAR}{{0,14}}|\.[A-Za-z0-9_-]{_IFNAME_CHAR}{{0,13}}|\.\.{_IFNAME_CHAR}{{1,13}})$"
)

# A resource: no leading '-' (drbdadm and drbdsetup would read the name as an option).
RESOURCE_PATTERN: Final = r"^[A-Za-z0-9_.+][A-Za-z0-9_.+-]{0,63}$"
_ARRAY_NAME: Final = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}"
_DRBD_DEVICE: Final = r"/dev/drbd[0-9]{1,4}"
_MD_DEVICE: Final = rf"/dev/md/{_ARRAY_NAME}"
#: an md array's name, the last part of its /dev/md/ device
ARRAY_NAME_PATTERN: Final = rf"^{_ARRAY_NAME}$"
DRBD_DEVICE_PATTERN: Final = rf"^{_DRBD_DEVICE}$"
MD_DEVICE_PATTERN: Final = rf"^{_MD_DEVICE}$"
NBD_DEVICE_PATTERN: Final = r"^/dev/nbd[0-9]{1,3}$"
#: a raw scratch device of a disk-only study: a plain kernel name only, never an alias that could
#: resolve somewhere else (by-id/by-uuid links are resolved and checked on the node instead)
SCRATCH_DEVICE_PATTERN: Final = r"^/dev/[a-z][a-z0-9]{1,31}$"
REPLICATED_DEVICE_PATTERN: Final = rf"^({_DRBD_DEVICE}|{_MD_DEVICE})$"


def reserved_resource_name(name: str) -> bool:
    """Whether ``name`` is drbdadm's word for every resource (``all``, in any case), which must
    never be reachable from a typo (``drbdadm down all``)."""
    return name.lower() == "all"


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
