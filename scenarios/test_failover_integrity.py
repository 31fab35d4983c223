"""Failover integrity: crash the primary mid-write; every acknowledged write must be on the peer.

fio writes a verifiable pattern on the primary and reports its completed writes every
second; the primary is crashed (the lab: SIGKILL of its whole guest, a power cut); the peer
is promoted and verifies the acknowledged prefix with ``verify_only``; a negative control
verifies past what was written and must fail.  The crashed node then rejoins, resyncs, and
the original roles are restored, so the resource ends healthy.

Protocol C: zero acknowledged writes lost is asserted.  Protocol A (the lab switches the
resource to it for this cell and back afterwards): the loss is measured and reported — fio
counts every acknowledged block missing on the peer — never asserted to be zero.

The test is ``disruptive``: on the lab the crash is a SIGKILL of the guest; elsewhere it runs
only with ``--allow-disruptive`` (naming a ``production: true`` inventory), after the pair's
configuration audit found nothing risky, and the crash is a sysrq kernel panic
(:mod:`harness.sysrq`).  A real cluster runs only the protocol its inventory gives the pair:
the harness never edits a real cluster's DRBD configuration.
"""

from __future__ import annotations

import pytest

from harness.failover import Crasher, run_failover
from harness.lab.crash import LabCrasher
from harness.lab.lifecycle import Lab
from harness.lab.protocol import Protocol, set_protocol
from harness.plugin.session import HarnessSession
from harness.samples import METRICS, Sample
from harness.sysrq import SysrqCrasher


@pytest.mark.disruptive
@pytest.mark.pairs(placement="same-az")
@pytest.mark.parametrize("protocol", ["C", "B", "A"], ids=["protocol-C", "protocol-B", "protocol-A"])
def test_failover_integrity(
    harness_session: HarnessSession, pair: str, protocol: Protocol, record_property: object, harness_repeat: int
) -> None:
    inventory = harness_session.inventory
    spec = inventory.pairs[pair]
    if inventory.lab is None and protocol != spec.protocol:
        pytest.skip(
            f"the inventory gives {pair} protocol {spec.protocol}; a real cluster's configuration is not changed"
        )
    runner = harness_session.runner
    crasher: Crasher = (
        LabCrasher(Lab(inventory, harness_session.inventory_path), runner.pool)
        if inventory.lab is not None
        else SysrqCrasher(runner.pool, spec.resource)
    )
    nodes = [runner.pool.get(spec.primary), runner.pool.get(spec.secondary)]
    with runner.host_slot(exclusive=True):  # a crash and a resync load the whole lab host
        if protocol != spec.protocol:
            set_protocol(nodes, spec.resource, protocol)

        def rejoined() -> None:
            # the rebooted guest came back with the lab's rendered protocol: align both nodes
            set_protocol([runner.pool.get(spec.primary), runner.pool.get(spec.secondary)], spec.resource, protocol)

        try:
            result = run_failover(
                runner,
                pair,
                crasher,
                protocol=protocol,
                on_rejoin=rejoined if protocol != spec.protocol else None,
            )
        finally:
            if protocol != spec.protocol:
                set_protocol(
                    [runner.pool.get(spec.primary), runner.pool.get(spec.secondary)], spec.resource, spec.protocol
                )
                runner.wait_healthy(runner.pool.get(spec.primary), spec.resource, 300.0)
    meta = {
        "scenario": "failover_integrity",
        "pair": pair,
        "mode": "replicated",
        "workload": "failover-randwrite-4k",
        # one row per protocol: C must lose nothing, A and B are measured, never mixed
        "impairment": f"crash-protocol-{result.protocol}",
        "protocol": result.protocol,
        "repeat": harness_repeat,
        "run_id": runner.run_id,
        "verdict": "pass" if result.verify_ok else "fail",
    }
    runner.store.append(
        [
            Sample("acked_writes", result.acked_writes, METRICS["acked_writes"], meta),
            Sample(
                "lost_writes",
                float(result.lost_writes),
                METRICS["lost_writes"],
                meta,
            ),
        ]
    )
    for key in ("acked_writes", "verified_writes", "lost_writes", "detect_s", "promote_s", "recover_s", "reports_seen"):
        record_property(key, getattr(result, key))  # type: ignore[operator]
    assert result.reports_seen >= 2, "fio reported fewer than two progress reports before the crash"
    assert result.negative_control_failed, "verifying past the written data did not fail: the oracle is blind"
    assert result.protocol != "C" or result.verify_ok, f"protocol C lost acknowledged writes: {result.notes}"
    assert result.healthy_after, "the resource did not return to Connected/UpToDate with the original primary"
