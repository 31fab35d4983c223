"""Per-cell predictions: the sizing model fed with a pair's calibration (harness.prediction.cellmodel)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from harness.cell import CellSpec
from harness.errors import ConfigError
from harness.fio.workloads import write_job
from harness.impair.profile import NetemProfile
from harness.inventory import Inventory, load_inventory
from harness.prediction.calibrate import PairCalibration
from harness.prediction.cellmodel import inventory_catalog, model_rtt_ms, model_workload, predict_cell
from harness.probes.rtt import RttStats
from harness.sizing.catalog.loader import Catalog
from harness.sizing.limits.transport import window_loop_rate

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "inventories" / "lab.yaml"
MIB = 2**20


_INVENTORY = load_inventory(LAB)
_CATALOG = inventory_catalog(_INVENTORY, LAB)


@pytest.fixture(scope="module")
def lab() -> tuple[Inventory, Catalog]:
    return _INVENTORY, _CATALOG


def _calibration(
    *,
    local_write_ms: float = 0.2,
    rtt_ms: float = 0.16,
    replicated_write_ms: float = 0.93,
    path_mbit: float | None = 3000.0,
    replicated_capacity_iops: float | None = 4000.0,
    protocol: str = "C",
    replicated_mib_s: float | None = None,
) -> PairCalibration:
    # Shaped like the lab's single-az pair (figures of the order `harness lab bench` and the
    # calibration cells measure there).
    return PairCalibration(
        pair="single-az",
        protocol=protocol,
        local_write_ms=local_write_ms,
        local_iops=1000.0 / local_write_ms,
        rtt_ms=rtt_ms,
        local_mib_s=2900.0,
        local_capacity_iops=20000.0,
        path_mbit=path_mbit,
        replicated_write_ms=replicated_write_ms,
        replicated_rtt_ms=rtt_ms,
        replicated_capacity_iops=replicated_capacity_iops,
        replicated_mib_s=replicated_mib_s,
    )


calibrations = st.builds(
    _calibration,
    local_write_ms=st.floats(0.05, 5.0),
    rtt_ms=st.floats(0.05, 5.0),
    replicated_write_ms=st.floats(0.05, 20.0),
    path_mbit=st.one_of(st.none(), st.floats(10.0, 10000.0)),
    replicated_capacity_iops=st.one_of(st.none(), st.floats(100.0, 50000.0)),
)


def _qd1(pair: str = "single-az", impairment: NetemProfile | None = None, mode: str = "replicated") -> CellSpec:
    return CellSpec("t", pair, write_job("randwrite", 4096), mode=mode, impairment=impairment)  # type: ignore[arg-type]


def test_shipped_inventories_resolve_in_their_catalogs() -> None:
    # Every node of a shipped inventory must be predictable: instance and volume types known.
    for path in sorted((ROOT / "inventories").glob("*.yaml")):
        inventory = load_inventory(path)
        catalog = inventory_catalog(inventory, path)
        for name, node in inventory.nodes.items():
            assert node.instance_type is not None, f"{path.name}: {name}"
            catalog.instance(node.instance_type)
            if node.volume:
                catalog.volume(node.volume.split(":")[0])


@given(bs_kib=st.integers(1, 64), steps=st.integers(0, 16))
def test_a_bsrange_is_modelled_by_its_mean_block_size(bs_kib: int, steps: int) -> None:
    bs = bs_kib * 1024
    job = write_job("randwrite", bs)

    ranged = replace(job, bs_max=bs * (steps + 1)) if steps else job
    modelled = model_workload(ranged).bs
    assert bs <= modelled <= (ranged.bs_max or bs)
    if steps:
        assert modelled == bs * (steps + 2) // 2


def test_a_bsrange_cell_is_predicted_at_the_block_size_fio_issued(lab: tuple[Inventory, Catalog]) -> None:
    # fio 3.33's random map shortened a 4k-32k random write to 13.6 KiB on average (the lab's
    # inventory_workload cell: 55.56 MiB/s at 4,166 IOPS); the midpoint would be 18 KiB.
    inventory, catalog = lab

    mix = CellSpec("t", "single-az", replace(write_job("randwrite", 4096, numjobs=4, iodepth=4), bs_max=32 * 1024))
    cal = _calibration(path_mbit=400.0, replicated_capacity_iops=1e6)  # the path binds: bytes count
    issued = predict_cell(inventory, catalog, mix, cal, issued_bs=13_930)
    midpoint = predict_cell(inventory, catalog, mix, cal)
    assert issued.bottleneck == midpoint.bottleneck == "replication.path"
    assert issued.bw_mib_s == pytest.approx(midpoint.bw_mib_s)  # the same bytes...
    assert issued.iops == pytest.approx(midpoint.iops * 18 * 1024 / 13_930)  # ...in more, smaller writes
    cal = _calibration(replicated_capacity_iops=5077.0)  # writes/s bind: the size sets the bandwidth
    assert predict_cell(inventory, catalog, mix, cal, issued_bs=13_930).bw_mib_s == pytest.approx(5077.0 * 13_930 / MIB)


@settings(max_examples=60, deadline=None)
@given(cal=calibrations)
def test_the_model_reproduces_its_own_calibration_point(cal: PairCalibration) -> None:
    # The replicated QD1 4k write at the calibration's RTT is what the overhead was derived
    # from: unless another limit binds below it, the prediction is that cell's measured rate.
    # (without a measured path rate the model's wire time comes from the catalog, which the
    # calibration cannot know; that case is not this property's)
    assume(cal.path_mbit is not None)
    inventory, catalog = _INVENTORY, _CATALOG
    prediction = predict_cell(inventory, catalog, _qd1(), cal, rtt_ms=cal.rtt_ms)
    assert cal.replicated_write_ms is not None
    measured_iops = 1000.0 / cal.replicated_write_ms
    assert prediction.iops <= measured_iops * (1 + 1e-6) or prediction.bottleneck != "latency"
    if prediction.bottleneck == "latency":
        wire_ms = 4096 * 8 / (cal.path_mbit * 1e3) if cal.path_mbit else 0.0
        explained = max(cal.local_write_ms, cal.rtt_ms + wire_ms + cal.local_write_ms)
        expected = 1000.0 / max(cal.replicated_write_ms, explained)
        assert prediction.iops == pytest.approx(expected, rel=1e-6)


@settings(max_examples=60, deadline=None)
@given(cal=calibrations, low_us=st.integers(0, 20000), extra_us=st.integers(0, 50000))
def test_more_added_rtt_never_raises_a_replicated_prediction(cal: PairCalibration, low_us: int, extra_us: int) -> None:
    inventory, catalog = _INVENTORY, _CATALOG
    # netem's resolution is 1 us per direction: whole even microseconds of RTT
    low, high = 2 * low_us / 1e6, 2 * (low_us + extra_us) / 1e6
    near = _qd1(impairment=NetemProfile.from_rtt("near", low) if low else None)
    far = _qd1(impairment=NetemProfile.from_rtt("far", high) if high else None)
    assert predict_cell(inventory, catalog, far, cal).iops <= predict_cell(inventory, catalog, near, cal).iops * (
        1 + 1e-9
    )


@settings(max_examples=60, deadline=None)
@given(cal=calibrations, rate_mbit=st.integers(1, 5000))
def test_an_impairment_rate_caps_the_prediction(cal: PairCalibration, rate_mbit: int) -> None:
    inventory, catalog = _INVENTORY, _CATALOG
    cap = NetemProfile("cap", rate_bits=rate_mbit * 1e6, direction="primary")
    spec = CellSpec("t", "single-az", write_job("write", MIB, iodepth=16), impairment=cap)
    prediction = predict_cell(inventory, catalog, spec, cal)
    assert prediction.bw_mib_s * MIB <= rate_mbit * 1e6 / 8 * (1 + 1e-9)


def test_a_disconnected_cell_ignores_the_replication_path(lab: tuple[Inventory, Catalog]) -> None:
    inventory, catalog = lab
    slow = _calibration(rtt_ms=50.0, replicated_write_ms=60.0, path_mbit=1.0)
    prediction = predict_cell(inventory, catalog, _qd1(mode="disconnected"), slow)
    # QD1 on the local disk alone: 1 / local write latency
    assert prediction.iops == pytest.approx(1000.0 / slow.local_write_ms)
    assert prediction.bottleneck == "latency"


def test_a_capacity_limit_names_itself(lab: tuple[Inventory, Catalog]) -> None:
    inventory, catalog = lab
    cal = _calibration(replicated_capacity_iops=1500.0)
    spec = CellSpec("t", "single-az", write_job("randwrite", 4096, numjobs=8))
    prediction = predict_cell(inventory, catalog, spec, cal)
    assert prediction.bottleneck == "replication.capacity"
    assert prediction.iops == pytest.approx(1500.0)
    values, meta = prediction.annotation(measured_bw_mib_s=1500.0 * 4096 / MIB / 2)
    assert values["model_ratio"] == pytest.approx(0.5)
    assert meta["bottleneck"] == "measured replicated IOPS capacity"


@given(
    local=st.floats(0.01, 10.0),
    rtt=st.floats(0.0, 10.0),
    replicated=st.floats(0.01, 30.0),
    protocol=st.sampled_from(["A", "B", "C"]),
)
def test_replication_overhead_is_what_rtt_and_disks_leave_unexplained(
    local: float, rtt: float, replicated: float, protocol: str
) -> None:
    cal = _calibration(local_write_ms=local, rtt_ms=rtt, replicated_write_ms=replicated, protocol=protocol)
    overhead = cal.overhead_ms
    if protocol == "A":
        assert overhead is None  # A does not wait for the peer: nothing to derive
        return
    assert overhead is not None and overhead >= 0
    wire = 4096 * 8 / (cal.path_mbit * 1e3) if cal.path_mbit else 0.0
    explained = max(local, rtt + wire + (local if protocol == "C" else 0.0))
    assert overhead == pytest.approx(max(0.0, replicated - explained))


def test_a_noisy_ping_beside_the_calibration_write_does_not_hide_the_overhead() -> None:
    # the lab's single-az calibration of 2026-11-28 (clean clone): the ping beside the
    # replicated write read 0.148 ms, the calibration's own 0.082 ms, the later cells 0.048-0.081
    cal = replace(
        _calibration(
            local_write_ms=0.049,
            rtt_ms=0.082,
            replicated_write_ms=0.197,
            path_mbit=6722.0,
            replicated_capacity_iops=7700.0,
        ),
        replicated_rtt_ms=0.148,
    )
    assert cal.path_rtt_ms == 0.082
    wire = 4096 * 8 / 6722e3  # the calibration write's 4 KiB at the measured path rate, ms
    assert cal.overhead_ms == pytest.approx(0.197 - (0.082 + wire + 0.049))
    quiet = replace(cal, replicated_rtt_ms=0.07)
    assert quiet.overhead_ms == pytest.approx(0.197 - (0.07 + wire + 0.049))
    # an unimpaired cell is predicted at that path RTT, whatever its own ten pings read, so its
    # QD1 write is the calibration's (1 / 0.197 ms); an impaired one at the RTT it measured
    inventory, catalog = _INVENTORY, _CATALOG
    cell_ping = RttStats(samples=(0.04, 0.048, 0.048, 0.2), sent=4, received=4)
    at = model_rtt_ms(_qd1(), cal, cell_ping)
    assert at == 0.082
    assert predict_cell(inventory, catalog, _qd1(), cal, rtt_ms=at).iops == pytest.approx(1000 / 0.197, rel=1e-6)
    far = _qd1(impairment=NetemProfile.from_rtt("rtt5ms", 0.005))
    slow_ping = RttStats(samples=(5.0, 5.13, 5.13, 5.3), sent=4, received=4)
    assert model_rtt_ms(far, cal, slow_ping) == 5.13
    assert model_rtt_ms(far, cal, None) is None  # the model adds the fault's delay to the calibration's


def test_read_workloads_are_not_predicted(lab: tuple[Inventory, Catalog]) -> None:
    inventory, catalog = lab

    spec = CellSpec("t", "single-az", replace(write_job("randwrite", 4096), rw="randread"))
    with pytest.raises(ConfigError, match="write workloads only"):
        predict_cell(inventory, catalog, spec, _calibration())


def test_drbds_own_large_write_rate_caps_the_bare_path_but_not_a_narrower_one(lab: tuple[Inventory, Catalog]) -> None:
    inventory, catalog = lab
    cal = _calibration(path_mbit=3000.0, replicated_mib_s=300.0)
    big = write_job("write", MIB, iodepth=16)
    open_path = predict_cell(inventory, catalog, CellSpec("t", "single-az", big), cal)
    assert open_path.bottleneck == "replication.bandwidth" and open_path.bw_mib_s == pytest.approx(300.0)
    capped = CellSpec("t", "single-az", big, impairment=NetemProfile("cap", rate_bits=128e6, direction="primary"))
    under_cap = predict_cell(inventory, catalog, capped, cal)
    assert under_cap.bottleneck == "replication.path"
    assert under_cap.bw_mib_s == pytest.approx(128e6 / 8 / MIB)


def test_a_cell_run_under_protocol_a_is_predicted_at_the_local_write_and_drbds_processing() -> None:
    # scenarios/test_protocols.py switches the pair to A for a cell: a QD1 write then waits for
    # the local disk and for DRBD to hand it to TCP, not for the round trip the pair's inventory
    # protocol (C) would.  The processing is the pair's measured capacity per write (lab,
    # 2026-11-28: 0.207 ms per A write where the local write took 0.046 ms and the capacity was
    # 7,206 writes/s, 0.139 ms each).
    inventory, catalog, cal = _INVENTORY, _CATALOG, _calibration()
    far = NetemProfile.from_rtt("rtt5ms", 0.005)
    as_c = predict_cell(inventory, catalog, _qd1(impairment=far), cal)
    spec_a = CellSpec("t", "single-az", write_job("randwrite", 4096), impairment=far, protocol="A")
    as_a = predict_cell(inventory, catalog, spec_a, cal)
    assert as_c.latency_ms > 5.0
    # the local write and DRBD's own cost per request, not the 5 ms round trip
    assert cal.replicated_capacity_iops is not None
    assert as_a.latency_ms == pytest.approx(cal.local_write_ms + 1000.0 / cal.replicated_capacity_iops)
    assert as_a.iops > 10 * as_c.iops
    # an explicit protocol still wins over the cell's
    assert predict_cell(inventory, catalog, spec_a, cal, protocol="C").latency_ms == pytest.approx(as_c.latency_ms)


def test_the_nodes_window_bounds_the_replicated_bandwidth_at_a_longer_round_trip() -> None:
    inventory, catalog = _INVENTORY, _CATALOG
    plain = _calibration(replicated_mib_s=300.0)  # below the 3,000 Mbit/s path
    cal = replace(plain, replicated_mib_s_rtt_ms=0.16, tcp_window_bytes=951760.0)
    big = write_job("write", MIB, iodepth=16)
    near = predict_cell(inventory, catalog, CellSpec("t", "single-az", big), cal)
    assert near.bottleneck == "replication.bandwidth" and near.bw_mib_s == pytest.approx(300.0)
    far = CellSpec("t", "single-az", big, impairment=NetemProfile.from_rtt("rtt5ms", 0.005))
    with_window = predict_cell(inventory, catalog, far, cal, rtt_ms=5.16)
    without = predict_cell(inventory, catalog, far, plain, rtt_ms=5.16)
    # DRBD processes while earlier bytes wait for acks, but bytes queued behind its processing
    # hold window too: below min(300 MiB/s, 0.908 MiB / 5.16 ms), above the two in series
    bound = 951760 / MIB / 0.00516
    assert with_window.bw_mib_s < 0.99 * min(300.0, bound)
    assert with_window.bw_mib_s > 1 / (1 / 300.0 + (0.00516 - 0.00016) / (951760 / MIB))
    assert with_window.bw_mib_s == pytest.approx(
        window_loop_rate(951760.0, 0.00516, 300.0 * MIB, 0.00016) / MIB, rel=1e-9
    )
    assert with_window.bottleneck == "replication.window" and "nodes' TCP buffers" in with_window.detail
    # the catalog's 4 MiB send buffer alone never bound
    assert without.bw_mib_s == pytest.approx(300.0)
