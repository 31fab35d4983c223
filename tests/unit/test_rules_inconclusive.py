"""A failed bound on a disturbed host is inconclusive; everything else keeps its verdict.
Exhaustive over verdicts and policies with hypothesis, on certificates of recorded windows
(tests/data/pressure)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.probes.pressure import parse_snapshot, pressure_window
from harness.rules.bounds import BoundResult, check_rate_cap
from harness.rules.inconclusive import POLICIES, decide
from harness.rules.validity import Certificate, certify

DATA = Path(__file__).resolve().parents[1] / "data" / "pressure" / "psi"


def _certificate(case: str) -> Certificate:
    before, after = (parse_snapshot((DATA / f"{case}-{end}.txt").read_text(), "a1") for end in ("before", "after"))
    return certify([pressure_window(before, after, "a1")])


CLEAN = _certificate("r2-quiet1")
DISTURBED = _certificate("r1-hog-cpu1-load50-nice")


def test_the_recorded_certificates_are_what_the_tests_say() -> None:
    assert CLEAN.status == "clean" and DISTURBED.status == "disturbed"


def test_a_cap_missed_on_a_busy_host_is_inconclusive_with_both_reasons() -> None:
    bound = check_rate_cap(94.1e6, 128e6, (0.8, 1.0))
    assert bound.verdict == "fail"
    verdict = decide(bound, DISTURBED)
    assert verdict.verdict == "inconclusive"
    assert verdict.reason == (
        "disturbed: cpu pressure 41 % on a1 > 10 %; the bound that failed: "
        "94.1 Mbit/s = 74% of the 128 Mbit/s cap, outside 80%–100%"
    )


def test_the_same_miss_on_a_quiet_host_is_a_fail() -> None:
    bound = check_rate_cap(94.1e6, 128e6, (0.8, 1.0))
    assert decide(bound, CLEAN) == bound


def test_policy_fail_keeps_todays_strictness() -> None:
    bound = check_rate_cap(94.1e6, 128e6, (0.8, 1.0))
    assert decide(bound, DISTURBED, "fail") == bound


def test_an_unknown_policy_is_refused() -> None:
    with pytest.raises(ValueError, match=r"inconclusive policy must be one of skip, fail, got 'warn'"):
        decide(BoundResult("pass", "ok"), CLEAN, "warn")  # type: ignore[arg-type]


@given(
    verdict=st.sampled_from(["pass", "fail", "inconclusive"]),
    disturbed=st.booleans(),
    policy=st.sampled_from(POLICIES),
    reason=st.text(min_size=1, max_size=40),
)
def test_only_a_fail_on_a_disturbed_host_under_skip_changes(
    verdict: str, disturbed: bool, policy: str, reason: str
) -> None:
    bound = BoundResult(verdict, reason)  # type: ignore[arg-type]
    out = decide(bound, DISTURBED if disturbed else CLEAN, policy)  # type: ignore[arg-type]
    if verdict == "fail" and disturbed and policy == "skip":
        assert out.verdict == "inconclusive"
        assert out.reason.startswith(f"disturbed: {DISTURBED.reason}; the bound that failed: ")
    else:
        assert out == bound
    # never turns anything into a pass, nor a pass into anything else
    assert (out.verdict == "pass") == (verdict == "pass")
