"""Where each catalog figure comes from, and which ones a pre-sales engineer should re-check.

Every entry carries its ``sources`` and ``as_of`` date; a figure whose source differs (a later
change, a correction) carries its own in ``figure_sources``.  :func:`findings` walks the merged
catalog and lists every figure that is older than a date, marked as an estimate, or entered
without being re-read against a stored copy (``verified: false``): the list
``harness sizing catalog check`` prints.  :func:`describe_source` spells a source the way a
citation needs it (repository, path and commit; or the document and the date it was read).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from harness.sizing.catalog.loader import Catalog
from harness.sizing.catalog.records import Defaults, FigureSource, PlacementEntry

__all__ = ["Finding", "describe_source", "findings"]


@dataclass(frozen=True)
class Finding:
    """One figure (or whole entry) that needs a look, and why."""

    where: str
    as_of: dt.date
    sources: tuple[str, ...]
    reasons: tuple[str, ...]
    note: str = ""


@dataclass(frozen=True)
class _Figure:
    where: str
    as_of: dt.date
    sources: tuple[str, ...]
    estimate: bool
    verified: bool
    note: str


def describe_source(catalog: Catalog, source: str) -> str:
    """``repo/path@commit`` for a repository file, ``url (read DATE)`` for a page, the URL otherwise."""
    reference = catalog.references.get(source)
    if reference is None:
        return source
    if reference.repo and reference.path and reference.commit:
        return f"{reference.repo}/{reference.path}@{reference.commit}"
    if reference.read is not None:
        return f"{reference.url} (read {reference.read.isoformat()})"
    return reference.url


def _overrides(where: str, table: dict[str, FigureSource]) -> Iterator[_Figure]:
    for field, figure in table.items():
        yield _Figure(
            f"{where}.{field}", figure.as_of, tuple(figure.sources), figure.estimate, figure.verified, figure.note
        )


def _figures(catalog: Catalog) -> Iterator[_Figure]:
    for name in Defaults.model_fields:
        figure = getattr(catalog.defaults, name)
        yield _Figure(f"defaults.{name}", figure.as_of, tuple(figure.sources), figure.estimate, True, figure.note)
    for name, placement in catalog.placements.items():
        yield _placement(name, placement)
        yield from _overrides(f"placements.{name}", placement.figure_sources)
    for name, volume in catalog.volume_types.items():
        where = f"volume_types.{name}"
        sources = tuple(volume.sources)
        yield _Figure(where, volume.as_of, sources, False, volume.verified, "")
        if volume.latency.estimate:
            yield _Figure(f"{where}.latency", volume.as_of, sources, True, volume.verified, volume.latency.note)
        if volume.price is not None:
            cost = volume.price
            yield _Figure(f"{where}.price", cost.as_of, tuple(cost.sources), False, cost.verified, cost.region)
        yield from _overrides(where, volume.figure_sources)
    for name, instance in catalog.instance_types.items():
        where = f"instance_types.{name}"
        sources = tuple(instance.sources)
        yield _Figure(where, instance.as_of, sources, False, instance.verified, "")
        if instance.network.estimate:
            yield _Figure(f"{where}.network", instance.as_of, sources, True, instance.verified, instance.network.note)
        if instance.ebs.estimate:
            yield _Figure(f"{where}.ebs", instance.as_of, sources, True, instance.verified, instance.ebs.note)
        if instance.price is not None:
            price = instance.price
            yield _Figure(f"{where}.price", price.as_of, tuple(price.sources), False, price.verified, price.region)
        yield from _overrides(where, instance.figure_sources)


def _placement(name: str, placement: PlacementEntry) -> _Figure:
    return _Figure(
        f"placements.{name}",
        placement.as_of,
        tuple(placement.sources),
        placement.estimate,
        placement.verified,
        placement.note,
    )


def findings(catalog: Catalog, older_than: dt.date | None = None) -> list[Finding]:
    """Figures older than ``older_than``, marked estimate, or not verified, in catalog order."""
    result: list[Finding] = []
    for figure in _figures(catalog):
        reasons: list[str] = []
        if older_than is not None and figure.as_of < older_than:
            reasons.append(f"older than {older_than.isoformat()}")
        if figure.estimate:
            reasons.append("estimate")
        if not figure.verified:
            reasons.append("unverified")
        if reasons:
            result.append(Finding(figure.where, figure.as_of, figure.sources, tuple(reasons), figure.note))
    return result


def render_findings(catalog: Catalog, items: Sequence[Finding]) -> str:
    """One block per finding: where, date, why, then each source spelled for a citation."""
    if not items:
        return "No catalog figure is older than the date, an estimate, or unverified."
    lines = [f"{len(items)} catalog figure(s) to re-check:"]
    for item in items:
        lines.append(f"- {item.where}  as of {item.as_of.isoformat()}  [{', '.join(item.reasons)}]")
        for source in item.sources:
            lines.append(f"    source: {describe_source(catalog, source)}")
        if item.note:
            lines.append(f"    note: {' '.join(item.note.split())}")
    return "\n".join(lines)
