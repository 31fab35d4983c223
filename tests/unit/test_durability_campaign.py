"""A campaign's verdicts over its trials: the trials over their bound, the negative controls
missed, the rate, and the one-line summary, on trials rebuilt from their seeds."""

from __future__ import annotations

from harness.durability.bounds import LossBound
from harness.durability.campaign import LAB_SPACE, Campaign
from harness.durability.durmap import TrialOutcome
from harness.durability.plan import plan
from harness.durability.trialrun import TrialRun


def _run(index: int, lost: int, bound: int, caught: bool) -> TrialRun:
    trial = plan(5, index + 1, LAB_SPACE)[index]
    outcome = TrialOutcome(trial, 100, lost, 0, LossBound(bound, "send buffer" if bound else "synchronous mode"), 0.2)
    return TrialRun(outcome, caught, 1.0, 3.0)


def test_a_campaign_names_the_trials_over_bound_and_the_controls_missed() -> None:
    runs = [_run(0, 0, 0, True), _run(1, 3, 2, True), _run(2, 1, 5, False)]
    campaign = Campaign(seed=5, runs=runs, elapsed_s=30.0)
    assert campaign.over_bound == [runs[1].outcome.trial.trial_id]
    assert campaign.controls_missed == [runs[2].outcome.trial.trial_id]
    assert campaign.per_minute == 6.0
    assert campaign.summary() == (
        "3 trials (seed 5) in 30 s, 6.0 a minute; 4 acknowledged writes lost (largest in one trial 3); "
        "negative control caught in 2 of 3"
    )
    assert sum(cell.trials for cell in campaign.dmap.cells.values()) == 3
    assert Campaign(seed=1).per_minute == 0.0
