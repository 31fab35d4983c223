"""The first screen of a run: failures first, counted in its title, safe in Markdown."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harness.report.comparison import build_comparison
from harness.report.firstscreen import first_screen
from harness.rules.bounds import BoundResult

_VERDICTS = st.sampled_from(["pass", "fail", "inconclusive"])
_JUDGED = st.lists(
    st.tuples(st.from_regex(r"[a-z]{1,8}/[a-z-]{1,8}", fullmatch=True), _VERDICTS, st.sampled_from(["why", "x < y"])),
    max_size=8,
)


@given(_JUDGED)
def test_failures_come_first_and_the_title_counts_them(judged: list[tuple[str, str, str]]) -> None:
    bounds = [(label, BoundResult(verdict, reason)) for label, verdict, reason in judged]  # type: ignore[arg-type]
    screen = first_screen(build_comparison([]), bounds)
    verdicts = [verdict for verdict, _, _ in screen.failed]
    fails = verdicts.count("FAIL")
    others = verdicts.count("INCONCLUSIVE")
    assert verdicts == ["FAIL"] * fails + ["INCONCLUSIVE"] * others
    assert len(verdicts) == sum(1 for _, verdict, _ in judged if verdict != "pass")
    if not verdicts:
        assert screen.title == "harness: every cell and bound passed"
    else:
        assert (f"{fails} failed" in screen.title) == (fails > 0)
        assert (f"{others} inconclusive" in screen.title) == (others > 0)
    # the last terminal line is the count of cells, after every failure
    assert screen.lines()[-1] == "result: 0 cells; 0 pass, 0 fail, 0 inconclusive"


def test_a_reason_cannot_open_a_tag_or_a_table_in_the_summary_but_a_comparison_reads_as_written() -> None:
    bounds = [
        ("a/b", BoundResult("fail", "145 IOPS < min 150 IOPS")),
        ("c/d", BoundResult("inconclusive", "node said <script>|x")),
    ]
    screen = first_screen(build_comparison([]), bounds, problems=["metrics: NOT written: disk full"])
    md = screen.markdown("r1", 1)
    assert md.startswith("## Storage gate: failed (exit 1)\n")
    assert "- **FAIL** `a/b`: 145 IOPS < min 150 IOPS\n" in md
    assert "- **INCONCLUSIVE** `c/d`: node said &lt;script>\\|x\n" in md
    assert "### Problems with the run's outputs\n\n- metrics: NOT written: disk full\n" in md
    assert screen.title == "harness: 1 failed, 1 inconclusive, 1 output problem"


def test_the_terminal_and_summary_count_the_certified_cells_after_the_result() -> None:
    """The recorded lab run (tests/data/runs) certified by the recorded pressure windows: one
    cell under a stress-ng hog on a2, the rest quiet."""
    from harness.report.aggregate import aggregate_samples
    from tests.unit.baseline_runs import SINGLE, cell_is, load
    from tests.unit.test_report_validity import HOG, QUIET, certified

    samples = certified(load(SINGLE), lambda m: True, QUIET)
    samples = certified(samples, cell_is("multi-az", "write-1m-nj8-qd2"), HOG, verdict="inconclusive")
    screen = first_screen(build_comparison(aggregate_samples(samples)), [])
    counted = "16 certified clean, 1 disturbed (cpu pressure on a2 1), 0 inconclusive for other reasons"
    lines = screen.lines()
    assert lines[0].startswith("INCONCLUSIVE ") and "multi-az" in lines[0]
    assert lines[-2:] == [f"result: {screen.result}", f"validity: {counted}"]
    assert f"Run `r1`: {screen.result}.\n\n- **validity**: {counted}\n" in screen.markdown("r1", 0)
