"""Restoring a role on DRBD 9 waits until DRBD allows it and the node is connected, bounded; a pair
that cannot be restored is charged to itself; a cell never writes through a device that is not
primary.  Real 9.2.18 states of the lab's r-sa pair (tests/data/drbd/drbd-9.2.18/README.md) and
8.4.11's, through the real DRBD implementation of the seam."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cell.guard import refuse_unless_primary
from harness.cell.roles import PROMOTABLE_S, restore_other_pairs, restore_pair_roles, wait_promotable
from harness.drbd.replication import DrbdReplication
from harness.errors import RefusedError
from harness.inventory import Inventory, parse_inventory
from harness.runfiles.ledger import Ledger
from tests.doubles import Answer, FakeClock, FakeRunner, data, recorded_replication
from tests.unit.reliability.support import MINI

R_SA = ("drbdsetup", "events2", "--now", "--statistics", "r-sa")


def _events(*states: str) -> list[Answer | BaseException]:
    return [Answer(data(f"drbd/drbd-9.2.18/{state}.txt")) for state in states]


def _node(name: str, *states: str, **more: list[Answer | BaseException]) -> FakeRunner:
    argv: dict[tuple[str, ...], list[Answer | BaseException]] = {R_SA: _events(*states)}
    argv.update({("drbdadm", verb, "r-sa"): answers for verb, answers in more.items()})
    return FakeRunner(name, argv=argv)


def test_a_node_back_from_a_crash_is_promoted_once_drbd_allows_it() -> None:
    clock = FakeClock()
    a1 = _node(
        "a1",
        "a1.r-sa.events2-now-statistics.1-connected-inconsistent",  # Secondary: restore it
        "a1.r-sa.events2-now-statistics.1-connected-inconsistent",  # may_promote:no while Inconsistent
        "a1.r-sa.events2-now-statistics.6-both-secondary",  # may_promote:yes, Connected
        "a1.r-sa.events2-now-statistics.3-uptodate",
        primary=[Answer()],
    )
    a2 = _node("a2", "a2.r-sa.events2-now-statistics.3-uptodate")  # Secondary: nothing to demote
    primary = recorded_replication(a1, "r-sa", clock=clock)
    assert restore_pair_roles(primary, recorded_replication(a2, "r-sa", clock=clock), clock=clock, sleep=clock.sleep)
    waited = a1.calls[: a1.calls.index("drbdadm primary r-sa")]
    assert waited == ["drbdsetup events2 --now --statistics r-sa"] * 3
    assert clock.sleeps == [0.5]  # one poll while DRBD said no


def test_connecting_is_not_enough_even_where_drbd_would_allow_it() -> None:
    """9.2.18 without quorum says may_promote:yes on a Secondary whose link is cut (a2 at the
    network cut): promoting it then starts a history of its own.  The wait ends, refused."""
    clock = FakeClock()
    a2 = _node("a2", "a2.r-sa.events2-now-statistics.9-network-cut")
    a1 = _node(
        "a1",
        "a1.r-sa.events2-now-statistics.3-uptodate",
        "a1.r-sa.events2-now-statistics.6-both-secondary",
        secondary=[Answer()],
    )
    with pytest.raises(RefusedError, match=r"a2: r-sa may not be promoted 60 s after it came back \(not connected"):
        restore_pair_roles(
            recorded_replication(a2, "r-sa", clock=clock),
            recorded_replication(a1, "r-sa", clock=clock),
            clock=clock,
            sleep=clock.sleep,
        )
    assert "drbdadm secondary r-sa" in a1.calls  # the old primary stepped down first
    assert not a2.ran("drbdadm primary")
    assert PROMOTABLE_S <= sum(clock.sleeps) < PROMOTABLE_S + 1


def test_drbd_84_says_nothing_of_promotion_and_is_promoted_at_once() -> None:
    events = ("drbdsetup", "events2", "--now", "--statistics", "single-az")
    a2 = FakeRunner("a2", argv={events: [Answer(data("drbd/84-events2-now-secondary-connected.txt"))]})
    clock = FakeClock()
    state = wait_promotable(recorded_replication(a2, clock=clock), clock=clock, sleep=clock.sleep)
    assert (state.role, state.may_promote) == ("Secondary", None)
    assert clock.sleeps == [] and a2.calls == ["drbdsetup events2 --now --statistics single-az"]


class _Cells:
    """The two things restoring the other pairs asks of a cell runner, over recorded nodes."""

    def __init__(self, inventory: Inventory, nodes: dict[str, FakeRunner], ledger: Ledger, clock: FakeClock) -> None:
        self.inventory, self.ledger, self.nodes, self.clock = inventory, ledger, nodes, clock

    def replication(self, pair: str, node: str) -> DrbdReplication:
        return recorded_replication(self.nodes[node], self.inventory.pairs[pair].resource, clock=self.clock)


def test_a_pair_that_cannot_be_restored_is_charged_to_itself(tmp_path: Path) -> None:
    text = MINI.replace("  single-az:\n", "  r-sa:\n").replace(
        "    primary: a1\n    secondary: a2\n    resource: single-az\n",
        "    primary: a2\n    secondary: a1\n    resource: r-sa\n",
    )
    inv = parse_inventory(text + "  crashed-pair: {primary: a2, secondary: a1, resource: other, device: /dev/drbd1}\n")
    clock = FakeClock()
    nodes = {
        "a2": _node("a2", "a2.r-sa.events2-now-statistics.9-network-cut"),
        "a1": _node("a1", "a1.r-sa.events2-now-statistics.6-both-secondary"),
    }
    ledger = Ledger(tmp_path / "ledger.ndjson", "run-1")
    notes = restore_other_pairs(
        _Cells(inv, nodes, ledger, clock), "a2", done="crashed-pair", clock=clock, sleep=clock.sleep
    )
    assert len(notes) == 1 and notes[0].startswith("r-sa: roles not restored after a2 crashed (a2: r-sa may not be")
    assert notes[0].endswith("; its next cell refuses until they are")
    assert "restore-failed" in (tmp_path / "ledger.ndjson").read_text()
    # and that next cell does refuse, naming the pair's own device and role
    state = recorded_replication(nodes["a2"], "r-sa", clock=clock).state()
    with pytest.raises(RefusedError, match="a2: r-sa is Secondary, the inventory says Primary: refusing to write"):
        refuse_unless_primary(state, "a2", "r-sa")
