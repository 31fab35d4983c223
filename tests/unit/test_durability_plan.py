"""The crash trials' plan: the same seed gives the same trials, a trial's seed alone rebuilds
it, and every draw stays inside the space it was drawn from."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.durability.plan import (
    DEFAULT_SPACE,
    FAULTS,
    MAX_ADDED_RTT_MS,
    PROTOCOLS,
    TrialSpace,
    harness_protocol,
    plan,
    trial_of,
    trial_seed,
)

seeds = st.integers(min_value=0, max_value=2**63 - 1)


@settings(max_examples=60, deadline=None)
@given(seeds, st.integers(min_value=0, max_value=40))
def test_the_same_seed_gives_the_same_plan_and_a_longer_plan_extends_it(seed: int, count: int) -> None:
    first = plan(seed, count)
    assert first == plan(seed, count)
    assert plan(seed, count + 5)[:count] == first
    assert len(first) == count


@settings(max_examples=100, deadline=None)
@given(seeds, st.integers(min_value=0, max_value=1000))
def test_a_trials_seed_alone_rebuilds_it(seed: int, index: int) -> None:
    trial = plan(seed, index + 1)[index]
    assert trial.seed == trial_seed(seed, index)
    assert trial_of(trial.seed) == trial
    assert trial.trial_id == f"t{trial.seed:016x}"


@settings(max_examples=200, deadline=None)
@given(seeds)
def test_every_draw_is_inside_the_space(seed: int) -> None:
    trial = trial_of(seed)
    assert trial.protocol in PROTOCOLS[trial.product]
    assert trial.fault in FAULTS
    assert 0.0 < trial.crash_at < 1.0
    assert trial.workload.bs in DEFAULT_SPACE.block_sizes
    assert trial.workload.iodepth in DEFAULT_SPACE.iodepths
    assert trial.workload.numjobs in DEFAULT_SPACE.numjobs
    if trial.placement == "same-az":
        assert trial.added_rtt_ms == 0.0
    else:
        assert 0.0 <= trial.added_rtt_ms <= MAX_ADDED_RTT_MS
    assert trial.synchronous == (trial.protocol in ("C", "sync"))


@settings(max_examples=50, deadline=None)
@given(seeds, st.sampled_from(FAULTS), st.floats(min_value=0.0, max_value=MAX_ADDED_RTT_MS))
def test_a_narrowed_space_is_honoured(seed: int, fault: str, rtt: float) -> None:
    space = TrialSpace(products=("md-nbd",), placements=("cross-az",), faults=(fault,), max_added_rtt_ms=rtt)  # type: ignore[arg-type]
    trial = trial_of(seed, space)
    assert (trial.product, trial.placement, trial.fault) == ("md-nbd", "cross-az", fault)
    assert trial.added_rtt_ms <= rtt + 1e-3


def test_a_plan_of_many_trials_covers_every_product_protocol_fault_and_placement() -> None:
    trials = plan(2026, 600)
    seen = {(t.product, t.protocol) for t in trials}
    assert seen == {(p, m) for p, modes in PROTOCOLS.items() for m in modes}
    assert {t.fault for t in trials} == set(FAULTS)
    assert {t.placement for t in trials} == {"same-az", "cross-az"}
    moments = sorted(t.crash_at for t in trials)
    # uniform over the write: every tenth of it gets its share (600 draws: about 60 each)
    for tenth in range(10):
        share = sum(1 for m in moments if tenth / 10 <= m < (tenth + 1) / 10)
        assert 30 <= share <= 95, (tenth, share)


def test_md_nbd_modes_map_onto_the_protocol_switch_letters() -> None:
    assert harness_protocol("md-nbd", "sync") == "C"
    assert harness_protocol("md-nbd", "write-behind") == "A"
    assert harness_protocol("drbd", "B") == "B"
    with pytest.raises(ValueError, match="md-nbd has no mode 'B'"):
        harness_protocol("md-nbd", "B")


def test_a_bad_space_or_seed_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="faults is empty"):
        TrialSpace(faults=())
    with pytest.raises(ValueError, match="max_added_rtt_ms 11"):
        TrialSpace(max_added_rtt_ms=11)
    with pytest.raises(ValueError, match="trial seed -1"):
        trial_of(-1)
    with pytest.raises(ValueError, match="trial count -2"):
        plan(1, -2)
