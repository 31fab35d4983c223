"""The clouds' zone-redundant volumes as comparators beside DRBD and md-nbd.

A customer asked for synchronous replication across zones can buy it from the provider instead
of building it: Google's Hyperdisk Balanced High Availability (gen-3 machines and later) and
regional Persistent Disk (earlier ones), both across two zones, and Azure's ZRS Premium SSD
across three (Premium SSD v2 has no ZRS; the table says so).  Their published limits are in
``catalog/zone-redundant.yaml`` with sources; :func:`compare` says for each whether it carries a
required write rate on one volume, and which published limit refuses it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from importlib import resources
from typing import Annotated, Literal

import yaml
from pydantic import Field, ValidationError

from harness.errors import ConfigError
from harness.sizing.catalog.records import CatalogRecord, PositiveFloat, SourceList
from harness.userfiles.yamlsafe import construct_yaml_text

__all__ = ["Comparison", "ZoneRedundant", "compare", "load_zone_redundant"]


class ZoneRedundant(CatalogRecord):
    """One provider volume that replicates synchronously across zones, with its sources."""

    cloud: str
    zones: Annotated[int, Field(ge=2)]
    max_iops: PositiveFloat | None = None
    max_mib_s: PositiveFloat | None = None
    machines: str
    #: the machine series that attach it (``None``: any that takes the zonal type)
    machine_families: list[str] | None = None
    exists: bool
    verified: bool
    note: str
    sources: SourceList
    read: dt.date


class _Table(CatalogRecord):
    schema_version: Literal[1]
    volumes: dict[str, ZoneRedundant]


@dataclass(frozen=True)
class Comparison:
    """Whether one zone-redundant volume carries the rate, and why not when it does not."""

    name: str
    volume: ZoneRedundant
    verdict: Literal["meets", "refused", "unknown"]
    reason: str


def load_zone_redundant() -> dict[str, ZoneRedundant]:
    """The built-in table of zone-redundant volumes."""
    origin = "<builtin>/zone-redundant.yaml"
    text = resources.files("harness.sizing.catalog").joinpath("zone-redundant.yaml").read_text(encoding="utf-8")
    data = construct_yaml_text(text, origin, yaml.SafeLoader, finite=True)
    try:
        return _Table.model_validate(data).volumes
    except ValidationError as exc:
        raise ConfigError(f"{origin}: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}") from None


def _verdict(
    volume: ZoneRedundant, iops: float, mib_s: float, family: str | None
) -> tuple[Literal["meets", "refused", "unknown"], str]:
    if not volume.exists:
        return "refused", "not offered by the provider"
    if family is not None and volume.machine_families is not None and family not in volume.machine_families:
        return (
            "refused",
            f"not offered on {family.upper()} (only {', '.join(f.upper() for f in volume.machine_families)})",
        )
    if volume.max_iops is None or volume.max_mib_s is None:
        return "unknown", "per-volume limits are the zonal type's; size it as that type"
    if iops > volume.max_iops:
        return "refused", f"{iops:,.0f} IOPS is above its {volume.max_iops:,.0f} per volume"
    if mib_s > volume.max_mib_s:
        return "refused", f"{mib_s:,.0f} MiB/s is above its {volume.max_mib_s:,.0f} per volume"
    return "meets", f"within {volume.max_iops:,.0f} IOPS and {volume.max_mib_s:,.0f} MiB/s per volume"


def compare(iops: float, mib_s: float, cloud: str | None = None, family: str | None = None) -> list[Comparison]:
    """Every zone-redundant volume (of ``cloud``, or all) against a write rate of ``iops`` and
    ``mib_s`` on a machine of ``family`` (``None``: whatever machine takes it)."""
    if iops < 0 or mib_s < 0:
        raise ConfigError(f"a required rate must not be negative, got {iops} IOPS and {mib_s} MiB/s")
    rows = []
    for name, volume in load_zone_redundant().items():
        if cloud is None or volume.cloud == cloud:
            verdict, reason = _verdict(volume, iops, mib_s, family)
            rows.append(Comparison(name, volume, verdict, reason))
    return rows
