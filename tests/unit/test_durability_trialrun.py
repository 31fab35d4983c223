"""The fast crash trial's pure parts: the jobs a trial draws (disjoint regions, writes left
unsent for the negative control), the survivor's counters read from a recorded /proc/drbd,
and a region read back classified at its device offsets."""

from __future__ import annotations

import itertools
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.durability.campaign import LAB_SPACE
from harness.durability.oracle import classify
from harness.durability.plan import trial_of
from harness.durability.stamp import block_bytes
from harness.durability.trialrun import (
    REGION_START,
    WINDOW,
    RegionImage,
    crash_target,
    drbd_counters,
    footprint,
    job_specs,
)

DRBD = Path(__file__).resolve().parents[1] / "data" / "drbd"


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**63 - 1), st.floats(1e-6, 1 - 1e-6))
def test_a_trials_jobs_write_disjoint_regions_and_leave_writes_unsent(seed: int, crash_at: float) -> None:
    trial = trial_of(seed, LAB_SPACE)
    specs = job_specs(trial)
    assert len(specs) == trial.workload.numjobs and trial.product == "drbd"
    assert trial.fault in ("primary-crash", "peer-crash") and trial.added_rtt_ms == 0.0
    spans = sorted((s.first_block * s.bs, (s.first_block + s.blocks) * s.bs) for s in specs)
    assert spans[0][0] == REGION_START and spans[-1][1] == footprint(trial)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
    for spec in specs:
        target = crash_target(spec, crash_at)
        assert target >= 1 and target + WINDOW < spec.count
        assert target == int(crash_at * spec.count) or target in (1, spec.count - WINDOW - 1)


def test_the_counters_come_from_the_devices_own_lines_of_proc_drbd() -> None:
    connected = (DRBD / "84-proc-drbd-connected.txt").read_text()
    assert drbd_counters(connected, 0) == {"nr": 0, "dw": 0, "lo": 0, "pe": 0, "ua": 0}
    syncing = (DRBD / "84-proc-drbd-primary-syncsource.txt").read_text()
    assert drbd_counters(syncing, 0)["dw"] == 307200
    assert drbd_counters(syncing, 1) == {}
    assert drbd_counters((DRBD / "9-proc-drbd.txt").read_text(), 0) == {}


def test_a_region_read_back_is_classified_at_its_device_offsets() -> None:
    trial = trial_of(5, LAB_SPACE)
    spec = job_specs(trial)[-1]
    image = bytearray(spec.blocks * spec.bs)
    acked = list(range(spec.count // 2))
    for seq in acked:
        at = spec.offset(seq) - spec.first_block * spec.bs
        image[at : at + spec.bs] = block_bytes(spec.trial, seq, spec.offset(seq), spec.bs)
    report = classify(spec, acked, RegionImage(spec, bytes(image)))
    assert report.lost_acked == 0 and report.acked_writes == len(acked)
    assert classify(spec, list(range(spec.count // 2 + 1)), RegionImage(spec, bytes(image))).lost_acked == 1
