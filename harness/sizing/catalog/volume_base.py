"""What every volume record has, whatever cloud and performance model: size bounds, I/O unit,
latency, list price and provenance.  The AWS models are :mod:`~harness.sizing.catalog.volume_types`,
the Google Cloud ones :mod:`~harness.sizing.catalog.gcp_disks`, the Azure ones
:mod:`~harness.sizing.catalog.azure_disks`.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from pydantic import Field

from harness.sizing.catalog.records import CatalogRecord, FigureSource, NonNegativeFloat, PositiveFloat, SourceList

__all__ = ["Latency", "VolumeBase", "VolumePrice"]


class Latency(CatalogRecord):
    """Typical per-I/O service time of a volume at low queue depth (4 KiB)."""

    write_ms: PositiveFloat
    read_ms: PositiveFloat
    estimate: bool = False
    note: str = ""


class VolumePrice(CatalogRecord):
    """List price of a volume in one region: capacity, and IOPS / throughput above what is included."""

    usd_per_gib_month: NonNegativeFloat
    usd_per_iops_month: NonNegativeFloat = 0
    included_iops: NonNegativeFloat = 0
    usd_per_mib_s_month: NonNegativeFloat = 0
    included_mib_s: NonNegativeFloat = 0
    region: str
    sources: SourceList
    as_of: dt.date
    verified: bool = True


class VolumeBase(CatalogRecord):
    """Fields every volume type has, whatever its performance model."""

    description: str = ""
    cloud: str = "aws"
    min_size_gib: PositiveFloat | None = None
    max_size_gib: PositiveFloat | None = None
    io_unit_kib: Annotated[int, Field(gt=0, description="largest I/O counted as one operation against the IOPS limit")]
    network_attached: bool = Field(
        default=True,
        description="reached over the instance's EBS link (or its NIC when not EBS-optimized); false for local disks",
    )
    latency: Latency
    machine_families: list[str] | None = Field(
        default=None,
        description="the instance families the provider attaches this type to; none listed means any",
    )
    price: VolumePrice | None = None
    sources: SourceList
    as_of: dt.date
    verified: bool = True
    figure_sources: dict[str, FigureSource] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
