"""The steps of a cell that decide without a node: slots, judge, the failover's seed and protocols.

fio's numbers come from a recorded report (tests/data/fio), the window's verdict from the real
event watch over a recorded DRBD capture (tests/data/drbd), the nodes from the shared doubles.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cell import CellContext, CellSpec
from harness.cell.ackverify import cell_seed
from harness.cell.failover import InventoryProtocol
from harness.cell.judge import judge, validity
from harness.cell.measure import Measurement
from harness.cell.slots import is_heavy
from harness.errors import RefusedError
from harness.fio.outcome import FioOutcome
from harness.fio.report import parse_fio_json
from harness.fio.spec import WorkloadSpec
from harness.impair.profile import NetemProfile
from harness.inventory.models import ThresholdSpec
from harness.inventory.pairs import PeerSpec
from harness.lab.crash import LabProtocols
from harness.probes.rtt import RttStats
from harness.replication import WindowVerdict
from harness.rules.bounds import BoundResult
from tests.doubles import LAB, Answer, FakePool, FakeRunner, data, recorded_replication

QD1_4K = WorkloadSpec(name="w", rw="randwrite", bs=4096, size=1 << 20, runtime_s=5)
FIO = parse_fio_json(data("fio/fio-3.33-randwrite-4k-libaio.json"))


def _spec(**changes: object) -> CellSpec:
    return CellSpec("s", "single-az", QD1_4K, **changes)  # type: ignore[arg-type]


def _window(capture: str, *, alive: bool = True) -> WindowVerdict:
    watch = recorded_replication(FakeRunner("a1")).watch("r1", "c", max_duration_s=60)
    return watch.judge(f"harness-watch alive={int(alive)}\n{data(f'drbd/{capture}')}")


# -- slots -------------------------------------------------------------------------------------
@given(
    st.sampled_from(["replicated", "disconnected"]),
    st.sampled_from([512, 4096, 65536, 1 << 20]),
    st.integers(1, 16),
    st.integers(1, 32),
)
def test_only_one_small_replicated_stream_may_share_the_lab_host(mode: str, bs: int, numjobs: int, qd: int) -> None:
    workload = WorkloadSpec(name="w", rw="randwrite", bs=bs, numjobs=numjobs, iodepth=qd, size=1 << 20)
    spec = CellSpec("s", "single-az", workload, mode=mode)  # type: ignore[arg-type]
    light = mode == "replicated" and bs < 65536 and numjobs * qd < 4
    assert is_heavy(spec) is not light
    assert is_heavy(CellSpec("calibration", "single-az", QD1_4K))


# -- judge -------------------------------------------------------------------------------------
def test_a_window_with_a_state_change_is_inconclusive_and_skips_the_scenarios_checks() -> None:
    asked: list[CellContext] = []

    def checks(ctx: CellContext) -> list[BoundResult]:
        asked.append(ctx)
        return [BoundResult("fail", "the scenario's own bound")]

    measurement = Measurement(
        FioOutcome(FIO, QD1_4K, wall_s=6.0), None, _window("84-events2-stream-primary-disconnect-resync.txt")
    )
    judged = judge(_spec(), measurement, wall=8.0, limits=ThresholdSpec(), extra_checks=checks)
    assert judged.verdict.verdict == "inconclusive"
    assert "Connected -> Disconnecting" in judged.validity.reason
    assert asked == []
    assert judged.rtt.median_ms == 0.0 and math.isnan(judged.values["rtt"])

    healthy = Measurement(
        FioOutcome(FIO, QD1_4K, wall_s=6.0),
        RttStats((0.3,) * 10, 10, 10),
        _window("84-events2-now-primary-connected.txt"),
    )
    judged = judge(_spec(), healthy, wall=8.0, limits=ThresholdSpec(), extra_checks=checks)
    assert judged.validity == BoundResult("pass", "DRBD stayed Connected/UpToDate")
    assert judged.verdict.verdict == "fail" and len(asked) == 1
    assert judged.values["overhead"] == pytest.approx(2.0)
    assert judged.values["iops"] == FIO.write.iops


def test_the_annotator_adds_values_and_metadata() -> None:
    def annotate(
        spec: CellSpec, rtt: RttStats | None, values: dict[str, float]
    ) -> tuple[dict[str, float], dict[str, object]]:
        return {"predicted_iops": values["iops"] * 2}, {"bottleneck": "disk"}

    window = _window("84-events2-now-primary-connected.txt")
    judged = judge(
        _spec(), Measurement(FioOutcome(FIO, QD1_4K), None, window), wall=1.0, limits=ThresholdSpec(), annotate=annotate
    )
    assert judged.values["predicted_iops"] == 2 * FIO.write.iops
    assert judged.extra_metadata == {"bottleneck": "disk"}
    assert math.isnan(judged.values["fio_overhead"])


def test_a_cut_replication_is_valid_by_design() -> None:
    assert validity(_spec(mode="disconnected"), None) == BoundResult("pass", "disconnected by design")
    impaired = _spec(impairment=NetemProfile.from_rtt("rtt2ms", 0.002))
    assert validity(impaired, _window("84-events2-now-primary-connected.txt", alive=False)).verdict == "inconclusive"


# -- the failover's seed and protocol switches ----------------------------------------------------
@given(st.sampled_from(["A", "B", "C"]), st.sampled_from(["A", "B", "C"]), st.integers(0, 5), st.integers(0, 5))
def test_each_failover_cell_writes_its_own_pattern(p1: str, p2: str, r1: int, r2: int) -> None:
    seed = cell_seed("20261121-101500-ab12", "single-az", p1, r1)
    assert seed == cell_seed("20261121-101500-ab12", "single-az", p1, r1)
    assert 4242 <= seed < 4242 + 1_000_000
    if (p1, r1) != (p2, r2):
        # a collision would let an earlier cell's blocks pass this cell's negative control
        assert seed != cell_seed("20261121-101500-ab12", "single-az", p2, r2)


def test_the_seeds_of_earlier_runs_stay_the_same() -> None:
    # a seed names the cell's fio jobs and its dumped blocks: a run reads the same as before
    assert cell_seed("20261121-101500-ab12", "single-az", "C", 0) == 752547
    assert cell_seed("partition", "20261121-101500-ab12", "single-az", "below-timeout", 1) == 623852


def test_a_real_cluster_runs_only_the_inventorys_protocol() -> None:
    switch = InventoryProtocol("single-az", LAB.pairs["single-az"])
    assert switch.refusal("C") is None
    switch.set("C")
    assert switch.refusal("A") == (
        "the inventory gives single-az protocol C; a real cluster's configuration is not changed"
    )
    with pytest.raises(RefusedError):
        switch.set("A")


def test_the_lab_sets_any_protocol_in_its_own_configuration() -> None:
    nodes = {
        name: FakeRunner(name, argv={("drbdadm", "adjust", "single-az"): [Answer()]}, scripts=[("sed -i", Answer())])
        for name in ("a1", "a2")
    }
    switch = LabProtocols(FakePool(dict(nodes)).as_pool(), LAB.pairs["single-az"])
    assert switch.refusal("A") is None and switch.refusal("D") is not None
    switch.set("A")
    for node in nodes.values():
        assert any("s/protocol [ABC];/protocol A;/" in call and "/etc/drbd.conf" in call for call in node.calls)
        assert node.calls[-1] == "drbdadm adjust single-az"


def test_the_lab_sets_the_protocol_on_every_node_of_a_resource_with_peers() -> None:
    # a peer left on the old protocol is refused by DRBD 9 ("incompatible protocol settings")
    # once a crashed primary reconnects, and stays StandAlone
    pair = LAB.pairs["single-az"].model_copy(update={"peers": {"a3": PeerSpec(role="tiebreaker")}})
    nodes = {
        name: FakeRunner(name, argv={("drbdadm", "adjust", "single-az"): [Answer()]}, scripts=[("sed -i", Answer())])
        for name in ("a1", "a2", "a3")
    }
    LabProtocols(FakePool(dict(nodes)).as_pool(), pair).set("B")
    for node in nodes.values():
        assert any("s/protocol [ABC];/protocol B;/" in call for call in node.calls), node.name
        assert node.calls[-1] == "drbdadm adjust single-az"
