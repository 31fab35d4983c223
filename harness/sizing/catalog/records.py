"""The base of every catalog record and the figures shared by the whole catalog.

Every number in the catalog is published somewhere (or marked as an estimate), so records carry
their ``sources`` and ``as_of`` date.  This module owns the record base (unknown keys refused,
frozen, finite), a reference to a source document, a single catalog-wide :class:`Figure`, the
catalog :class:`Defaults` and the round trip of a named :class:`PlacementEntry`.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CatalogRecord",
    "Defaults",
    "DefaultsOverlay",
    "Figure",
    "FigureSource",
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
    """A source document that entries cite by id: a page (``url`` and the date it was read) or a
    file in a public repository (``repo``, ``path`` and the ``commit`` it was read at)."""

    url: Annotated[str, Field(min_length=1)]
    title: str = ""
    repo: str = ""
    path: str = ""
    commit: str = ""
    read: dt.date | None = Field(default=None, description="when the page was read (documents without a commit)")


class FigureSource(CatalogRecord):
    """Where one figure of an entry comes from when that differs from the entry's own sources.

    ``verified`` is false for a figure entered from a source that was not re-read against a stored
    copy; ``harness sizing catalog check`` lists those with the estimates and the stale ones.
    """

    sources: SourceList
    as_of: dt.date
    estimate: bool = False
    verified: bool = True
    note: str = ""


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
    tcp_sndbuf_bytes: Figure
    mtu_bytes: Figure
    tcp_ip_header_bytes: Figure


class DefaultsOverlay(CatalogRecord):
    """The ``defaults`` section of a user catalog: any subset of :class:`Defaults`."""

    single_flow_gbps: Figure | None = None
    network_burst_minutes: Figure | None = None
    ebs_burst_minutes: Figure | None = None
    tcp_sndbuf_bytes: Figure | None = None
    mtu_bytes: Figure | None = None
    tcp_ip_header_bytes: Figure | None = None


class PlacementEntry(CatalogRecord):
    """A named pair placement, the round-trip time the model assumes for it, and what the
    provider charges per GB that crosses it: ``transfer_billed_sides`` is 2 where both the
    sender and the receiver pay (AWS inter-AZ), 1 where only the sender's egress is billed
    (Google Cloud, which charges no ingress)."""

    description: str = ""
    cloud: str = "aws"
    rtt_ms: NonNegativeFloat
    transfer_usd_per_gb: NonNegativeFloat | None = None
    transfer_billed_sides: Literal[1, 2] = 2
    estimate: bool = False
    note: str = ""
    sources: SourceList
    as_of: dt.date
    verified: bool = True
    figure_sources: dict[str, FigureSource] = Field(default_factory=dict)
