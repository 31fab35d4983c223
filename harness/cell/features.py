"""Optional node features a cell may need, refused up front per cell.

Preflight finds what a node lacks; a missing *required* tool (fio, tc, sch_netem) blocks the
whole run, but a missing *optional* feature stops only the cells that use it: without
``sch_tbf`` a cell with a rate cap cannot run (``tc`` would fail half-way through applying the
fault, after the netem qdisc is in place), while every other cell can.  So the controller
records what each node lacks (``missing-features.json`` in the run directory, read by every
xdist worker) and a cell that needs it is refused before anything changes, naming the node
and the missing module; the rest of the run goes on.

:data:`OPTIONAL` maps a preflight check to the feature it detects; :func:`needed` says which
features a cell uses.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final

from harness.cell.spec import CellSpec
from harness.errors import RefusedError

__all__ = ["OPTIONAL", "FeatureMissing", "MissingFeature", "needed", "read_missing", "refuse_missing", "write_missing"]

#: preflight check name -> the optional feature it detects
OPTIONAL: Final = {"tbf": "sch_tbf"}
FILE_NAME: Final = "missing-features.json"


class FeatureMissing(RefusedError):
    """A cell needs a feature a node of its pair lacks; nothing was changed."""


@dataclass(frozen=True)
class MissingFeature:
    node: str
    feature: str
    detail: str


def from_findings(findings: Iterable[tuple[str, str, str, str]]) -> list[MissingFeature]:
    """``(node, check, status, detail)`` of preflight findings -> the optional features missing."""
    return [
        MissingFeature(node, OPTIONAL[check], detail)
        for node, check, status, detail in findings
        if check in OPTIONAL and status != "ok"
    ]


def needed(spec: CellSpec) -> dict[str, str]:
    """Feature -> what in ``spec`` needs it."""
    out: dict[str, str] = {}
    if spec.impairment is not None and spec.impairment.rate_bits is not None:
        out["sch_tbf"] = f"its rate cap ({spec.impairment_name})"
    return out


def refuse_missing(spec: CellSpec, nodes: tuple[str, str], missing: Sequence[MissingFeature]) -> None:
    """Raise :class:`FeatureMissing` if a node of ``nodes`` (primary, secondary) lacks a feature
    ``spec`` needs.
    Only the nodes the fault is applied on count: a primary-only rate cap does not need the
    secondary's tbf."""
    uses = needed(spec)
    if not uses or spec.impairment is None:
        return
    primary, secondary = nodes
    applies = {primary} if spec.impairment.applies_to("primary") else set()
    applies |= {secondary} if spec.impairment.applies_to("secondary") else set()
    lacking = [m for m in missing if m.node in applies and m.feature in uses]
    if lacking:
        what = "; ".join(f"{m.node} lacks {m.feature} ({m.detail})" for m in lacking)
        features = ", ".join(sorted({m.feature for m in lacking}))
        reason = uses[lacking[0].feature]
        raise FeatureMissing(f"{spec.id} needs {features} for {reason}: {what}; the cell was not run, nothing changed")


def write_missing(run_dir: Path, missing: Sequence[MissingFeature]) -> None:
    (run_dir / FILE_NAME).write_text(json.dumps([asdict(m) for m in missing], indent=1) + "\n")


def read_missing(run_dir: Path) -> list[MissingFeature]:
    """What the controller's preflight found missing; nothing when no preflight ran (a
    standalone runner)."""
    path = run_dir / FILE_NAME
    if not path.exists():
        return []
    return [MissingFeature(str(m["node"]), str(m["feature"]), str(m["detail"])) for m in json.loads(path.read_text())]
