"""Calibration: what the pair's own parts do, measured, so models use facts, not catalog values.

The quick calibration (enough for the latency-sweep model):

* local write latency of the scratch device: a QD1 4k random write with replication
  disconnected (the primary's disk alone);
* RTT of the replication path: the median ping over that path.

The full calibration (``full=True``, what per-cell predictions need) adds:

* local bandwidth: 1 MiB sequential writes at QD16, disconnected;
* local IOPS capacity: 4k random writes with 4 jobs x QD2, disconnected (8 in flight: more
  does not raise it on a virtual disk, and on UML's single-threaded ubd it lowers it);
* the path's rate: one iperf3 TCP flow between the replication addresses (skipped with a
  note when iperf3 is not installed on the nodes).  It is a property of the path, not of the
  replication over it: a second pair of the same two nodes and addresses (DRBD and md-nbd
  side by side) reuses the process's measurement, with a note naming the pair that made it;
* the replicated write itself: a QD1 4k random write, connected.  What its per-write time
  holds beyond the RTT and the peer's disk write is the replication overhead (DRBD's
  processing, both TCP stacks, guest scheduling on VMs); the model adds it to every
  replicated write (protocols B and C);
* the replicated IOPS capacity: 4k random writes with 8 jobs x QD2, connected: where the pair
  (CPU, DRBD's worker threads) stops keeping up with small writes.  16 in flight, because
  with 8 the cross-AZ pair was still bound by its RTT (8 / 2.35 ms), not by its capacity,
  and a 16-deep cell then ran 1.33x the "capacity"; 8 jobs, because on a one-vCPU guest each
  fio job costs CPU and 8-job cells ran at 0.68-0.77x a 4-job capacity (lab, 2026-11-21);
* the replicated bandwidth capacity: 1 MiB sequential writes at QD16, connected: what DRBD
  itself moves over the path (its per-request processing on both nodes costs more than a
  bare TCP stream: on the lab it reached about three quarters of iperf3's rate), and the RTT
  it was measured at;
* the most one replication connection keeps in flight, from both nodes' TCP buffers
  (:mod:`harness.prediction.tcpwindow`): with it the model carries that bandwidth to a longer
  round trip.

The local-disk cells of a calibration run one after another under one disconnection
(:meth:`~harness.cell.CellRunner.run_series`): one reconnect and one resync instead of three.

A capacity is never below what the QD1 cell of the same mode achieved (a noisy or
over-queued capacity cell must not make the model predict less than QD1 already did).

Calibration cells are ordinary cells (scenario ``calibration``), so their samples land in
the run like any other and their provenance is kept.  Results are cached per pair for the
process (xdist keeps a pair's cells on one worker).  A cell measured in a disturbed window is
left out and measured again (:mod:`harness.prediction.undisturbed`); the calibration names what
it left out, and one that had to use a disturbed cell is not kept for later runs.  The path RTT
it found is what every later cell's pings are held against (the cells' validity certificates).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from harness.cell import CellResult, CellRunner, CellSpec
from harness.fio.profiles import Profile
from harness.fio.spec import WorkloadSpec
from harness.fio.workloads import write_job
from harness.prediction.calibration import CALIBRATION_BS, PairCalibration
from harness.prediction.calstore import CalibrationStore, inventory_hash
from harness.prediction.tcpwindow import read_window
from harness.prediction.undisturbed import UndisturbedCells
from harness.probes.pathrate import has_iperf3, measure_path_rate
from harness.runfiles.samples import CALIBRATION_SCENARIO
from harness.units import MIB

__all__ = [
    "CALIBRATION_SCENARIO",
    "PairCalibration",
    "calibrate_pair",
    "cells_profile",
    "local_cells_profile",
    "pair_provenance",
    "path_rate_seconds",
    "window_cells_profile",
]

_cache: dict[tuple[str, str], PairCalibration] = {}
#: (run, primary, secondary, peer address, seconds) -> (Mbit/s, the pair whose calibration measured it)
_path_rates: dict[tuple[str, str, str, str, float], tuple[float, str]] = {}

#: runs one calibration cell: (what, mode, cell) -> result, with a progress line
_Cell = Callable[[str, str, CellSpec], CellResult]


def _rtt_ms(result: CellResult, quick: PairCalibration) -> float:
    """The RTT a calibration cell measured; a cell without an RTT probe reports 0 ms, and the
    quick calibration's ping stands in."""
    return result.rtt.median_ms if result.rtt.median_ms > 0 else quick.rtt_ms


def _per_io_ms(result: CellResult) -> float:
    # 1 / IOPS at QD1 is the whole per-I/O time fio sees (submission included), which is what
    # a QD1 prediction must reproduce; completion latency alone leaves out the submission.
    return 1000.0 / max(result.iops, 1e-9)


#: the lab's quick profile runs each calibration cell this long, without a ramp: on tmpfs
#: disks and a LAN-like path the per-I/O time and the capacities settle within a second (a
#: 0 s ramp read the per-I/O times within 1 % of a 1 s ramp and the capacities within the
#: run-to-run spread, 2026-11-28), and six 5 s cells plus their reconnects cost 75 s of a
#: quick run on the lab (2026-11-25)
QUICK_CALIBRATION_RUNTIME_S = 2
#: what each job of the quick calibration's local-disk cells writes: the pair resyncs a
#: disconnected cell's writes before the next cell (on the lab ~1.9 s per 64 MiB, 3.5-7.3 s of
#: a 7.8-11.7 s cell at 64 MiB a job, 2026-11-28), and on the lab's disks the local per-I/O
#: time and rates do not depend on the footprint
QUICK_LOCAL_SIZE = 16 * MIB
#: seconds of iperf3 (after its 1 s omitted slow start): on the lab's cross-AZ path 2 s read a
#: median 973 Mbit/s against 983 for 3 s, three alternated runs each spreading 3-7 %
#: (2026-11-28); other profiles keep 3 s
QUICK_PATH_RATE_S = 2
PATH_RATE_S = 3


def path_rate_seconds(profile: Profile) -> int:
    return QUICK_PATH_RATE_S if profile.name == "quick" else PATH_RATE_S


def cells_profile(profile: Profile) -> Profile:
    """The scale of the calibration cells: the quick profile's shortened to
    :data:`QUICK_CALIBRATION_RUNTIME_S`; others (real disks, with caches and bursts to outlast)
    keep the run's own."""
    if profile.name != "quick" or profile.runtime_s <= QUICK_CALIBRATION_RUNTIME_S:
        return profile
    return replace(profile, runtime_s=QUICK_CALIBRATION_RUNTIME_S, ramp_s=0)


def window_cells_profile(profile: Profile) -> Profile:
    """The scale of the replicated 1 MiB cell: :func:`cells_profile`, keeping up to 1 s of the
    quick profile's ramp, since its rate rides the TCP window's growth (without the ramp the
    lab's replicated bandwidth read 90-96 MiB/s against 98-100, 2026-11-28)."""
    cells = cells_profile(profile)
    if cells is profile:
        return profile
    return replace(cells, ramp_s=min(profile.ramp_s, 1))


def local_cells_profile(profile: Profile) -> Profile:
    """The scale of the disconnected calibration cells: :func:`cells_profile`, and for the
    quick profile :data:`QUICK_LOCAL_SIZE` a job (less to resync after each)."""
    cells = cells_profile(profile)
    if profile.name != "quick":
        return cells
    return replace(cells, sizes=(min(QUICK_LOCAL_SIZE, *cells.sizes),))


def pair_provenance(runner: CellRunner, pair: str, profile: Profile) -> dict[str, str]:
    """What a calibration of ``pair`` depends on: while all of it is unchanged a stored
    calibration still describes the pair (:mod:`harness.prediction.calstore`)."""
    spec = runner.inventory.pairs[pair]
    out = {"pair": pair, "protocol": spec.protocol, "profile": profile.name}
    out["cells_runtime_s"] = str(cells_profile(profile).runtime_s)
    out["cells_local_bytes"] = str(local_cells_profile(profile).sizes[0])
    out["path_rate_s"] = str(path_rate_seconds(profile))
    out["cells_ramp_s"] = f"{cells_profile(profile).ramp_s}/{window_cells_profile(profile).ramp_s}"
    out["inventory_sha256"] = inventory_hash(runner.inventory)
    for role, name in (("primary", spec.primary), ("secondary", spec.secondary)):
        facts = runner.facts(name)
        out[f"instance_type_{role}"] = runner.inventory.nodes[name].instance_type or ""
        out[f"kernel_{role}"] = facts.kernel
        out[f"drbd_{role}"] = facts.drbd_version
        out[f"fio_{role}"] = facts.fio_version
        out[f"distro_{role}"] = facts.distro
        out[f"tools_{role}"] = facts.tools
    return out


def calibrate_pair(
    runner: CellRunner, pair: str, profile: Profile, *, full: bool = False, store: CalibrationStore | None = None
) -> PairCalibration:
    """Measure once per pair and process; ``full`` adds what per-cell predictions need.
    With ``store``, a stored calibration of the same provenance is reused, and a fresh one kept."""
    key = (runner.run_id, pair)
    cached = _cache.get(key)
    if cached is not None and (cached.full or not full):
        return _remember(runner, cached)
    provenance = pair_provenance(runner, pair, profile) if store is not None else {}
    if store is not None:
        stored = store.find(provenance, full=full)
        if stored is not None:
            runner.ledger.record("calibration-reused", {"pair": pair, "calibration": stored.id})
            _cache[key] = stored
            return _remember(runner, stored)

    local = local_cells_profile(profile)  # after the provenance: it names the run's profile
    window_profile = window_cells_profile(profile)
    profile = cells_profile(profile)

    clean = UndisturbedCells(runner.progress)

    def cell(workload: str, mode: str, job: CellSpec) -> CellResult:
        runner.progress(f"calibrating {pair}: {workload} ({mode})")
        return clean.run([f"{workload} ({mode})"], lambda: [runner.run(job)])[0]

    def alone(workload: str, job: WorkloadSpec) -> tuple[str, CellSpec]:
        return workload, CellSpec(CALIBRATION_SCENARIO, pair, local.apply(job), mode="disconnected")

    # every local-disk cell of this calibration under one disconnection (one reconnect, one resync)
    local_cells = [alone("QD1 4k writes", write_job("randwrite", CALIBRATION_BS))] if cached is None else []
    if full:
        local_cells += [
            alone("1M writes QD16", write_job("write", MIB, iodepth=16)),
            alone("4k writes 4x QD2", write_job("randwrite", CALIBRATION_BS, numjobs=4, iodepth=2)),
        ]
    runner.progress(f"calibrating {pair}: {', '.join(w for w, _ in local_cells)} (disconnected)")
    measured = clean.run(
        [f"{w} (disconnected)" for w, _ in local_cells], lambda: runner.run_series([job for _, job in local_cells])
    )
    nodes = runner.inventory.pairs[pair]
    if cached is None:
        small = measured.pop(0)
        peer_ip = runner.inventory.nodes[nodes.secondary].replication.ip
        rtt = runner.baseline_rtt(runner.pool.get(nodes.primary), peer_ip)
        cached = PairCalibration(
            pair=pair,
            protocol=nodes.protocol,
            local_write_ms=_per_io_ms(small),
            local_iops=small.iops,
            rtt_ms=rtt.median_ms,
        )
    result = replace(
        _complete(runner, pair, profiles=(profile, window_profile), quick=cached, local=measured, cell=cell)
        if full
        else cached,
        measured_at=time.time(),
        reused=False,
        left_out=(*cached.left_out, *clean.left_out),
    )
    if clean.left_out:
        runner.ledger.record("calibration-left-out", {"pair": pair, "cells": clean.left_out})
    if store is not None and not clean.used_disturbed:
        result = store.save(result, provenance)
        runner.ledger.record("calibration-stored", {"pair": pair, "calibration": result.id})
    _cache[key] = result
    return _remember(runner, result)


def _remember(runner: CellRunner, calibration: PairCalibration) -> PairCalibration:
    """The pair's path RTT, for the validity certificates of its later cells."""
    runner.rtt_reference[calibration.pair] = calibration.path_rtt_ms
    return calibration


def _complete(
    runner: CellRunner,
    pair: str,
    *,
    profiles: tuple[Profile, Profile],
    quick: PairCalibration,
    local: list[CellResult],
    cell: _Cell,
) -> PairCalibration:
    profile, window_profile = profiles
    big, capacity = local
    replicated = cell(
        "QD1 4k writes",
        "replicated",
        CellSpec(CALIBRATION_SCENARIO, pair, profile.apply(write_job("randwrite", CALIBRATION_BS))),
    )
    replicated_capacity = cell(
        "4k writes 8x QD2",
        "replicated",
        CellSpec(
            CALIBRATION_SCENARIO, pair, profile.apply(write_job("randwrite", CALIBRATION_BS, numjobs=8, iodepth=2))
        ),
    )
    replicated_big = cell(
        "1M writes QD16",
        "replicated",
        CellSpec(CALIBRATION_SCENARIO, pair, window_profile.apply(write_job("write", MIB, iodepth=16))),
    )
    nodes = runner.inventory.pairs[pair]
    primary, secondary = runner.pool.get(nodes.primary), runner.pool.get(nodes.secondary)
    notes: list[str] = []
    path_mbit = None
    peer_ip = runner.inventory.nodes[nodes.secondary].replication.ip
    path_key = (runner.run_id, nodes.primary, nodes.secondary, peer_ip, path_rate_seconds(profile))
    if path_key in _path_rates:
        path_mbit, measured_by = _path_rates[path_key]
        notes.append(f"path rate measured by {measured_by}'s calibration (same nodes and replication addresses)")
    elif has_iperf3(primary) and has_iperf3(secondary):
        runner.progress(f"calibrating {pair}: replication path rate (iperf3)")
        path_mbit = measure_path_rate(primary, secondary, peer_ip, seconds=path_rate_seconds(profile)) / 1e6
        _path_rates[path_key] = (path_mbit, pair)
    else:
        notes.append("iperf3 is not installed on both nodes: the path rate comes from the catalog")
    return replace(
        quick,
        local_mib_s=big.bw_mib_s,
        local_capacity_iops=max(capacity.iops, quick.local_iops),
        path_mbit=path_mbit,
        replicated_write_ms=_per_io_ms(replicated),
        replicated_rtt_ms=_rtt_ms(replicated, quick),
        replicated_capacity_iops=max(replicated_capacity.iops, replicated.iops),
        replicated_mib_s=replicated_big.bw_mib_s,
        replicated_mib_s_rtt_ms=_rtt_ms(replicated_big, quick),
        tcp_window_bytes=read_window(primary, secondary),
        notes=tuple(notes),
    )
