"""A lost SSH connection inside a cell: the steps after fio reconnect, bounded; a loss while fio
runs fails the cell after the node's faults are held against the ledger.  And what a node's
reboot mid-cell left on both nodes.

The nodes replay recorded tc and fio outputs (tests/doubles.py); the connection drops are
:class:`ConnectionLost` raised where the transport raises it.
"""

from __future__ import annotations

import functools
from contextlib import ExitStack
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cell.fault import Faults
from harness.cell.guard import Target
from harness.cell.measure import Measurer
from harness.cell.reconnect import RECONNECT_ATTEMPTS, compare_faults, recheck_after_reboot, with_reconnect
from harness.cell.spec import CellSpec
from harness.errors import ConnectionLost, InfraError
from harness.fio.runner import FioRunner
from harness.fio.spec import WorkloadSpec
from harness.impair.apply import AppliedImpairment
from harness.remote import CommandResult, Runner
from harness.remote.command import WAIT_ONLY_MARK
from harness.runfiles.ledger import Ledger
from harness.safety.leftovers import Leftover
from tests.doubles import LAB, Answer, FakeClock, FakeRunner, mutations, recorded_replication
from tests.unit.reliability.support import PEER, QDISC_T, RUN_ID, tc_node

LISTING_NEEDLE = "faults/*.json; do"  # the leftover finder's script (harness.safety.leftovers)


class DroppingNode(FakeRunner):
    """A node whose connection drops on the scripts containing ``drop_on``, ``drops`` times."""

    drop_on: str = WAIT_ONLY_MARK
    drops: int = 1

    def run_script(self, script: str, *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        if self.drop_on in script and self.drops > 0:
            self.drops -= 1
            self.calls.append(f"(dropped) {script[:60]}")
            raise ConnectionLost(self.name, "Socket is closed")
        return super().run_script(script, timeout=timeout, check=check, sudo=sudo)


def _node() -> DroppingNode:
    base = tc_node(
        ["lab/default-root.json", "lab/harness-t-qdisc.json", "lab/default-root.json"],
        ["lab/harness-t-filter.json"],
    )
    return DroppingNode(base.name, argv=base.argv, scripts=list(base.scripts))


def _fault_on(node: FakeRunner, faults: Faults, undo: ExitStack) -> str:
    """The cell's fault step on ``node`` (its undo registered before the change); its token."""
    planned: list[tuple[Runner, AppliedImpairment]] = []
    undo.callback(faults._clear_all, planned)
    faults.impairer.apply(
        node, iface="vec1", peer_ip=PEER, profile=QDISC_T, hold_s=60, role="primary",
        on_planned=lambda fault: planned.append((node, fault)),
    )  # fmt: skip
    return str(planned[0][1].token)


@pytest.mark.reliability_row(25)
@pytest.mark.parametrize(
    ("listing", "said"),
    [
        ("fault\t{run}\t/run/harness/{run}/faults/{token}.json\nqdisc\t-\tvec1\n", "are as the ledger says (1 active)"),
        ("", "is active by the ledger but gone from the node"),
        (
            "fault\t{run}\t/run/harness/{run}/faults/{token}.json\nfault\t{run}\t/run/harness/{run}/faults/x.json\n"
            "qdisc\t-\tvec1\n",
            "fault record x that the ledger does not list",
        ),
    ],
    ids=["as-the-ledger-says", "dead-man-fired", "an-extra-record"],
)
def test_case_25_a_connection_lost_during_fio_fails_the_cell_after_checking_the_faults(
    tmp_path: Path, listing: str, said: str
) -> None:
    ledger = Ledger(tmp_path / "ledger.ndjson", RUN_ID)
    faults = Faults(LAB, RUN_ID, ledger, deadman_grace_s=30)
    a1 = _node()
    spec = CellSpec("c", "single-az", WorkloadSpec(name="w", rw="randwrite", size=1 << 20, runtime_s=5))
    measurer = Measurer(FioRunner(RUN_ID, ledger), RUN_ID, ledger=ledger, deadman_grace_s=30, progress=lambda _m: None)
    target = Target(LAB.pairs["single-az"], a1, FakeRunner("a2"), recorded_replication(a1), PEER, "boot")
    with pytest.raises(InfraError) as info, ExitStack() as undo:
        token = _fault_on(a1, faults, undo)
        # what the node carries once it answers again (the leftover finder's listing format)
        a1.scripts.insert(0, (LISTING_NEEDLE, Answer(listing.format(run=RUN_ID, token=token))))
        measurer.measure(spec, target, undo, None)
    message = str(info.value)
    assert message.startswith(f"a1: SSH connection lost while fio ran for {spec.id} (a1: SSH connection lost")
    assert "the measurement is lost" in message and said in message
    # the check reconnected and read the node; then the undo stopped fio and removed the fault
    after = a1.calls[next(i for i, c in enumerate(a1.calls) if c.startswith("(dropped)")) :]
    assert any(LISTING_NEEDLE in c for c in after)
    assert any("pkill -TERM -s" in c for c in after)
    assert any("tc qdisc del dev vec1 root handle 4842:" in c for c in after)
    assert [e["event"] for e in ledger.entries()][-1] == "impair-cleared"


@pytest.mark.reliability_row(25)
def test_case_25_an_undo_whose_connection_drops_reconnects_and_finishes(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.ndjson", RUN_ID)
    faults = Faults(LAB, RUN_ID, ledger, deadman_grace_s=30)
    a1 = _node()
    a1.drop_on, a1.drops = "systemctl stop", 1  # the disarm: the undo's first command
    with ExitStack() as undo:
        _fault_on(a1, faults, undo)
    # the clear was tried again on a new connection and verified the interface clean
    assert sum(c.startswith("(dropped)") for c in a1.calls) == 1
    cleared = [e for e in ledger.entries() if e["event"] == "impair-cleared"]
    assert [e["problems"] for e in cleared] == [[]]


@pytest.mark.reliability_row(25)
def test_case_25_reconnecting_is_bounded() -> None:
    clock = FakeClock()
    tries: list[int] = []

    def never_answers() -> None:
        tries.append(1)
        raise ConnectionLost("a1", "No route to host")

    with pytest.raises(ConnectionLost, match="No route to host"):
        with_reconnect(never_answers, sleep=clock.sleep)
    assert len(tries) == RECONNECT_ATTEMPTS and clock.sleeps == [1.0, 2.0]
    # any other failure is no reason to try again
    with pytest.raises(InfraError):
        with_reconnect(functools.partial(_raise, InfraError("tc said no")), sleep=clock.sleep)
    assert clock.sleeps == [1.0, 2.0]


def _raise(exc: Exception) -> None:
    raise exc


_TOKENS = st.sets(st.sampled_from(["a1-vec1-1", "a1-vec1-2", "a1-vec1-3", "a1-vec1-4"]), max_size=4)


@pytest.mark.reliability_row(25)
@given(active=_TOKENS, recorded=_TOKENS, qdisc=st.booleans())
def test_case_25_every_difference_from_the_ledger_is_named(active: set[str], recorded: set[str], qdisc: bool) -> None:
    ledger = [{"node": "a1", "iface": "vec1", "token": t} for t in sorted(active)]
    found = [Leftover("a1", "fault", RUN_ID, f"/run/harness/{RUN_ID}/faults/{t}.json") for t in sorted(recorded)]
    found += [Leftover("a1", "qdisc", None, "vec1")] if qdisc else []
    problems = " | ".join(compare_faults("a1", ledger, found))
    for token in active - recorded:
        assert f"fault {token} on vec1 is active by the ledger but gone" in problems
    for token in recorded - active:
        assert f"fault record {token} that the ledger does not list" in problems
    assert ("no harness qdisc on vec1" in problems) == (bool(active & recorded) and not qdisc)
    assert ("a harness qdisc on vec1 that no active fault explains" in problems) == (qdisc and not active)
    if active == recorded and qdisc == bool(active):
        assert problems == ""


@pytest.mark.reliability_row(29)
def test_case_29_after_a_reboot_both_nodes_are_rechecked_for_what_the_run_left() -> None:
    listing = (  # the leftover finder's format: a1 (no reboot) kept a fault of this run and its qdisc
        f"fault\t{RUN_ID}\t/run/harness/{RUN_ID}/faults/a1-vec1-1-1763718300.json\nqdisc\t-\tvec1\n"
        f'lock\t-\t{{"run_id": "{RUN_ID}"}}\n'
    )
    a1 = FakeRunner("a1", scripts=[(LISTING_NEEDLE, Answer(listing))])
    a2 = FakeRunner("a2", scripts=[(LISTING_NEEDLE, Answer())])  # rebooted: /run is a new tmpfs
    said = recheck_after_reboot([a1, a2], RUN_ID)
    assert said == (
        f"rechecked after the reboot: a1: fault (run {RUN_ID}): /run/harness/{RUN_ID}/faults/a1-vec1-1-1763718300.json"
        f"; a1: qdisc: vec1 / a2: nothing of this run left (remove with `harness cleanup --run-id {RUN_ID}`)"
    )
    clean = recheck_after_reboot([FakeRunner("a1", scripts=[(LISTING_NEEDLE, Answer())]), a2], RUN_ID)
    assert clean == "rechecked after the reboot: a1: nothing of this run left / a2: nothing of this run left"
    assert all(LISTING_NEEDLE in n.calls[0] for n in (a1, a2))  # read-only: nothing removed
    assert mutations(a1, a2) == []
