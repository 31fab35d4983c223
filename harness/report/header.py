"""What the report says about the run above its tables: the header facts and the pairs table.

Shared by the Markdown (``comparison.md``) and the HTML page (``report.html``).  The facts come
from the run's record (run.json, :mod:`harness.runfiles.runinfo`) and, where it is silent or absent, from
the cells' own metadata.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from harness.report.aggregate import Cell, Verdict
from harness.report.comparison import Comparison
from harness.report.validity import validity_summary
from harness.runfiles.clockskew import CLOCK_SKEW_WARN_S, skew_notes
from harness.runfiles.runinfo import RunInfo
from harness.runfiles.samples import CALIBRATION_SCENARIO, PROVENANCE_KEYS

__all__ = [
    "PAIR_HEADERS",
    "distinct_text",
    "header_items",
    "pairs_rows",
    "result_summary",
    "run_id_text",
    "validity_line",
    "varying_provenance",
    "verdict_items",
]

_VERSION_KEYS: Final[tuple[tuple[str, str], ...]] = (
    ("fio", "fio_version"),
    ("kernel", "kernel"),
    ("DRBD", "drbd_version"),
)


def distinct_text(values: Iterable[str]) -> str:
    seen: list[str] = []
    for v in values:
        for part in v.split(" | "):
            if part and part not in seen:
                seen.append(part)
    return ", ".join(seen)


def run_id_text(comparison: Comparison, run_info: RunInfo | None) -> str:
    if run_info is not None:
        return run_info.run_id
    return distinct_text(c.value_text("run_id") for c in comparison.cells) or "-"


def _versions(comparison: Comparison, run_info: RunInfo | None) -> list[tuple[str, str]]:
    out = [(name, distinct_text(c.value_text(key) for c in comparison.cells)) for name, key in _VERSION_KEYS]
    if run_info is not None:
        out += sorted(run_info.versions.items())
    return [(k, v) for k, v in out if v]


def result_summary(comparison: Comparison) -> str:
    counts: dict[Verdict, int] = {"pass": 0, "fail": 0, "inconclusive": 0}
    for c in comparison.cells:
        if c.verdict is not None:
            counts[c.verdict] += 1
    repeats = sorted({len(c.repeats) for c in comparison.cells})
    rep = "" if repeats in ([], [1]) else f", repeats per cell: {'/'.join(str(r) for r in repeats)}"
    verdicts = f"{counts['pass']} pass, {counts['fail']} fail, {counts['inconclusive']} inconclusive"
    return f"{len(comparison.cells)} cells{rep}; {verdicts}"


def validity_line(comparison: Comparison) -> str | None:
    """How many scenario cells were certified clean, disturbed (by what) or inconclusive for
    another reason; None when no cell carries a certificate or an inconclusive verdict."""
    cells = [c for c in comparison.cells if c.scenario != CALIBRATION_SCENARIO]
    if not any(c.validity.status is not None or c.verdict == "inconclusive" for c in cells):
        return None
    return validity_summary([(c.validity, c.verdict) for c in cells])


def calibration_line(comparison: Comparison) -> str | None:
    """The calibration cells, which no test reports: how many, and each one that did not pass
    with what it did to the run (its figures fed the pair's predictions all the same)."""
    cells = [c for c in comparison.cells if c.scenario == CALIBRATION_SCENARIO]
    if not cells:
        return None
    bad = [c for c in cells if c.verdict not in (None, "pass")]
    text = f"{len(cells)} cells, the model's inputs (no test reports them)"
    if not bad:
        return f"{text}: all passed"
    named = "; ".join(f"{c.key} {c.verdict}: {c.verdict_reason or '(no reason recorded)'}" for c in bad)
    return (
        f"{text}; {len(bad)} did not pass and still fed their pair's predictions (the run's exit status "
        f"does not count them): {named}"
    )


def verdict_items(comparison: Comparison) -> list[tuple[str, str]]:
    """What the first screen says beside the result: validity, and the calibration cells."""
    lines = (("validity", validity_line(comparison)), ("calibration", calibration_line(comparison)))
    return [(name, line) for name, line in lines if line is not None]


def header_items(comparison: Comparison, run_info: RunInfo | None) -> list[tuple[str, str]]:
    items: list[tuple[str, str]] = [("run id", run_id_text(comparison, run_info))]
    if run_info is not None:
        if run_info.inventory_name or run_info.inventory_path:
            name = run_info.inventory_name or ""
            path = (
                f" ({run_info.inventory_path})" if run_info.inventory_path and name else run_info.inventory_path or ""
            )
            items.append(("inventory", f"{name}{path}"))
        if run_info.profile:
            items.append(("profile", run_info.profile))
        if run_info.started:
            items.append(("started", run_info.started))
        if run_info.finished:
            items.append(("finished", run_info.finished))
        if run_info.argv:
            items.append(("command", " ".join(run_info.argv)))
    items.append(("result", result_summary(comparison)))
    items += verdict_items(comparison)
    if run_info is not None and run_info.interrupted:
        items.append(("interrupted", f"{run_info.interrupted}; its cleanup ran, the later tests did not"))
    # only when a node's clock was surely off (node logs and the ledger will not line up)
    skew = [] if run_info is None else skew_notes(run_info.clock_offsets)
    if skew:
        items.append((f"clock skew > {CLOCK_SKEW_WARN_S:g} s", "; ".join(skew)))
    # which calibration each pair's predictions used, and whether it was reused from an earlier run
    calibrations = sorted({part for c in comparison.cells for part in c.value_text("calibration").split(" | ") if part})
    if calibrations:
        items.append(("calibrations", "; ".join(calibrations)))
    versions = _versions(comparison, run_info)
    if versions:
        # fio reports itself as "fio-3.33": don't print "fio fio-3.33".
        items.append(
            ("versions", " · ".join(v if v.lower().startswith(k.lower()) else f"{k} {v}" for k, v in versions))
        )
    return items


PAIR_HEADERS: Final = ("pair", "replication", "placement", "primary", "secondary", "protocol")


def pairs_rows(comparison: Comparison) -> list[list[str]]:
    """One row per pair from the cells' metadata: the inventory as the run actually saw it."""
    by_pair: dict[str, list[Cell]] = {}
    for c in comparison.cells:
        if c.pair != "-":
            by_pair.setdefault(c.pair, []).append(c)

    def node(cells: Sequence[Cell], role: str) -> str:
        name = distinct_text(c.value_text(role) for c in cells)
        extra = [
            distinct_text(c.value_text(f"az_{role}") for c in cells),
            distinct_text(c.value_text(f"instance_type_{role}") for c in cells),
            distinct_text(c.value_text(f"distro_{role}") for c in cells),
        ]
        extra = [e for e in extra if e]
        text = f"{name} ({', '.join(extra)})" if name and extra else name
        # the versions of the tools the harness drove on that node: a pair may mix releases
        fio_key = "fio_version" if role == "primary" else "fio_version_secondary"
        tools = [distinct_text(c.value_text(key) for c in cells) for key in (fio_key, f"tools_{role}")]
        tools = [t for t in tools if t]
        return f"{text}: {' · '.join(tools)}" if name and tools else text

    rows = []
    for pair, cells in by_pair.items():
        rows.append(
            [
                pair,
                # runs recorded before the product was: DRBD, the only one then
                distinct_text(c.value_text("replication") for c in cells if c.mode == "replicated")
                or ("drbd" if any(c.mode == "replicated" for c in cells) else ""),
                # The pair's placement is that of its replicated cells; its local cells say "local".
                distinct_text(c.value_text("placement") for c in cells if c.mode == "replicated")
                or distinct_text(c.value_text("placement") for c in cells),
                node(cells, "primary"),
                node(cells, "secondary"),
                distinct_text(c.value_text("protocol") for c in cells if c.mode == "replicated"),
            ]
        )
    return rows


def varying_provenance(cell: Cell) -> list[str]:
    return [k for k in PROVENANCE_KEYS if k in cell.varying]
