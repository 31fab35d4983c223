"""A :class:`~harness.baseline.compare.BaselineComparison` as Markdown for a pull request.

Written to ``reports/<run-id>/baseline-compare.md`` and shown in pytest's terminal summary.
The top answers "may this merge?": the verdict, the counts, then a table of the cells and
metrics that regressed (with baseline, current, change and tolerance), the inconclusive ones
with their reason, improvements, warnings about differing provenance, and new / missing cells.
The full per-cell table follows inside ``<details>`` so it does not drown the answer.
Tables are tabulate ``github``, like ``comparison.md``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Final

from tabulate import tabulate

from harness.baseline.compare import CELL_VERDICTS, BaselineComparison, CellDelta, CellVerdict, MetricDelta
from harness.report.comparison import METRIC_LABELS
from harness.report.formatting import format_stat
from harness.rules.tolerance import format_percent

__all__ = ["regressed_cells", "render_markdown", "verdict_line"]

_HEADLINE: Final = {
    "pass": "PASS",
    "improved": "PASS (improved)",
    "inconclusive": "INCONCLUSIVE",
    "regressed": "REGRESSED",
}
_ONCE: Final = (
    "Some cells were measured once on each side: without repeats there is no noise estimate and the "
    "tolerance alone decides. Run with `--repeat 3` (and save the baseline that way) for noise-aware verdicts."
)
_LISTED: Final[tuple[tuple[CellVerdict, str], ...]] = (
    ("new", "New cells (not in the baseline)"),
    ("missing", "Missing cells (not measured in this run)"),
)
_LEGEND: Final = (
    "Values are medians of {n} repeat{s} a side (n= marks a value with another count) and ± half their "
    "min–max range. "
    "A change beyond the tolerance counts only when the two sides' ranges do not overlap; "
    "otherwise it is inside the noise and *inconclusive*."
)


def _esc(text: str) -> str:
    return text.replace("|", "\\|")


def _label(metric: str) -> str:
    return METRIC_LABELS.get(metric, metric)


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int) -> str:
    align = ["left"] * numeric_from + ["right"] * (len(headers) - numeric_from)
    return tabulate(
        [[_esc(c) for c in row] for row in rows],
        headers=list(headers),
        tablefmt="github",
        colalign=align,
        disable_numparse=True,
    )


def _change(delta: MetricDelta) -> str:
    if delta.change is None:
        return ""
    return format_percent(delta.change) if delta.change != float("inf") else "from 0"


def _typical_n(comparison: BaselineComparison) -> int:
    """The repeat count most values have; only values with another count get an ``n=``."""
    counts = Counter(s.n for c in comparison.cells for m in c.metrics for s in (m.reference, m.current) if s)
    return max(counts, key=lambda n: (counts[n], n)) if counts else 1


def _row(cell: CellDelta, m: MetricDelta, last: str, n: int) -> list[str]:
    values = [format_stat(s, typical_n=n) for s in (m.reference, m.current)]
    return [cell.label, _label(m.metric), *values, _change(m), last]


def _delta_rows(cells: Sequence[CellDelta], verdict: str, n: int) -> list[list[str]]:
    return [_row(cell, m, m.rule.describe(), n) for cell in cells for m in cell.metrics if m.verdict == verdict]


def _inconclusive_rows(cells: Sequence[CellDelta], n: int) -> list[list[str]]:
    rows = []
    for cell in cells:
        for m in cell.metrics:
            if m.verdict == "inconclusive":
                rows.append(_row(cell, m, m.note, n))
            elif cell.invalid is not None and m.verdict in ("regressed", "improved"):
                rows.append(_row(cell, m, f"{m.verdict}, but the cell was invalid", n))
    return rows


def _noise_unknown(comparison: BaselineComparison) -> bool:
    return any(
        m.reference is not None and m.current is not None and m.reference.n == 1 and m.current.n == 1
        for c in comparison.cells
        for m in c.metrics
        if m.verdict in ("regressed", "improved")
    )


def _counts(comparison: BaselineComparison) -> str:
    counts = comparison.counts
    parts = []
    for v in CELL_VERDICTS:
        text = f"{counts[v]} {v}"
        parts.append(f"**{text}**" if v == "regressed" and counts[v] else text)
    if comparison.not_compared:
        parts.append(f"{len(comparison.not_compared)} without a metric to compare")
    return " · ".join(parts)


def verdict_line(comparison: BaselineComparison) -> str:
    """The comparison in one plain line: ``REGRESSED: 2 regressed · 15 unchanged · ...``."""
    return f"{_HEADLINE[comparison.verdict]}: {_counts(comparison).replace('**', '')}"


def regressed_cells(comparison: BaselineComparison) -> list[tuple[str, str]]:
    """(cell, why) of every cell that regressed, as the first screens list them."""
    return [(cell.label, cell.reason) for cell in comparison.with_verdict("regressed")]


def _all_cells(comparison: BaselineComparison, n: int) -> str:
    metrics = [r.metric for r in comparison.rules]
    rows = []
    for cell in comparison.cells:
        row = [cell.label, cell.verdict]
        for metric in metrics:
            m = cell.metric(metric)
            if m is None:
                row.append("")
                continue
            change = _change(m)
            ref, cur = (format_stat(s, typical_n=n) for s in (m.reference, m.current))
            row.append(f"{ref} → {cur}" + (f" ({change})" if change else ""))
        rows.append(row)
    return _table(["cell", "verdict", *(_label(m) for m in metrics)], rows, numeric_from=2)


def render_markdown(comparison: BaselineComparison, reference: str, current: str, *, details: bool = True) -> str:
    """The comparison of ``current`` (e.g. ``run `…```) against ``reference`` as Markdown.

    ``details=False`` leaves out the full per-cell table (for the terminal).
    """
    n = _typical_n(comparison)
    tolerances = ", ".join(f"{_label(r.metric)} {r.describe()}" for r in comparison.rules)
    out = [
        f"## Baseline comparison: {_HEADLINE[comparison.verdict]}",
        "",
        f"{current} against {reference}.",
        "",
        f"{_counts(comparison)}. Tolerances: {tolerances or 'none'}.",
        "",
        _LEGEND.format(n=n, s="" if n == 1 else "s"),
    ]
    if _noise_unknown(comparison):
        out += ["", _ONCE]
    headers = ["cell", "metric", "baseline", "this run", "change", "tolerance"]
    regressed = comparison.with_verdict("regressed")
    if regressed:
        out += ["", "### Regressed", "", _table(headers, _delta_rows(regressed, "regressed", n), numeric_from=2)]
    inconclusive = comparison.with_verdict("inconclusive")
    if inconclusive:
        why = [*headers[:-1], "why"]
        out += ["", "### Inconclusive", "", _table(why, _inconclusive_rows(inconclusive, n), numeric_from=2)]
        invalid = [f"- {_esc(c.label)}: {_esc(c.invalid)}" for c in inconclusive if c.invalid]
        out += ["", *invalid] if invalid else []
    improved = comparison.with_verdict("improved")
    if improved:
        out += ["", "### Improved", "", _table(headers, _delta_rows(improved, "improved", n), numeric_from=2)]
    warnings = [*comparison.warnings, *(f"provenance differs — {p.describe()}" for p in comparison.provenance)]
    if warnings:
        out += ["", "### Warnings", ""] + [f"- {_esc(w)}" for w in warnings]
    for verdict, title in _LISTED:
        cells = comparison.with_verdict(verdict)
        if cells:
            out += ["", f"### {title}", ""] + [f"- {_esc(c.label)}" for c in cells]
    compared = [c for c in comparison.cells if c.metrics]
    if details and compared:
        out += [
            "",
            "<details><summary>Every compared cell</summary>",
            "",
            _all_cells(BaselineComparison(tuple(compared), comparison.rules), n),
            "",
            "</details>",
        ]
    return "\n".join(out) + "\n"
