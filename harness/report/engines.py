"""fio and bonnie++ side by side: what both engines measured on the same node and layout.

The seed study measured each volume with fio and with bonnie++; the filesystem study does the
same (:mod:`harness.disk.bonnie`).  The scenario tables already hold bonnie++'s phases as rows
(``bonnie-seq-output-block``) beside fio's workloads; this table pairs the figures that
measure the same thing:

* sequential write, MiB/s: fio's large-block sequential write against bonnie++'s block output;
* random I/O, ops/s: fio's 4k random-write IOPS against bonnie++'s random seeks per second
  (not the same operation: a seek is a read, one in ten rewritten; shown for the order of
  magnitude, as the study did);
* then bonnie++'s own figures, which fio has no counterpart for on a filesystem (rewrite,
  sequential input, per-character I/O, file create/stat/delete).

Pure: cells in, rows of text out; the renderers lay them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from harness.report.aggregate import Cell, Stat, natural_key
from harness.report.comparison import Comparison, ratio_of
from harness.report.formatting import format_ratio, format_stat

__all__ = ["ENGINE_HEADERS", "EngineRow", "EngineTable", "engine_tables"]

_BONNIE: Final = "bonnie++"
_BONNIE_ROW: Final = "bonnie-"
_SEQUENTIAL_MIN_BS: Final = 64 * 1024

#: (measure, fio's rw and block-size class, fio metric, bonnie++ phase, bonnie++ metric)
_PAIRINGS: Final[tuple[tuple[str, tuple[str, str] | None, str, str, str], ...]] = (
    ("sequential write, MiB/s", ("write", "large"), "bw", "seq-output-block", "bw"),
    ("random I/O, ops/s (fio 4k randwrite IOPS; bonnie++ seeks)", ("randwrite", "4k"), "iops", "random-seeks", "ops"),
    ("rewrite, MiB/s", None, "bw", "seq-rewrite", "bw"),
    ("sequential read, MiB/s", None, "bw", "seq-input-block", "bw"),
    ("per-character write, MiB/s", None, "bw", "seq-output-char", "bw"),
    ("per-character read, MiB/s", None, "bw", "seq-input-char", "bw"),
    ("sequential create, files/s", None, "ops", "seq-create", "ops"),
    ("sequential stat, files/s", None, "ops", "seq-stat", "ops"),
    ("sequential delete, files/s", None, "ops", "seq-delete", "ops"),
    ("random create, files/s", None, "ops", "random-create", "ops"),
    ("random stat, files/s", None, "ops", "random-stat", "ops"),
    ("random delete, files/s", None, "ops", "random-delete", "ops"),
)

ENGINE_HEADERS: Final = ("node (layout)", "measure", "fio workload", "fio", "bonnie++", "bonnie++/fio")


@dataclass(frozen=True)
class EngineRow:
    group: str
    measure: str
    fio_workload: str
    fio: Stat | None
    bonnie: Stat | None
    #: bonnie++ ran the phase but it ended too fast to time ("+++++")
    too_fast: bool = False

    @property
    def ratio(self) -> float | None:
        return ratio_of(
            None if self.bonnie is None else self.bonnie.median, None if self.fio is None else self.fio.median
        )

    def texts(self) -> tuple[str, ...]:
        bonnie = "too fast to time" if self.bonnie is None and self.too_fast else format_stat(self.bonnie)
        ratio = self.ratio
        return (
            self.group,
            self.measure,
            self.fio_workload or "—",
            format_stat(self.fio) if self.fio is not None else "—",
            bonnie,
            "" if ratio is None else format_ratio(ratio),
        )


@dataclass(frozen=True)
class EngineTable:
    scenario: str
    rows: tuple[EngineRow, ...]


def _block_class(cell: Cell) -> str:
    bs = str(cell.metadata.get("bs", ""))
    if bs.isdigit():
        return "4k" if int(bs) == 4096 else "large" if int(bs) >= _SEQUENTIAL_MIN_BS else "other"
    return "other"


def _fio_cell(cells: Sequence[Cell], rw: str, size: str) -> Cell | None:
    matches = [
        c for c in cells if c.metadata.get("engine") is None and c.metadata.get("rw") == rw and _block_class(c) == size
    ]
    return min(matches, key=lambda c: natural_key(c.workload)) if matches else None


def _group_rows(label: str, cells: Sequence[Cell]) -> list[EngineRow]:
    bonnie = {c.workload.removeprefix(_BONNIE_ROW): c for c in cells if c.metadata.get("engine") == _BONNIE}
    rows = []
    for measure, fio_kind, fio_metric, phase, bonnie_metric in _PAIRINGS:
        fio_cell = None if fio_kind is None else _fio_cell(cells, *fio_kind)
        bonnie_cell = bonnie.get(phase)
        too_fast = bonnie_cell is not None and phase in (bonnie_cell.metadata.get("bonnie_too_fast") or ())
        rows.append(
            EngineRow(
                label,
                measure,
                "" if fio_cell is None else fio_cell.workload,
                None if fio_cell is None else fio_cell.stats.get(fio_metric),
                None if bonnie_cell is None else bonnie_cell.stats.get(bonnie_metric),
                too_fast,
            )
        )
    return rows


def engine_tables(comparison: Comparison) -> list[EngineTable]:
    """One table per scenario that has bonnie++ cells: every (node, layout) bonnie++ ran on,
    its paired figures row by row."""
    tables = []
    for table in comparison.tables:
        rows: list[EngineRow] = []
        for g in table.groups:
            cells = [c for row in table.rows if (c := row.cells.get(g)) is not None]
            if any(c.metadata.get("engine") == _BONNIE for c in cells):
                rows += _group_rows(g.label, cells)
        if not rows:
            continue
        tables.append(EngineTable(table.scenario, tuple(rows)))
    return tables
