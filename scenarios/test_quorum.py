"""Quorum on a DRBD 9 resource of more than two nodes: lose the majority while writing, regain it;
and a diskless tie-breaker that keeps quorum when a diskful node goes away.

* **majority lost**: the primary is cut off from every peer while it writes one 4 KiB block
  after another; its writes must fail with an I/O error within the resource's silence
  tolerance (``ping-int + ping-timeout``) plus 2 s, and none may be acknowledged after the first
  refusal.  Healed: writes are acknowledged again within 30 s, every peer is back and current,
  and no split brain appears.
* **tie-breaker holds**: the primary loses its diskful peer (its path cut); the diskless
  tie-breaker keeps its quorum: no write fails.

Only pairs whose resource names its other peers run these (``peers`` in the inventory).  The
embedded lab has them only on DRBD 9, when ``HARNESS_LAB_DRBD_MODULES`` names DRBD 9 modules
built for its kernel; on DRBD 8.4 both are skipped with that reason.  ``disruptive``: the
majority cut fails the cluster's writes on purpose.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.cell.quorum import QuorumCase, QuorumResult, product_version, run_quorum
from harness.lab.drbd9 import ENV_VAR
from harness.plugin.session import HarnessSession


def _run(
    harness_session: HarnessSession, pair: str, case: QuorumCase, record_property: Any, repeat: int
) -> QuorumResult:
    version = product_version(harness_session.runner, pair)
    if not version.startswith("9."):
        pytest.skip(
            f"{pair}: the nodes run DRBD {version}; quorum is DRBD 9's (on the embedded lab, set {ENV_VAR} to a "
            "directory of DRBD 9 modules built for its kernel)"
        )
    result = run_quorum(harness_session.runner, pair, case=case, repeat=repeat)
    for key, value in result.properties():
        record_property(key, value)
    record_property("summary", result.metadata["summary"])
    return result


@pytest.mark.disruptive
@pytest.mark.pairs(peers="any")
def test_writes_stop_without_the_majority_and_resume_with_it(
    harness_session: HarnessSession, pair: str, record_property: Any, harness_repeat: int
) -> None:
    result = _run(harness_session, pair, "majority-lost", record_property, harness_repeat)
    assert result.refused_after_s is not None, f"no write failed without quorum: {result.problems}"
    assert result.refused_after_s <= result.stated_s, result.problems
    assert result.acked_after_loss == 0, f"{result.acked_after_loss} writes acknowledged after quorum was lost"
    assert not result.problems, result.problems


@pytest.mark.disruptive
@pytest.mark.pairs(peers="tiebreaker")
def test_a_diskless_tiebreaker_keeps_quorum_when_a_diskful_node_goes(
    harness_session: HarnessSession, pair: str, record_property: Any, harness_repeat: int
) -> None:
    result = _run(harness_session, pair, "tiebreaker-holds", record_property, harness_repeat)
    assert result.io_errors == 0, f"{result.io_errors} writes failed with the tie-breaker in reach: {result.quorum}"
    assert not result.problems, result.problems
