"""A disconnected (local-disk) cell on a pair whose DRBD 9 resource has quorum: once the primary
has left its peers, DRBD is asked whether it still holds quorum; without it the cell is refused
(its writes would fail, not measure the disk) and reconnected, and the predictor leaves that
pair unpredicted. DRBD's answers are what 9.2.18 printed on a1 for the three-node ``r3``
(tests/data/drbd/drbd-9.2.18/README.md: state 5, a1 cut from a2 and a3, ``quorum:no``; state 9,
the pair cut and quorum held through the diskless a3)."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pytest

from harness.cell.fault import Faults, QuorumLostOnCut
from harness.cell.guard import Target
from harness.cell.spec import CellSpec
from harness.errors import RefusedError
from harness.fio.spec import WorkloadSpec
from harness.replication import replication_for
from harness.runfiles.ledger import Ledger
from tests.doubles import Answer, FakeRunner
from tests.unit.drbd9_recorded import read
from tests.unit.reliability.support import PEER, RUN_ID
from tests.unit.test_drbd9_preflight import R3, _inventory

DISCONNECT = ("drbdadm", "disconnect", "r3")
SPEC = CellSpec("disk", "r3", WorkloadSpec(name="w", rw="randwrite", size=1 << 20, runtime_s=5), mode="disconnected")


def _cut(tmp_path: Path, state: str) -> tuple[FakeRunner, ExitStack]:
    """Disconnect r3's primary a1, whose DRBD then prints ``state``; the undo is left pending."""
    inv = _inventory("tiebreaker")
    a1 = FakeRunner(
        "a1",
        argv={DISCONNECT: [Answer()]},
        batch={
            f"peers_state_{R3}": Answer(read(f"a1.r3.events2-now-statistics.{state}.txt")),
            f"peers_show_{R3}": Answer(read("a1.r3.show-show-defaults.txt")),
        },
    )
    replication = replication_for(inv.pairs["r3"], a1, nodes=inv.nodes)
    target = Target(inv.pairs["r3"], a1, FakeRunner("a2"), replication, PEER, "boot")
    faults = Faults(inv, RUN_ID, Ledger(tmp_path / "ledger.ndjson", RUN_ID), deadman_grace_s=30)
    undo = ExitStack()
    try:
        faults.inject(SPEC, target, undo)
    finally:
        pending = undo.pop_all()  # the reconnect it registered, not run against the fake node
    return a1, pending


def test_a_primary_without_quorum_once_disconnected_is_refused(tmp_path: Path) -> None:
    with pytest.raises(QuorumLostOnCut) as info:
        _cut(tmp_path, "5-quorum-lost")
    assert isinstance(info.value, RefusedError)
    assert str(info.value) == (
        f"{SPEC.id}: disconnected from its peers, a1 has no quorum on r3 (no quorum, writes stop): its writes "
        "would fail, not measure its disk; it is reconnected and the cell was not measured"
    )


def test_a_primary_that_keeps_quorum_is_measured(tmp_path: Path) -> None:
    a1, _ = _cut(tmp_path, "9-pair-cut-tiebreaker-holds")
    # disconnected, then DRBD asked (its whole resource and its settings), and nothing refused
    assert a1.calls[0] == "drbdadm disconnect r3"
    assert any("events2 --now --statistics r3" in c for c in a1.calls[1:])
    assert any("show --show-defaults r3" in c for c in a1.calls[1:])
