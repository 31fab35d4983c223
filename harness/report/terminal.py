"""The comparison in pytest's terminal summary: compact tables that fit a given width."""

from __future__ import annotations

from tabulate import tabulate

from harness.report.comparison import METRIC_LABELS, Comparison, ScenarioTable, Section
from harness.report.formatting import cell_text, format_number, format_stat, is_numeric, verdict_text
from harness.report.header import result_summary, validity_line

__all__ = ["render_text"]


def _clip(line: str, width: int) -> str:
    return line if len(line) <= width else line[: max(width - 1, 0)] + "…"


def _text_wide(table: ScenarioTable, section: Section) -> str:
    """One metric's section side by side, verdicts folded in where they are not a pass."""
    show_impairment = any(r.impairment != "none" for r in table.rows)
    columns = [c for c in section.columns if c.kind != "impairment" or show_impairment]
    rows = []
    for r in table.rows:
        line = []
        for c in columns:
            text = cell_text(r, c, typical_n=table.typical_repeats)
            if c.kind == "metric" and c.group is not None:
                cell = r.cells.get(c.group)
                if cell is not None and cell.verdict not in (None, "pass"):
                    text += f" {verdict_text(cell)}"
            line.append(text)
        rows.append(line)
    headers = [c.group.short_label if c.kind == "metric" and c.group else c.header for c in columns]
    align = tuple("right" if is_numeric(c) else "left" for c in columns)
    return tabulate(rows, headers=headers, tablefmt="simple", colalign=align, disable_numparse=True)


def _text_long(table: ScenarioTable) -> str:
    """One line per cell: narrower than side by side, used when that does not fit."""
    metrics = [s.metric for s in table.sections if s.metric is not None]
    headers = ["workload", "impairment", "pair", *(METRIC_LABELS.get(m, m) for m in metrics), "RTT ms", "verdict"]
    rows = []
    for r in table.rows:
        for g in table.groups:
            cell = r.cells.get(g)
            if cell is None:
                continue
            rtt = cell.stats.get("rtt") if g.mode == "replicated" else None
            rows.append(
                [
                    r.workload,
                    r.impairment,
                    g.label,
                    *(format_stat(cell.stats.get(m), typical_n=table.typical_repeats) for m in metrics),
                    "" if rtt is None else format_number(rtt.median),
                    verdict_text(cell),
                ]
            )
    align = ("left", "left", "left", *("right",) * (len(metrics) + 1), "left")
    return tabulate(rows, headers=headers, tablefmt="simple", colalign=align, disable_numparse=True)


def render_text(comparison: Comparison, width: int = 120) -> str:
    """Compact tables for the terminal summary; no line is longer than ``width``."""
    if not comparison.tables:
        return "no cells measured"
    out: list[str] = []
    for table in comparison.tables:
        n = table.typical_repeats
        median = f", median of {n} repeats" if n > 1 else ""
        section = next((s for s in table.sections if s.metric is not None), None)
        text = "" if section is None else _text_wide(table, section)
        if section is not None and max(len(line) for line in text.splitlines()) <= width:
            out.append(f"{table.scenario}: {section.title}{median}")
        else:
            out.append(f"{table.scenario}{median}")
            text = _text_long(table)
        out += [*text.splitlines(), ""]
    for c in comparison.not_passed:
        out.append(f"{verdict_text(c)} {c.key}: {c.verdict_reason or '(no reason recorded)'}")
    out.append(f"result: {result_summary(comparison)}")
    validity = validity_line(comparison)
    if validity is not None:
        out.append(f"validity: {validity}")
    return "\n".join(_clip(line, width) for line in out)
