"""Fidelity: the bandwidth the harness reports for a cell against the same fio job run by hand
on the node (the harness's own argv, same device, no harness around it), alternating runs.
Measured, summarised and rendered here, for ``harness bench`` and ``harness bench overhead``."""

from __future__ import annotations

import itertools
import shlex
import statistics
from collections.abc import Sequence
from typing import Any

from tabulate import tabulate

from harness.cell import CellRunner, CellSpec
from harness.fio.profiles import PROFILES
from harness.fio.report import parse_fio_json
from harness.fio.workloads import for_profile, write_job
from harness.progress import Progress
from harness.remote.nodefiles import node_run_dir
from harness.units import MIB

__all__ = ["fidelity_runs", "fidelity_summary", "render_fidelity"]


def _harness_argv(runner: CellRunner, output: str) -> list[str]:
    """The argv of the harness's latest fio (from its ``fio-start`` ledger event), writing its
    JSON to ``output`` instead: the same job, flags and device, the bandwidth log included."""
    starts = [e for e in runner.ledger.entries() if e.get("event") == "fio-start"]
    argv = shlex.split(starts[-1]["argv"])
    return [f"--output={output}" if a.startswith("--output=") else a for a in argv]


def fidelity_runs(runner: CellRunner, pair: str, repeats: int, progress: Progress) -> list[dict[str, Any]]:
    """Harness cell vs the identical fio job (the harness's own argv) run by hand, alternating
    which goes first, so that any drift falls on both sides.

    10 s runs: on a noisy 2-core host a 5 s run moves ±5 % by itself, which would hide any
    systematic difference the harness makes."""
    workload = for_profile(PROFILES["quick"], write_job("write", MIB, iodepth=16)).replace(runtime_s=10)
    primary = runner.pool.get(runner.inventory.pairs[pair].primary)
    out = []
    for i in range(repeats):
        path = f"{node_run_dir(runner.run_id)}/by-hand-{i}.json"

        def by_hand_run(path: str = path) -> float:
            primary.run(_harness_argv(runner, path), timeout=120)
            return parse_fio_json(primary.run(["cat", path], timeout=30).stdout).write.bytes_per_s / MIB

        # odd runs go by hand first (with the previous harness cell's argv)
        by_hand = by_hand_run() if i % 2 else 0.0
        result = runner.run(CellSpec("bench-fidelity", pair, workload, repeat=i))
        by_hand = by_hand if i % 2 else by_hand_run()
        delta = 100.0 * (result.bw_mib_s - by_hand) / by_hand
        out.append({"run": i, "harness_mib_s": result.bw_mib_s, "by_hand_mib_s": by_hand, "delta_pct": delta})
        progress(f"bench: fidelity {i}: harness {result.bw_mib_s:.1f} vs by hand {by_hand:.1f} MiB/s")
    return out


def _pct(a: float, b: float) -> float:
    return 100.0 * abs(a - b) / b if b else float("nan")


def fidelity_summary(runs: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Median |Δ| % harness vs by hand, and the run-to-run spread of each side alone (median
    |Δ| % between consecutive runs of the same side: the host's own noise)."""
    if not runs:
        return {}
    hand = [r["by_hand_mib_s"] for r in runs]
    harness = [r["harness_mib_s"] for r in runs]
    out = {"median_abs_delta_pct": statistics.median(abs(r["delta_pct"]) for r in runs)}
    if len(runs) > 1:
        out["by_hand_spread_pct"] = statistics.median(_pct(b, a) for a, b in itertools.pairwise(hand))
        out["harness_spread_pct"] = statistics.median(_pct(b, a) for a, b in itertools.pairwise(harness))
    return out


def render_fidelity(runs: Sequence[dict[str, Any]]) -> str:
    """The fidelity runs as a table, then their summary; empty without runs."""
    if not runs:
        return ""
    rows = [[f["run"], f["harness_mib_s"], f["by_hand_mib_s"], f["delta_pct"]] for f in runs]
    table = tabulate(rows, headers=["fidelity run", "harness MiB/s", "by hand MiB/s", "Δ %"], floatfmt=".2f")
    summary = "\n".join(f"{key.replace('_', ' ')}: {value:.2f}" for key, value in fidelity_summary(runs).items())
    return (
        f"{table}\n\n{summary}"
        + "\n(spread: median |Δ| between consecutive runs of the same side, the host's own noise)"
    )
