"""Each cell's validity certificate as the report shows it, and the run's count of them.

A measured cell's samples carry its certificate (:mod:`harness.cell.certificate`): ``validity``
(``clean`` or ``disturbed``), ``validity.reason`` and, per figure,
``validity.<where>.<name>.disturbed``.  Over its repeats a cell is *disturbed* when any repeat
was, with that repeat's reason; *clean* when every certified repeat was; *not certified* when no
sample says (a disk study, a run recorded before certificates).  :func:`validity_summary` is the
run's one line: how many cells were certified clean, how many disturbed and by what, and how
many were inconclusive for another reason.  Pure: samples' metadata in, text out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

__all__ = ["CellValidity", "cell_validity", "disturbance_label", "validity_summary"]

Status = Literal["clean", "disturbed"]
_STATUSES: Final = ("clean", "disturbed")
_UNITS: Final = ("_pct", "_ms", "_s", "_pages")


@dataclass(frozen=True)
class CellValidity:
    """A cell's certificates over its repeats."""

    #: None: no repeat was certified
    status: Status | None = None
    #: the first disturbed repeat's reason (``cpu pressure 41 % on a2 > 10 %``)
    reason: str | None = None
    #: what disturbed it, one label per figure (``cpu pressure on a2``), first seen first
    disturbances: tuple[str, ...] = ()
    #: repeats certified clean and disturbed
    counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """For a table cell: ``clean``, ``disturbed`` (``disturbed 1/3`` when repeats split), ``–``."""
        if self.status is None:
            return "–"
        total = sum(self.counts.values())
        own = self.counts.get(self.status, 0)
        return self.status if own == total else f"{self.status} {own}/{total}"


def disturbance_label(key: str) -> str | None:
    """``validity.a2.cpu_pressure_pct.disturbed`` → ``cpu pressure on a2``; None for other keys."""
    parts = key.split(".")
    if len(parts) != 4 or parts[0] != "validity" or parts[3] != "disturbed":
        return None
    name = parts[2]
    for unit in _UNITS:
        name = name.removesuffix(unit)
    return f"{name.replace('_', ' ')} on {parts[1]}"


def _repeat(metadata: Mapping[str, Any]) -> int:
    try:
        return int(metadata.get("repeat") or 0)
    except (TypeError, ValueError):
        return 0


def cell_validity(metadata: Iterable[Mapping[str, Any]]) -> CellValidity:
    """The certificate of a cell from its samples' metadata (every sample of every repeat)."""
    per_repeat: dict[int, Mapping[str, Any]] = {}
    for meta in metadata:
        if meta.get("validity") in _STATUSES:
            per_repeat.setdefault(_repeat(meta), meta)
    if not per_repeat:
        return CellValidity()
    counts = Counter(str(m["validity"]) for m in per_repeat.values())
    disturbed = [per_repeat[r] for r in sorted(per_repeat) if per_repeat[r]["validity"] == "disturbed"]
    if not disturbed:
        return CellValidity("clean", counts=dict(counts))
    labels: dict[str, None] = {}
    for meta in disturbed:
        labels.update(dict.fromkeys(label for k, v in meta.items() if v == "yes" and (label := disturbance_label(k))))
    reason = disturbed[0].get("validity.reason")
    return CellValidity("disturbed", None if reason is None else str(reason), tuple(labels), dict(counts))


def validity_summary(cells: Sequence[tuple[CellValidity, str | None]]) -> str:
    """``150 certified clean, 8 disturbed (cpu pressure on host 6, rtt after on a1-a2 2), 3
    inconclusive for other reasons, 34 not certified`` for (certificate, verdict) per cell."""
    disturbed = [v for v, _ in cells if v.status == "disturbed"]
    other = sum(1 for v, verdict in cells if v.status != "disturbed" and verdict == "inconclusive")
    clean = sum(1 for v, verdict in cells if v.status == "clean" and verdict != "inconclusive")
    unknown = sum(1 for v, verdict in cells if v.status is None and verdict != "inconclusive")
    by_what = Counter(label for v in disturbed for label in v.disturbances)
    what = ", ".join(f"{label} {n}" for label, n in by_what.most_common())
    parts = [f"{clean} certified clean", f"{len(disturbed)} disturbed" + (f" ({what})" if what else "")]
    parts.append(f"{other} inconclusive for other reasons")
    if unknown:
        parts.append(f"{unknown} not certified")
    return ", ".join(parts)
