"""``comparison.csv``: one row per *cell* with every aggregated metric and the identity and
provenance columns — for machines, so numbers are written at full precision and never rounded.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from typing import Any, Final

from harness.report.aggregate import PER_REPEAT_KEYS, Cell
from harness.report.formatting import metric_columns
from harness.runfiles.samples import IDENTITY_KEYS, PROVENANCE_KEYS
from harness.userfiles.jsonsafe import dumps

__all__ = ["CSV_STAT_FIELDS", "csv_fieldnames", "render_csv"]

#: Per-metric CSV columns, named ``<metric>_<field>``.
CSV_STAT_FIELDS: Final[tuple[str, ...]] = ("median", "min", "max", "n", "spread")

#: Metadata columns of the CSV before any others: identity, provenance, then the cell's shape.
_CSV_META_FIRST: Final[tuple[str, ...]] = (
    *IDENTITY_KEYS,
    "run_id",
    *(k for k in PROVENANCE_KEYS if k not in IDENTITY_KEYS),
    "primary",
    "secondary",
    "az_primary",
    "az_secondary",
    "rw",
    "bs",
    "numjobs",
    "iodepth",
    "bottleneck",
)


def _csv_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)  # shortest text that reads back to the same float
    if isinstance(value, str | int):
        return str(value)
    return dumps(value, sort_keys=True)


def _csv_meta_keys(cells: Sequence[Cell]) -> list[str]:
    present = {k for c in cells for k in (*c.metadata, *c.varying)} - PER_REPEAT_KEYS
    return [k for k in _CSV_META_FIRST if k in present or k in IDENTITY_KEYS] + sorted(present - set(_CSV_META_FIRST))


def csv_fieldnames(cells: Sequence[Cell]) -> list[str]:
    """Columns of :func:`render_csv` for these cells (metadata, verdict, then per-metric stats)."""
    meta = _csv_meta_keys(cells)
    tail = ["cell", "verdict", "verdict_reason", "repeats", "test_ids"]
    stats = [f"{m}_{f}" for m in metric_columns(cells) for f in CSV_STAT_FIELDS]
    return [*meta, *tail, *stats]


def _csv_row(cell: Cell, meta_keys: Sequence[str], metrics: Sequence[str]) -> dict[str, str]:
    row: dict[str, str] = {}
    for k in meta_keys:
        if k in cell.metadata:
            row[k] = _csv_value(cell.metadata[k])
        elif k in cell.varying:
            row[k] = " | ".join(_csv_value(v) for v in cell.varying[k])
        else:
            row[k] = ""
    row.update(
        cell=cell.key,
        verdict=cell.verdict or "",
        verdict_reason=cell.verdict_reason or "",
        repeats=str(len(cell.repeats)),
        test_ids=" ".join(cell.test_ids),
    )
    for m in metrics:
        stat = cell.stats.get(m)
        values: tuple[float | int | None, ...] = (
            (None,) * len(CSV_STAT_FIELDS) if stat is None else (stat.median, stat.min, stat.max, stat.n, stat.spread)
        )
        row.update({f"{m}_{f}": _csv_value(v) for f, v in zip(CSV_STAT_FIELDS, values, strict=True)})
    return row


def render_csv(cells: Iterable[Cell]) -> str:
    """``comparison.csv``: one row per cell; empty fields mean "not measured"."""
    all_cells = list(cells)
    meta, metrics = _csv_meta_keys(all_cells), metric_columns(all_cells)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=csv_fieldnames(all_cells), lineterminator="\n")
    writer.writeheader()
    for cell in all_cells:
        writer.writerow(_csv_row(cell, meta, metrics))
    return out.getvalue()
