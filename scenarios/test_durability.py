"""The durability map: randomized crash trials on the lab's DRBD pairs, seeded and reproducible.

Each trial (drawn by :mod:`harness.durability.plan` from the lab's space,
:data:`~harness.durability.campaign.LAB_SPACE`) writes stamped blocks with the node writer on
the primary, acknowledgements streamed back over SSH; at the drawn moment the primary's
replication path is cut (:mod:`harness.durability.trialrun`: the survivor's disk then holds
what a crash of the primary, or of the peer, would have left), the survivor's copy is read
and every block classified by the oracle, and the loss compared with the mode's bound.  The
map (a table in the run's ``durability-map.md``, and samples the results database keeps)
adds the trials up.

Protocol C must lose no acknowledged write; A and B may lose up to their bound; the negative
control (the writes never sent, claimed acknowledged) must be caught in every trial.

``--durability-trials N`` (default 16, about a minute on the lab; 0 skips it) and
``--durability-seed S``; ``--durability-crash sigkill`` strikes each fault with the lab's
SIGKILL of the node and its reboot instead (the reference the fast cut is measured against).  ``disruptive``:
the cut stalls the pair's writes; the trials switch the lab's protocols, so the embedded lab
only.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.durability.campaign import CRASHES, LAB_SPACE, run_campaign, write_map
from harness.durability.plan import plan
from harness.plugin.session import HarnessSession


@pytest.mark.disruptive
def test_durability_map(harness_session: HarnessSession, record_property: Any, request: pytest.FixtureRequest) -> None:
    count = int(request.config.getoption("durability_trials"))
    seed = int(request.config.getoption("durability_seed"))
    if count == 0:
        pytest.skip("--durability-trials 0: no durability map drawn")
    if harness_session.inventory.lab is None:
        pytest.skip("the durability trials cut links and switch protocols: the embedded lab only")
    runner = harness_session.runner
    crash = next(c for c in CRASHES if c == request.config.getoption("durability_crash"))
    campaign = run_campaign(runner, harness_session.failover_parts, plan(seed, count, LAB_SPACE), seed, crash)
    path = write_map(runner, campaign)
    record_property("summary", campaign.summary())
    record_property("map", str(path))
    synchronous_losses = [
        r.outcome.trial.trial_id for r in campaign.runs if r.outcome.trial.synchronous and r.outcome.lost
    ]
    assert not synchronous_losses, f"protocol C lost acknowledged writes in trials {synchronous_losses}"
    assert not campaign.over_bound, f"trials lost more than their bound: {campaign.over_bound}"
    assert not campaign.controls_missed, f"the negative control went unnoticed in {campaign.controls_missed}"
