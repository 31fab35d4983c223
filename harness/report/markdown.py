"""``comparison.md``: header, pairs, one table per scenario, cells that did not pass.

Tables are tabulate's ``github`` format, so the file pastes into a pull request unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from tabulate import tabulate

from harness.report.comparison import Comparison, ScenarioTable
from harness.report.engines import ENGINE_HEADERS, engine_tables
from harness.report.formatting import LEGEND, cell_text, is_numeric, table_caption, verdict_text
from harness.report.header import PAIR_HEADERS, header_items, pairs_rows, run_id_text, varying_provenance
from harness.runfiles.runinfo import RunInfo

__all__ = ["render_markdown"]


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def _md_table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool] | None = None) -> str:
    align = None if numeric is None else tuple("right" if n else "left" for n in numeric)
    return tabulate(
        [[_md_escape(v) for v in row] for row in rows],
        headers=[_md_escape(h) for h in headers],
        tablefmt="github",
        colalign=align,
        disable_numparse=True,  # our own number formatting, not tabulate's re-parse of it
    )


def _scenario_markdown(table: ScenarioTable) -> list[str]:
    parts = [f"## {table.scenario}", "", f"_{table_caption(table)}_"]
    n = table.typical_repeats
    for section in table.sections:
        headers = [c.header for c in section.columns]
        rows = [[cell_text(r, c, typical_n=n, emphasis=True) for c in section.columns] for r in table.rows]
        parts += ["", f"**{section.title}**", "", _md_table(headers, rows, [is_numeric(c) for c in section.columns])]
    return parts


def render_markdown(comparison: Comparison, run_info: RunInfo | None = None) -> str:
    """The whole ``comparison.md``."""
    parts = [f"# Comparison — run {run_id_text(comparison, run_info)}", ""]
    parts += [f"- **{k}**: {v}" for k, v in header_items(comparison, run_info)[1:]]
    pairs = pairs_rows(comparison)
    if pairs:
        parts += ["", "## Pairs", "", _md_table(PAIR_HEADERS, pairs)]
    if not comparison.tables:
        parts += ["", "_No cells: the samples file holds no measurements._"]
    for table in comparison.tables:
        parts += ["", *_scenario_markdown(table)]
    for engines in engine_tables(comparison):
        rows = [list(r.texts()) for r in engines.rows]
        numeric = [False, False, False, True, True, True]
        parts += ["", f"## {engines.scenario}: fio vs bonnie++", "", _md_table(ENGINE_HEADERS, rows, numeric)]
    if comparison.not_passed:
        parts += ["", "## Not passed", ""]
        for c in comparison.not_passed:
            parts.append(f"- {verdict_text(c, emphasis=True)} `{c.key}`: {c.verdict_reason or '(no reason recorded)'}")
    warnings = [(c, varying_provenance(c)) for c in comparison.cells]
    warnings = [(c, keys) for c, keys in warnings if keys]
    if warnings:
        parts += ["", "## Warnings", ""]
        for c, keys in warnings:
            detail = "; ".join(f"{k}: {c.value_text(k)}" for k in keys)
            parts.append(f"- `{c.key}`: repeats ran with different {', '.join(keys)} ({detail})")
    parts += ["", f"_{LEGEND}_", ""]
    return "\n".join(parts)
