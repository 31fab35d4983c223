"""Failover integrity: crash the primary mid-write; every acknowledged write must be on the peer.

fio writes a verifiable pattern on the primary and reports its completed writes every
second; the primary is crashed (the lab: SIGKILL of its whole guest, a power cut); the peer
is promoted and verifies the acknowledged prefix with ``verify_only``; a negative control
verifies past what was written and must fail.  The crashed node then rejoins, resyncs, and
the original roles are restored, so the resource ends healthy, and online verify of the
written range must find both replicas identical.

Protocol C: zero acknowledged writes lost is asserted.  Protocol A (the lab switches the
resource to it for this cell and back afterwards): the loss is measured and reported — fio
counts every acknowledged block missing on the peer — never asserted to be zero.

The test is ``disruptive``: on the lab the crash is a SIGKILL of the guest; elsewhere it runs
only with ``--allow-disruptive`` (naming a ``production: true`` inventory), after the pair's
configuration audit found nothing risky, and the crash is a sysrq kernel panic
(:mod:`harness.cell.sysrq`).  A real cluster runs only the protocol its inventory gives the pair:
the harness never edits a real cluster's DRBD configuration.  The session hands out the pair's
crasher and protocol switch (the lab's or a real node's), so the test reads the same for both.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.cell.failover import run_failover
from harness.plugin.session import HarnessSession


@pytest.mark.disruptive
@pytest.mark.pairs(placement="same-az")
@pytest.mark.parametrize("protocol", ["C", "B", "A"], ids=["protocol-C", "protocol-B", "protocol-A"])
def test_failover_integrity(
    harness_session: HarnessSession, pair: str, protocol: str, record_property: Any, harness_repeat: int
) -> None:
    parts = harness_session.failover_parts(pair)
    refusal = parts.protocols.refusal(protocol)
    if refusal is not None:
        pytest.skip(refusal)
    result = run_failover(harness_session.runner, pair, parts, protocol=protocol, repeat=harness_repeat)
    for key, value in result.properties():
        record_property(key, value)
    assert result.reports_seen >= 2, "fio reported fewer than two progress reports before the crash"
    assert result.negative_control_failed, "verifying past the written data did not fail: the oracle is blind"
    assert result.protocol != "C" or result.verify_ok, f"protocol C lost acknowledged writes: {result.notes}"
    assert result.healthy_after, "the resource did not return to Connected/UpToDate with the original primary"
    assert result.verify_oos_kib == 0, f"online verify after the resync found differences: {result.notes}"
