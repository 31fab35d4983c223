"""The impairment: foreign qdiscs are left alone, an applied fault is read back, latency near DRBD's
timeouts is linted (cases 18, 20, 21).

Cases of tests/RELIABILITY_CASES.md, the fault and bad-input map; each test is marked
``reliability_row(N)`` and named ``test_case_NN_*``; select a case with ``-k rowNN``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cell import CellSpec
from harness.cell.fault import check_rtt
from harness.errors import (
    RefusedError,
)
from harness.fio.spec import WorkloadSpec
from harness.impair.apply import Impairer, ImpairmentMismatch
from harness.impair.filters import parse_filters
from harness.impair.lint import lint_profile
from harness.impair.profile import NETEM_DEFAULT_LIMIT, Direction, NetemProfile
from harness.impair.qdiscs import parse_qdiscs
from harness.impair.readback import verify_applied
from harness.probes.rtt import RttStats
from harness.runfiles.ledger import Ledger
from tests.doubles import (
    Answer,
    data,
    mutations,
)
from tests.unit.reliability.support import (
    PEER,
    QDISC_T,
    RUN_ID,
    finding,
    lab_node,
    preflight,
    tc_node,
)


@pytest.mark.reliability_row(18)
@pytest.mark.parametrize(
    "root", ["lab/foreign-htb-root.json", "qdisc-recorded-htb-on-reserved-handle.json", "lab/router-netem-1ms.json"]
)
def test_case_18_foreign_qdisc_is_left_alone(tmp_path: Path, root: str) -> None:
    node = tc_node([root], ["filter-recorded-empty.json"])
    ledger = Ledger(tmp_path / "ledger.ndjson", RUN_ID)
    with pytest.raises(RefusedError, match=r"a1: vec1 has a qdisc the harness did not create .*refusing to touch it"):
        Impairer(RUN_ID, ledger).apply(node, iface="vec1", peer_ip=PEER, profile=QDISC_T, hold_s=60, role="primary")
    assert mutations(node) == [] and ledger.entries() == []  # not even an intent


@pytest.mark.reliability_row(18)
def test_case_18_preflight_reports_a_foreign_root() -> None:
    report = preflight({"a1": lab_node("a1", qdisc=Answer(data("tc/lab/foreign-htb-root.json"))), "a2": lab_node("a2")})
    assert finding(report, "a1", "qdisc").status == "BLOCK"
    assert "htb 1: root was configured by someone else" in finding(report, "a1", "qdisc").detail


@pytest.mark.reliability_row(20)
def test_case_20_applied_fault_is_read_back(tmp_path: Path) -> None:
    node = tc_node(
        ["lab/default-root.json", "lab/harness-t-qdisc.json"],
        ["lab/harness-t-filter.json"],
    )
    ledger = Ledger(tmp_path / "ledger.ndjson", RUN_ID)
    applied = Impairer(RUN_ID, ledger).apply(
        node, iface="vec1", peer_ip=PEER, profile=QDISC_T, hold_s=60, role="primary"
    )
    assert applied is not None and applied.readback == data("tc/lab/harness-t-qdisc.json")
    assert [e["event"] for e in ledger.entries()] == ["impair-intent", "impair-applied"]
    # before the change only the root is read (filters live under a root); both after it
    shows = [c for c in node.calls if c.startswith("tc -j ")]
    assert [c.split()[2] for c in shows] == ["qdisc", "qdisc", "filter"]


@pytest.mark.reliability_row(20)
@pytest.mark.parametrize(
    ("after_q", "after_f", "problem"),
    [
        # someone else's prio tree on our handle: bands 3, priomap 1s, netem limit 3000 (lab-recorded)
        ("lab/prio-netem-tbf.json", "lab/u32-filter.json", "root prio: expected bands 2 priomap all 0"),
        # the fault silently absent: tc said nothing, the default root is still there
        ("lab/default-root.json", "filter-recorded-empty.json", "root: expected the harness prio root 4842:"),
        # the tree without its filter: nothing is steered into netem
        ("lab/harness-t-qdisc.json", "filter-recorded-empty.json", "nothing is impaired"),
    ],
    ids=["wrong-tree", "absent", "no-filter"],
)
def test_case_20_fault_applied_wrongly_is_removed_and_aborts(
    tmp_path: Path, after_q: str, after_f: str, problem: str
) -> None:
    node = tc_node(["lab/default-root.json", after_q, "lab/default-root.json"], [after_f])
    ledger = Ledger(tmp_path / "ledger.ndjson", RUN_ID)
    with pytest.raises(ImpairmentMismatch, match=rf"a1: impairment read back differs: .*{re.escape(problem)}"):
        Impairer(RUN_ID, ledger).apply(node, iface="vec1", peer_ip=PEER, profile=QDISC_T, hold_s=60, role="primary")
    apply = next(i for i, c in enumerate(node.calls) if "tc -batch -" in c and "qdisc add" in c)
    clear = [i for i, c in enumerate(node.calls) if "tc qdisc del dev vec1 root handle 4842:" in c and i != apply]
    assert len(clear) == 1 and clear[0] > apply  # removed after the bad read-back
    assert [e["event"] for e in ledger.entries()] == ["impair-intent", "impair-applied", "impair-cleared"]


@pytest.mark.reliability_row(20)
def test_case_20_rtt_that_did_not_move_aborts() -> None:
    spec = CellSpec(
        "s",
        "single-az",
        WorkloadSpec(name="w", rw="randwrite", size=1 << 20),
        impairment=NetemProfile.from_rtt("rtt4ms", 0.004),
    )
    base = RttStats((0.5,) * 20, 20, 20)
    with pytest.raises(ImpairmentMismatch, match=r"RTT 0.50 ms after applying .*expected 4.50 ± 0.75 ms"):
        check_rtt(spec, base, base)
    check_rtt(spec, base, RttStats((4.4,) * 20, 20, 20))


@pytest.mark.reliability_row(20)
def test_case_20_recorded_harness_trees_verify_exactly() -> None:
    filters = parse_filters(data("tc/lab/harness-t-filter.json"))
    assert verify_applied(QDISC_T, parse_qdiscs(data("tc/lab/harness-t-qdisc.json")), filters, PEER) == []
    t2 = NetemProfile("t2", delay_s=0.005, jitter_s=0.001, loss_pct=0.5)
    assert verify_applied(t2, parse_qdiscs(data("tc/lab/harness-t2-qdisc.json")), filters, PEER) == []
    assert verify_applied(t2, parse_qdiscs(data("tc/lab/harness-t2-qdisc.json")), filters, "10.213.1.13")


@pytest.mark.reliability_row(21)
@given(
    st.floats(0, 2.0),
    st.floats(0, 1.0),
    st.sampled_from(get_args(Direction)),
    st.one_of(st.none(), st.floats(1e6, 1e9)),
)
def test_case_21_latency_near_drbd_timeouts_needs_opt_in(
    delay: float, jitter_frac: float, direction: Direction, rate: float | None
) -> None:
    delay = round(delay, 6)
    profile = NetemProfile(
        "p", delay_s=delay, jitter_s=round(delay * jitter_frac, 6), rate_bits=rate, direction=direction
    )
    worst = profile.added_rtt_max_s + (profile.tbf_latency_s or 0.0)
    levels = {f.code: f.level for f in lint_profile(profile)}
    assert (levels.get("drbd-ping-timeout") == "error") == (worst >= 0.5)
    assert (levels.get("drbd-timeout") == "error") == (worst >= 6.0)
    # the lab's resource runs with ping-timeout 10 (tenths, tests/data/drbd/84-drbdsetup-show.txt)
    lab_levels = {f.code: f.level for f in lint_profile(profile, ping_timeout_s=1.0)}
    assert (lab_levels.get("drbd-ping-timeout") == "error") == (worst >= 1.0)
    # netem's queue holds the bandwidth-delay product with headroom
    limit = profile.limit_packets()
    assert limit >= NETEM_DEFAULT_LIMIT
    assert limit >= 1.5 * max(10e9, rate or 0) * (profile.delay_s + profile.jitter_s) / (8 * 1500) - 1e-6


@pytest.mark.reliability_row(21)
@pytest.mark.parametrize("allowed", [False, True])
def test_case_21_a_fault_at_the_resources_own_timeouts_needs_the_opt_in(tmp_path: Path, allowed: bool) -> None:
    """The lint reads the resource's effective timeouts (recorded `show --show-defaults`: the
    lab's ping-timeout 1 s) before anything changes, and refuses without the opt-in."""
    from harness.cell.fault import Faults
    from harness.cell.guard import Target
    from harness.drbd import commands
    from harness.drbd.replication import DrbdReplication
    from tests.doubles import LAB, FakeRunner

    node = FakeRunner(
        "a1",
        argv={
            tuple(commands.show_defaults_argv("single-az")): [
                Answer(data("drbd/84-drbdsetup-show-defaults-verify-alg.txt"))
            ]
        },
    )
    replication = DrbdReplication(node, "single-az")
    target = Target(LAB.pairs["single-az"], node, node, replication, PEER, "boot")
    faults = Faults(LAB, RUN_ID, Ledger(tmp_path / "l.ndjson", RUN_ID), deadman_grace_s=30, allow_disconnecting=allowed)
    workload = WorkloadSpec(name="w", rw="randwrite", size=1 << 20, runtime_s=5, time_based=True)
    near = CellSpec("itest", "single-az", workload, impairment=NetemProfile("slow", delay_s=0.6))  # +1.2 s RTT
    far = CellSpec("itest", "single-az", workload, impairment=NetemProfile("wan", delay_s=0.2))  # +0.4 s RTT
    faults.lint(far, target)
    if allowed:
        faults.lint(near, target)
    else:
        with pytest.raises(RefusedError, match=r"reaches DRBD ping-timeout 1s.*--allow-disruptive"):
            faults.lint(near, target)
    # read once per pair, and nothing but the read was sent
    assert node.calls == ["drbdsetup show --show-defaults single-az"]
