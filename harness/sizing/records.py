"""The base of every catalog record and the figures shared by the whole catalog.

Every number in the catalog is published somewhere (or marked as an estimate), so records carry
their ``sources`` and ``as_of`` date.  This module owns the record base (unknown keys refused,
frozen, finite), a reference to a source document, a single catalog-wide :class:`Figure`, the
catalog :class:`Defaults` and the round trip of a named :class:`PlacementEntry`.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CatalogRecord",
    "Defaults",
    "DefaultsOverlay",
    "Figure",
    "NonNegativeFloat",
    "PlacementEntry",
    "PositiveFloat",
    "Reference",
    "SourceList",
]

PositiveFloat = Annotated[float, Field(gt=0)]
NonNegativeFloat = Annotated[float, Field(ge=0)]
SourceList = Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]


class CatalogRecord(BaseModel):
    """Base for every catalog record: unknown keys are typos, records never change, and every
    figure is finite (a `.inf` limit never binds and turns the model's output into Infinity)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Reference(CatalogRecord):
    """A source document that entries cite by id."""

    url: Annotated[str, Field(min_length=1)]
    title: str = ""


class Figure(CatalogRecord):
    """A single catalog-wide number with its provenance."""

    value: PositiveFloat
    estimate: bool = False
    note: str = ""
    sources: SourceList
    as_of: dt.date


class Defaults(CatalogRecord):
    """Catalog-wide figures that apply to every instance unless an entry overrides them."""

    single_flow_gbps: Figure
    network_burst_minutes: Figure
    ebs_burst_minutes: Figure


class DefaultsOverlay(CatalogRecord):
    """The ``defaults`` section of a user catalog: any subset of :class:`Defaults`."""

    single_flow_gbps: Figure | None = None
    network_burst_minutes: Figure | None = None
    ebs_burst_minutes: Figure | None = None


class PlacementEntry(CatalogRecord):
    """A named pair placement and the round-trip time the model assumes for it."""

    description: str = ""
    rtt_ms: NonNegativeFloat
    estimate: bool = False
    note: str = ""
    sources: SourceList
    as_of: dt.date
