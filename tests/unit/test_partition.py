"""The partition cell's rules: how long each cut lasts and what makes it fail."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cell.partition import PartitionResult, _problems, cut_seconds
from harness.drbd.peers import PeersPlan
from harness.drbd.quorum import QuorumSummary
from harness.drbd.verify import parse_timeouts
from harness.plugin.verifyafter import _verify_size
from harness.remote import CommandResult
from tests.doubles import data

seconds = st.floats(0.1, 120.0, allow_nan=False)


@given(ping_int=seconds, ping_timeout=st.floats(0.1, 30.0))
def test_the_short_cut_stays_below_what_is_tolerated_and_the_long_one_above_what_is_detected(
    ping_int: float, ping_timeout: float
) -> None:
    tolerated, detected = ping_int, ping_int + ping_timeout
    below = cut_seconds("below-timeout", tolerated, detected)
    above = cut_seconds("above-timeout", tolerated, detected)
    # TCP's retransmission backoff can make the silence after a cut up to about twice as long
    assert 2 * below <= tolerated + 0.01
    assert above >= detected + 2.0
    assert below < above


def test_the_labs_cuts() -> None:
    t = parse_timeouts(data("drbd/84-drbdsetup-show-defaults-verify-alg.txt"), "single-az")
    assert cut_seconds("below-timeout", t.silence_tolerated_s, t.silence_detected_s) == 0.4
    assert cut_seconds("above-timeout", t.silence_tolerated_s, t.silence_detected_s) == 6.0


def _result(**changes: object) -> PartitionResult:
    base: dict[str, object] = dict(
        pair="single-az",
        cut="above-timeout",
        cut_s=6.1,
        timeouts="ping-int 1 s",
        disconnected=True,
        detect_s=1.3,
        stall_s=2.0,
        behind_kib=91008,
        resync_s=9.5,
        verify_oos_kib=0,
        verify_s=7.0,
        acked_writes=26728,
        verify_ok=True,
        healthy_after=True,
    )
    base.update(changes)
    return PartitionResult(**base)  # type: ignore[arg-type]


def test_a_cut_that_behaves_has_no_problem() -> None:
    assert _problems(_result()) == []
    assert _problems(_result(cut="below-timeout", disconnected=False, detect_s=None, resync_s=None)) == []


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"cut": "below-timeout"}, "below the timeouts disconnected"),
        ({"disconnected": False, "detect_s": None}, "never disconnected"),
        ({"behind_kib": 0}, "did not go on alone"),
        ({"verify_oos_kib": 4}, "online verify found 4 KiB"),
        ({"verify_ok": False}, "missing acknowledged writes"),
        ({"healthy_after": False}, "did not return healthy"),
    ],
)
def test_each_broken_promise_is_named(changes: dict[str, object], problem: str) -> None:
    found = _problems(_result(**changes))
    assert any(problem in p for p in found), found
    assert _result(**changes).lost_writes == (0 if changes.get("verify_ok", True) else 1)


def test_verify_after_takes_a_size_or_all() -> None:
    assert _verify_size("all") == 0
    assert _verify_size("256MiB") == 256 * 2**20
    for bad in ("0", "-1", "lots"):
        with pytest.raises(argparse.ArgumentTypeError, match="--verify-after"):
            _verify_size(bad)


def _r3_view(state: str, tiebreaker: bool) -> QuorumSummary:
    """What 9.2.18 printed on a1 of the three-node r3 (tests/data/drbd/drbd-9.2.18/README.md),
    read through the seam's peers reader."""
    plan = PeersPlan("a1", "r3", {"a3"} if tiebreaker else ())
    results = {
        key: CommandResult("a1", " ".join(argv), 0, data(f"drbd/drbd-9.2.18/a1.r3.{name}.txt"), "", 0.1)
        for (key, argv), name in zip(
            plan.commands().items(), (f"events2-now-statistics.{state}", "show-show-defaults"), strict=True
        )
    }
    view = plan.read(results)
    assert view is not None
    return view


def test_the_verdict_says_whether_quorum_held_through_the_other_peers() -> None:
    held = _r3_view("9-pair-cut-tiebreaker-holds", tiebreaker=True)
    result = _result(quorum=held.verdict(), quorum_held=held.holds_quorum)
    assert _problems(result) == []
    assert result.quorum == "quorum held through a3; cannot lose any peer before writes stop"
    lost = _r3_view("10-tiebreaker-lost-quorum-lost", tiebreaker=True)
    found = _problems(_result(quorum=lost.verdict(), quorum_held=lost.holds_quorum))
    assert found == ["the primary lost quorum with only its pair's link cut (no quorum, writes stop)"]
