"""The catalog audit: every figure with the source it cites, held to the recorded copies.

Each number of the merged catalog is listed with where its entry says it comes from (the
references' URLs and the dates they were read), and with what the recorded copies of the
published tables (:mod:`~harness.sizing.catalog.recorded`) say of it: ``checked`` when a copy
states the same figure, ``flagged`` when a copy states another (the catalog is wrong, or the page
changed), ``unverified`` when the entry says it was not re-read against a stored copy or is an
estimate, and ``cited`` otherwise (a source is named but no copy here states that figure).
``harness sizing catalog audit`` prints the list, an unverified figure with the note that says why
no copy confirms it; it exits 1 when anything is flagged.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from harness.sizing.catalog.loader import Catalog
from harness.sizing.catalog.recorded import Claim, RecordedCopy, resolve
from harness.sizing.catalog.records import FigureSource

__all__ = ["AuditedFigure", "Status", "audit", "audit_counts", "render_audit"]

Status = Literal["checked", "flagged", "unverified", "cited"]
#: figures closer than this (relative) are the same: the guide prints 0.781 where 0.78125 is meant
_TOLERANCE = 0.005


@dataclass(frozen=True)
class AuditedFigure:
    """One catalog figure, where its entry says it comes from, and what the copies say of it."""

    where: str
    value: float | None
    sources: tuple[str, ...]
    as_of: dt.date
    status: Status
    disagreeing: tuple[Claim, ...] = ()
    agreeing: tuple[Claim, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class _Provenance:
    sources: tuple[str, ...]
    as_of: dt.date
    trusted: bool
    note: str = ""


def _numbers(data: Any, prefix: str) -> Iterator[tuple[str, float | None]]:
    """Every numeric leaf of an entry's data (booleans are flags, not figures)."""
    if isinstance(data, Mapping):
        for key, value in data.items():
            yield from _numbers(value, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _numbers(value, f"{prefix}.{index}")
    elif isinstance(data, int | float) and not isinstance(data, bool):
        yield prefix, float(data)


def _override(figure_sources: Mapping[str, FigureSource], field: str) -> FigureSource | None:
    """The ``figure_sources`` entry of the longest dotted prefix of ``field``."""
    parts = field.split(".")
    for length in range(len(parts), 0, -1):
        override = figure_sources.get(".".join(parts[:length]))
        if override is not None:
            return override
    return None


def _estimated(data: Mapping[str, Any], field: str) -> bool:
    """Whether a record on the way to ``field`` is marked as an estimate."""
    node: Any = data
    for part in field.split(".")[:-1]:
        node = node.get(part) if isinstance(node, Mapping) else None
        if isinstance(node, Mapping) and node.get("estimate") is True:
            return True
    return False


def _provenance(entry: BaseModel, data: Mapping[str, Any], field: str) -> _Provenance:
    override = _override(getattr(entry, "figure_sources", {}), field)
    estimate = _estimated(data, field)
    if override is not None:
        trusted = override.verified and not override.estimate
        return _Provenance(tuple(override.sources), override.as_of, trusted, override.note)
    priced = getattr(entry, "price", None) if field.startswith("price.") else None
    if priced is not None:
        return _Provenance(tuple(priced.sources), priced.as_of, priced.verified)
    verified = bool(getattr(entry, "verified", True)) and not estimate and not getattr(entry, "estimate", False)
    # a comparator records the day its pages were read (``read``), a catalog entry its ``as_of``
    as_of = dt.date.fromisoformat(data["as_of"] if "as_of" in data else data["read"])
    return _Provenance(tuple(data["sources"]), as_of, verified)


def _entries(catalog: Catalog, comparators: Mapping[str, BaseModel] | None) -> Iterator[tuple[str, BaseModel]]:
    yield from ((f"defaults.{name}", getattr(catalog.defaults, name)) for name in type(catalog.defaults).model_fields)
    yield from ((f"placements.{name}", entry) for name, entry in catalog.placements.items())
    yield from ((f"volume_types.{name}", entry) for name, entry in catalog.volume_types.items())
    yield from ((f"instance_types.{name}", entry) for name, entry in catalog.instance_types.items())
    yield from ((f"zone_redundant.{name}", entry) for name, entry in (comparators or {}).items())


def _same(value: float | None, claimed: float | None) -> bool:
    if value is None or claimed is None:
        return value is None and claimed is None
    return math.isclose(value, claimed, rel_tol=_TOLERANCE, abs_tol=1e-9)


def _value(data: Mapping[str, Any], field: str) -> float | None:
    """A figure a copy states of ``field``, as the entry holds it: a flag (``nitro``) is 1 or 0."""
    node: Any = data
    for part in field.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    return float(node) if isinstance(node, int | float) else None


def _figure(where: str, value: float | None, provenance: _Provenance, claims: Sequence[Claim]) -> AuditedFigure:
    disagree = tuple(claim for claim in claims if not _same(value, claim.value))
    agree = tuple(claim for claim in claims if _same(value, claim.value))
    status: Status = (
        "flagged" if disagree else "unverified" if not provenance.trusted else "checked" if agree else "cited"
    )
    return AuditedFigure(where, value, provenance.sources, provenance.as_of, status, disagree, agree, provenance.note)


def audit(
    catalog: Catalog, copies: Sequence[RecordedCopy], comparators: Mapping[str, BaseModel] | None = None
) -> list[AuditedFigure]:
    """Every figure of ``catalog`` in catalog order (then of ``comparators``, the zone-redundant
    volumes the sizing compares with, as ``zone_redundant.NAME``), each with its status against ``copies``.

    A copy's figure the catalog leaves empty (a published burst the entry lacks) is listed too,
    flagged, so a dropped figure is found as a changed one is; copies of types the catalog does
    not hold are ignored.
    """
    entries = list(_entries(catalog, comparators))
    by_figure: dict[tuple[str, str], list[Claim]] = {}
    for copy in copies:
        for claim in resolve(copy.claims, (name for name, _ in entries)):
            by_figure.setdefault((claim.entry, claim.field), []).append(claim)
    result: list[AuditedFigure] = []
    for name, entry in entries:
        data = entry.model_dump(mode="json")
        fields = dict(_numbers(data, ""))
        claimed = {field for entry_name, field in by_figure if entry_name == name}
        for field in [*fields, *sorted(claimed - set(fields))]:
            value = fields.get(field, _value(data, field))
            provenance = _provenance(entry, data, field)
            result.append(_figure(f"{name}.{field}", value, provenance, by_figure.get((name, field), [])))
    return [item for item in result if item.value is not None or item.disagreeing]


def audit_counts(items: Sequence[AuditedFigure]) -> dict[Status, int]:
    """How many figures have each status."""
    counts = Counter(item.status for item in items)
    return {status: counts.get(status, 0) for status in ("checked", "cited", "unverified", "flagged")}


def _spell(catalog: Catalog, source: str) -> str:
    reference = catalog.references.get(source)
    if reference is None:
        return source
    read = f" (read {reference.read.isoformat()})" if reference.read is not None else ""
    return f"{reference.url}{read}"


def render_audit(catalog: Catalog, items: Sequence[AuditedFigure], *, everything: bool = False) -> str:
    """The flagged and unverified figures (every figure with ``everything``) and the counts."""
    lines: list[str] = []
    for item in items:
        if not everything and item.status not in ("flagged", "unverified"):
            continue
        shown = "none" if item.value is None else f"{item.value:g}"
        lines.append(f"{item.status.upper():10} {item.where} = {shown}  (as of {item.as_of.isoformat()})")
        lines.extend(f"    source: {_spell(catalog, source)}" for source in item.sources)
        if item.status == "unverified" and item.note:
            lines.append(f"    why: {item.note}")
        for claim in item.disagreeing:
            said = "none" if claim.value is None else f"{claim.value:g}"
            lines.append(f"    {claim.reference} says {said}: {claim.line}")
        lines.extend(f"    checked against {claim.reference}: {claim.line}" for claim in item.agreeing[:1])
    counts = audit_counts(items)
    summary = ", ".join(f"{count} {status}" for status, count in counts.items())
    lines.append(f"{len(items)} catalog figures: {summary}")
    return "\n".join(lines)
