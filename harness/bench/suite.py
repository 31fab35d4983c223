"""``harness bench``: how much the harness costs and how faithful its numbers are.

Printed, never asserted (a noisy 2-core host moves every figure):

* overhead per cell: the cell's wall time minus fio's own wall time on the node (harness
  cost: checks, guard, SSH round trips), and fio's start-up beyond ramp + runtime;
* fidelity: the bandwidth the harness reports for a cell against the same fio job run by
  hand on the node (same argv, synchronously, no harness around it), alternating runs;
* impairment accuracy: configured vs measured added RTT (ping medians over the replication
  path) and configured vs measured rate (iperf3 between the pair's replication addresses).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tabulate import tabulate

from harness.bench.fidelity import fidelity_runs, render_fidelity
from harness.cell import CellRunner, CellSpec
from harness.errors import ConfigError
from harness.fio.profiles import PROFILES
from harness.fio.workloads import for_profile, write_job
from harness.impair.apply import Impairer
from harness.impair.profile import NetemProfile
from harness.inventory import Inventory
from harness.probes.pathrate import has_iperf3, measure_path_rate
from harness.probes.rtt import parse_ping, ping_argv
from harness.progress import Progress
from harness.userfiles.jsonsafe import dumps

__all__ = ["BenchReport", "bench_command", "run_harness_bench"]


@dataclass
class BenchReport:
    overhead: list[dict[str, Any]]
    fidelity: list[dict[str, Any]]
    rtt: list[dict[str, Any]]
    rate: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {"overhead": self.overhead, "fidelity": self.fidelity, "rtt": self.rtt, "rate": self.rate}

    def render(self) -> str:
        parts: list[str] = []
        if self.overhead:
            parts.append(self._table(*self._overhead_table()))
        if self.fidelity:
            parts.append(render_fidelity(self.fidelity))
        if self.rtt:
            keys = ["configured_added_ms", "baseline_ms", "measured_ms", "measured_added_ms", "error_ms", "within_spec"]
            headers = ["added RTT ms", "baseline ms", "measured ms", "measured added ms", "error ms", "±10 %+0.3 ms"]
            parts.append(self._table(headers, [[r[k] for k in keys] for r in self.rtt]))
        if self.rate:
            rows = [
                [r["configured_mbit"], r.get("measured_mbit", "n/a"), r.get("ratio", "n/a"), r.get("note", "")]
                for r in self.rate
            ]
            parts.append(self._table(["rate cap Mbit/s", "iperf3 Mbit/s", "measured/cap", "note"], rows))
        return "\n\n".join(parts)

    @staticmethod
    def _table(headers: list[str], rows: list[list[Any]]) -> str:
        return tabulate(rows, headers=headers, floatfmt=".3g")

    def _overhead_table(self) -> tuple[list[str], list[list[Any]]]:
        rows: list[list[Any]] = [
            [o["cell"], o["wall_s"], o["fio_wall_s"], o["harness_s"], o["fio_startup_s"]] for o in self.overhead
        ]
        rows.append(
            [
                "median",
                "",
                "",
                statistics.median(o["harness_s"] for o in self.overhead),
                statistics.median(o["fio_startup_s"] for o in self.overhead),
            ]
        )
        return ["cell", "wall s", "fio wall s", "harness overhead s", "fio start-up/tear-down s"], rows


def _overhead(runner: CellRunner, pair: str, repeats: int, progress: Progress) -> list[dict[str, Any]]:
    out = []
    for i in range(repeats):
        spec = CellSpec("bench", pair, for_profile(PROFILES["quick"], write_job("randwrite", 4096)), repeat=i)
        result = runner.run(spec)
        values = {s.metric: s.value for s in result.samples}
        out.append(
            {
                "cell": spec.id,
                "wall_s": values["wall"],
                "fio_wall_s": values["wall"] - values["overhead"],
                "harness_s": values["overhead"],
                "fio_startup_s": values["fio_overhead"],
            }
        )
        progress(f"bench: overhead {spec.id}: harness {values['overhead']:.2f} s")
    return out


def _rtt(runner: CellRunner, pair: str, delays_ms: list[float], progress: Progress) -> list[dict[str, Any]]:
    p = runner.inventory.pairs[pair]
    primary, secondary = runner.pool.get(p.primary), runner.pool.get(p.secondary)
    peer = runner.inventory.nodes[p.secondary].replication.ip
    impairer = Impairer(runner.run_id, runner.ledger)
    base = parse_ping(primary.run(ping_argv(peer, count=50), timeout=60).stdout).median_ms
    out = []
    for delay in delays_ms:
        profile = NetemProfile.from_rtt(f"bench-rtt{delay:g}ms", delay / 1000)
        applied = [
            impairer.apply(
                node,
                iface=runner.inventory.nodes[node.name].replication.iface,
                peer_ip=runner.inventory.nodes[other].replication.ip,
                profile=profile,
                hold_s=120,
                role=role,
            )
            for node, other, role in _roles(primary, secondary, p.primary, p.secondary)
        ]
        try:
            measured = parse_ping(primary.run(ping_argv(peer, count=50), timeout=60).stdout).median_ms
        finally:
            for node, a in zip((primary, secondary), applied, strict=True):
                if a is not None:
                    impairer.clear(node, a)
        added = measured - base
        error = added - delay
        out.append(
            {
                "configured_added_ms": delay,
                "baseline_ms": base,
                "measured_ms": measured,
                "measured_added_ms": added,
                "error_ms": error,
                "within_spec": abs(error) <= 0.1 * delay + 0.3,
            }
        )
        progress(f"bench: RTT +{delay:g} ms configured, +{added:.2f} ms measured")
    return out


def _roles(
    primary: Any, secondary: Any, pname: str, sname: str
) -> list[tuple[Any, str, Literal["primary", "secondary"]]]:
    return [(primary, sname, "primary"), (secondary, pname, "secondary")]


def _rate(runner: CellRunner, pair: str, rates_mbit: list[float], progress: Progress) -> list[dict[str, Any]]:
    p = runner.inventory.pairs[pair]
    primary, secondary = runner.pool.get(p.primary), runner.pool.get(p.secondary)
    peer = runner.inventory.nodes[p.secondary].replication.ip
    if not has_iperf3(primary) or not has_iperf3(secondary):
        return [
            {"configured_mbit": r, "note": f"iperf3 not installed on {p.primary} or {p.secondary}"} for r in rates_mbit
        ]
    impairer = Impairer(runner.run_id, runner.ledger)
    out: list[dict[str, Any]] = []
    for rate in rates_mbit:
        profile = NetemProfile(f"bench-rate{rate:g}", rate_bits=rate * 1e6, direction="primary")
        applied = impairer.apply(
            primary,
            iface=runner.inventory.nodes[p.primary].replication.iface,
            peer_ip=peer,
            profile=profile,
            hold_s=120,
            role="primary",
        )
        try:
            sent = measure_path_rate(primary, secondary, peer, seconds=5)
        finally:
            if applied is not None:
                impairer.clear(primary, applied)
        out.append({"configured_mbit": rate, "measured_mbit": sent / 1e6, "ratio": sent / (rate * 1e6)})
        progress(f"bench: rate {rate:g} Mbit/s configured, {sent / 1e6:.1f} measured")
    return out


def run_harness_bench(
    inventory: Inventory, *, pair: str, repeats: int, run_dir: Path, progress: Progress
) -> BenchReport:
    runner = CellRunner.standalone(inventory, run_dir)
    try:
        return BenchReport(
            overhead=_overhead(runner, pair, repeats, progress),
            fidelity=fidelity_runs(runner, pair, repeats, progress),
            rtt=_rtt(runner, pair, [1.0, 2.0, 5.0, 10.0], progress),
            rate=_rate(runner, pair, [50.0, 128.0, 500.0], progress),
        )
    finally:
        runner.pool.close_all()


def bench_command(
    path: Path,
    *,
    pair: str | None,
    repeats: int,
    as_json: bool,
    progress: Progress,
    what: str = "all",
    from_run: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> int:
    """``harness bench``: measure on ``pair`` (default: the first by name) of the inventory at
    ``path``, booting the embedded lab for the measurement when it is not up, and print.
    ``what="overhead"``: the per-phase cost of cells and fidelity (:mod:`harness.bench.overhead`);
    with ``from_run``, the phases of an earlier run's cells, nothing measured.  ``what="repeats"``:
    ``--repeat auto`` against a fixed count (:mod:`harness.bench.repeatbench`; ``extra`` holds its
    plan and the fixed count)."""
    import tempfile

    from harness.bench import overhead as bench_overhead
    from harness.bench.repeatbench import RepeatBench, run_repeat_bench
    from harness.inventory import load_inventory
    from harness.lab.lifecycle import Lab

    report: BenchReport | bench_overhead.OverheadReport | RepeatBench
    if from_run is not None:
        report = bench_overhead.phases_from_run(Path(from_run))
        print(dumps(report.to_json(), indent=2) if as_json else report.render())
        return 0
    inventory = load_inventory(path)
    pair = pair or sorted(inventory.pairs)[0]
    if pair not in inventory.pairs:
        raise ConfigError(f"unknown pair {pair!r}; the inventory has {', '.join(sorted(inventory.pairs))}")
    lab = Lab(inventory, path, progress=progress) if inventory.lab is not None else None
    booted = False
    if lab is not None:
        state = lab.state()
        if state is None or state.phase != "up":
            lab.down()
            lab.up()
            booted = True
    try:
        with tempfile.TemporaryDirectory(prefix="harness-bench-") as tmp:
            if what == "repeats":
                report = run_repeat_bench(
                    inventory, pair=pair, repeats=repeats, run_dir=Path(tmp), progress=progress, **(extra or {})
                )
            else:
                bench = bench_overhead.run_overhead_bench if what == "overhead" else run_harness_bench
                report = bench(inventory, pair=pair, repeats=repeats, run_dir=Path(tmp), progress=progress)
    finally:
        if lab is not None and booted:
            lab.down()
    print(dumps(report.to_json(), indent=2) if as_json else report.render())
    return 0
