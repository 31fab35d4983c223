"""The lab doctor on the running lab: a fit lab passes with every hop answering; a replication
path that stops carrying traffic is found hop by hop, with the evidence on both ends."""

from __future__ import annotations

import time

import pytest

from harness.lab.doctor import LabDiagnosis, diagnose
from harness.lab.lifecycle import Lab

pytestmark = [pytest.mark.lab]

#: b1 drops everything it sends on its replication interface, and heals itself 30 s later
#: should this test die before its own undo (a dead-man switch, as for the harness's faults)
_CUT = "tc qdisc add dev vec1 root netem loss 100% && (sleep 30; tc qdisc del dev vec1 root) >/dev/null 2>&1 &"
_HEAL = "tc qdisc del dev vec1 root 2>/dev/null; true"


def _fit_within(lab: Lab, seconds: float) -> LabDiagnosis:
    deadline = time.monotonic() + seconds
    while True:
        diagnosis = diagnose(lab)
        if diagnosis.healthy or time.monotonic() > deadline:
            return diagnosis
        time.sleep(2)


def test_a_fit_lab_answers_on_every_hop_of_every_pair(default_lab: Lab) -> None:
    diagnosis = diagnose(default_lab)
    assert diagnosis.healthy, diagnosis.render()
    named = {p.strip() for hop in diagnosis.hops for p in hop.pair.split(",")}
    assert named == set(default_lab.inventory.pairs)
    # the cross-AZ pairs' path is probed through the router, both legs
    assert {(h.src, h.dst) for h in diagnosis.hops} >= {("a3", "b1"), ("a3", "router:vec1"), ("router:vec2", "b1")}
    assert all(not h.dead for h in diagnosis.hops)


def test_a_path_that_stops_carrying_traffic_is_found_hop_by_hop(default_lab: Lab) -> None:
    b1 = default_lab.topology.guest("b1")
    with default_lab.connections((b1,)) as conns:
        conns["b1"].run_script(_CUT, timeout=15)
        try:
            diagnosis = diagnose(default_lab)
        finally:
            conns["b1"].run_script(_HEAL, timeout=15)
    dead = {(h.src, h.dst) for h in diagnosis.hops if h.dead}
    assert dead == {("a3", "b1"), ("router:vec2", "b1")}, diagnosis.render()
    assert not diagnosis.healthy
    assert any("a3 gets no answer from 10.213.2.21" in f for f in diagnosis.findings)
    text = "\n".join(diagnosis.evidence)
    # both ends of the dead hops, each with its interface counters, its tap and its console
    for guest in ("a3", "b1", "router"):
        assert f"--- {guest}" in text
    assert "qdisc netem" in text and "loss 100%" in text  # b1's own view of the cut
    assert "host tap" in text and "console:" in text
    # the lab heals (DRBD reconnects, the NBD leg comes back) before the next test
    again = _fit_within(default_lab, 120)
    assert again.healthy, again.render()
