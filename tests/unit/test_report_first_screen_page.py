"""report.html's first screen, as a real headless Chromium lays it out at 1440×900.

The page is rendered from a real recorded run: the fourth of ``tests/data/runs/history-lab4``
(the AZ link slowed from 1 to 3 ms before it; two multi-AZ 4k cells fail their IOPS floor)
compared with the third as its baseline, through the same steps as the end of a run (the
report's plots, the baseline gate, the first screen).  What a reader needs first must be
inside the window without scrolling: what failed and why, the baseline's regressions, the
single- vs multi-AZ comparison, the validity; and no verdict cell may sit past the right edge
of its table's box.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Final

import pytest

from harness.baseline.gate import run_gate
from harness.baseline.markdown import regressed_cells, verdict_line
from harness.baseline.refs import Side
from harness.report.firstscreen import first_screen
from harness.report.publish import write_report
from harness.report.results import RunResults
from harness.runfiles.rundir import RunDir
from tests.unit.chromium import Box, layout, screenshot

RUNS: Final = Path(__file__).resolve().parents[1] / "data" / "runs" / "history-lab4"
BASELINE: Final = "20261125-115922-20f7"
CURRENT: Final = "20261125-120534-2874"
WIDTH, HEIGHT = 1440, 900
FIRST_SCREEN: Final = ("not-passed", "baseline", "placement", "validity")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("report")
    for name in (BASELINE, CURRENT):
        shutil.copytree(RUNS / name, root / name)
    run = RunDir.open(root / CURRENT)
    results = RunResults.read(run)
    info = run.run_info()
    gate = run_gate(Side.of_run(RunDir.open(root / BASELINE)), Side.of_run(run, results, info))
    screen = first_screen(
        results.comparison,
        (),
        baseline=f"baseline {BASELINE}: {verdict_line(gate.comparison)}",
        regressed=gate.comparison.regressed,
        regressions=regressed_cells(gate.comparison),
    )
    plot = gate.plot()
    write_report(run, results, info, [] if plot is None else [plot], screen=screen)
    return run.report_html


def _visible(box: Box) -> bool:
    return box.top >= 0 and box.bottom <= HEIGHT and box.left >= 0 and box.right <= WIDTH


def test_the_first_screen_says_what_failed_the_baseline_placement_and_validity(report: Path, tmp_path: Path) -> None:
    page = layout(report, WIDTH, HEIGHT, tmp_path)
    assert (page.width, page.height) == (WIDTH, HEIGHT)
    for section in FIRST_SCREEN:
        assert _visible(page.ids[section]), f"#{section} is not above the fold at {WIDTH}x{HEIGHT}: {page.ids[section]}"
    assert page.overflowing == [], "a first-screen table is wider than its box"
    # and the detail comes after them
    tops = [page.ids[name].top for name in ("pairs", "figures", "comparison", "cells")]
    assert min(tops) >= max(page.ids[s].bottom for s in FIRST_SCREEN)
    text = report.read_text(encoding="utf-8")
    first = text[text.index('<section id="first-screen">') : text.index("</section></section>")]
    # what failed and why: both failed cells with their reason
    assert first.count("145 IOPS &lt; min 150 IOPS") == 2
    assert "randwrite-4k-nj1-qd1" in first and "REGRESSED" in first


def test_no_verdict_cell_is_clipped_by_its_table(report: Path, tmp_path: Path) -> None:
    page = layout(report, WIDTH, HEIGHT, tmp_path)
    assert page.verdicts, "the page has no verdict cells"
    for cell, scroller, text in page.verdicts:
        assert scroller is not None
        assert cell.right <= min(scroller.right, WIDTH) + 0.5, f"verdict {text!r} clipped: {cell} in {scroller}"


def test_the_screenshot_is_the_window(report: Path, tmp_path: Path) -> None:
    assert screenshot(report, WIDTH, HEIGHT, tmp_path / "first-screen.png") == (WIDTH, HEIGHT)
