"""``harness lab bench``: figures about the lab itself, printed, never asserted.

Per cycle: ``up`` wall time, host memory per guest, the RTT matrix, the raw write rate of a
scratch disk inside a guest (fio, 1 MiB direct writes), and ``down`` wall time with a
leftover check.  A noisy 2-core machine moves these numbers; that is why they are a
benchmark and not a test.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from tabulate import tabulate

from harness.fio import FioResult, WorkloadSpec, build_fio_argv, parse_fio_json
from harness.inventory import load_inventory
from harness.lab.lifecycle import Lab
from harness.lab.status import guest_memory_mib, measure_rtt_matrix
from harness.progress import Progress, quiet
from harness.units import MIB

__all__ = ["run_bench"]

_BENCH_OUTPUT = "/tmp/harness-lab-bench.json"


def _scratch_write(lab: Lab, node: str, device: str) -> FioResult:
    spec = WorkloadSpec(name="lab-bench", rw="write", bs=MIB, size=256 * MIB, iodepth=16)
    argv = build_fio_argv(spec, device, _BENCH_OUTPUT)
    with lab.connections((lab.topology.guest(node),)) as conns:
        conns[node].run(argv, timeout=120)
        return parse_fio_json(conns[node].get_text(_BENCH_OUTPUT))


def _one_cycle(lab: Lab, progress: Progress) -> dict[str, Any]:
    t0 = time.monotonic()
    lab.up()
    up_s = time.monotonic() - t0
    memory = {g.name: guest_memory_mib(lab, g.name) for g in lab.topology.guests}
    with lab.connections(lab.topology.nodes) as conns:
        rtt = measure_rtt_matrix(lab, conns, count=50)
    node = sorted(lab.inventory.nodes)[0]
    devices = lab.inventory.nodes[node].scratch_devices
    disk = _scratch_write(lab, node, devices[0]) if devices else None
    t1 = time.monotonic()
    leftovers = lab.down()
    down_s = time.monotonic() - t1
    progress(f"bench: up {up_s:.1f} s, down {down_s:.2f} s")
    return {
        "up_s": round(up_s, 2),
        "down_s": round(down_s, 2),
        "memory_mib": {k: round(v, 1) if v is not None else None for k, v in memory.items()},
        "rtt_ms": rtt,
        "scratch_write_mib_s": round(disk.write.bytes_per_s / MIB, 1) if disk else None,
        "leftovers": leftovers,
    }


def run_bench(inventory: Path, *, cycles: int, as_json: bool, progress: Progress) -> int:
    lab = Lab(load_inventory(inventory), inventory, progress=quiet)
    if lab.state() is not None:
        progress("bench: a lab is up; taking it down first")
        lab.down()
    results = [_one_cycle(lab, progress) for _ in range(cycles)]
    if as_json:
        print(json.dumps({"cycles": results}, indent=2, sort_keys=True))
        return 0 if not any(r["leftovers"] for r in results) else 5

    def med(values: list[float]) -> str:
        return f"{statistics.median(values):.2f} (min {min(values):.2f}, max {max(values):.2f})"

    rows: list[list[object]] = [
        ["lab up (4 nodes + router, DRBD ready), s", med([r["up_s"] for r in results])],
        ["lab down, s", med([r["down_s"] for r in results])],
        ["leftovers after down", sum(len(r["leftovers"]) for r in results)],
    ]
    for guest in results[0]["memory_mib"]:
        vals = [r["memory_mib"][guest] for r in results if r["memory_mib"][guest] is not None]
        if vals:
            rows.append([f"host memory of {guest} after boot, MiB", med(vals)])
    for pair in results[0]["rtt_ms"]:
        rows.append([f"RTT {pair} (median of 50 pings), ms", med([r["rtt_ms"][pair] for r in results])])
    writes = [r["scratch_write_mib_s"] for r in results if r["scratch_write_mib_s"] is not None]
    if writes:
        rows.append(["scratch disk 1M direct write in a guest, MiB/s", med(writes)])
    print(tabulate(rows, headers=[f"lab benchmark ({cycles} cycles)", "median (range)"]))
    sys.stdout.flush()
    return 0
