"""Row 30: each node's clock offset from the controller, shown by preflight."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.safety.clock import CLOCK_SKEW_WARN_S, judge_offset, read_offset
from tests.doubles import data
from tests.unit.reliability.support import finding, lab_node, preflight

RECORDED = data("versions/date-epoch-ns-lab.txt")  # a1's `date +%s.%N`, 2026-11-25


@pytest.mark.reliability_row(30)
@given(
    skew=st.floats(-1e4, 1e4, allow_nan=False),
    sent=st.floats(1.6e9, 1.9e9, allow_nan=False),
    trip=st.floats(0.0, 5.0, allow_nan=False),
    at=st.floats(0.0, 1.0),
)
def test_case_30_the_offset_is_found_within_half_the_round_trip(
    skew: float, sent: float, trip: float, at: float
) -> None:
    # the node read its clock somewhere inside the round trip
    node_time = sent + at * trip + skew
    offset = read_offset(f"{node_time:.9f}\n", sent, sent + trip)
    assert abs(offset.offset_s - skew) <= offset.uncertainty_s + 1e-3
    status, detail = judge_offset(offset)
    assert status == ("warn" if abs(offset.offset_s) - offset.uncertainty_s > CLOCK_SKEW_WARN_S else "ok")
    assert detail.startswith(f"offset {offset.offset_s:+.3f} s")


@pytest.mark.reliability_row(30)
def test_case_30_preflight_shows_each_nodes_clock_and_warns_without_blocking() -> None:
    stamp = float(RECORDED)
    synced = read_offset(RECORDED, stamp - 0.01, stamp + 0.01)
    assert judge_offset(synced)[0] == "ok" and abs(synced.offset_s) < 1e-6
    # the recorded stamp is hours or more away from now: a skewed node, as preflight sees it
    report = preflight({n: lab_node(n) for n in ("a1", "a2", "a3", "b1")})
    clock = finding(report, "a1", "clock")
    assert clock.status == "warn" and "more than 1 s" in clock.detail
    assert clock not in report.blockers
    with pytest.raises(ValueError, match="not a time stamp"):
        read_offset("date: invalid option\n", 0.0, 1.0)
