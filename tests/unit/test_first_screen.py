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
