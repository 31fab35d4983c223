"""Step 5 of a cell, the record: metadata with provenance, samples, the ledger, the series.

Every sample carries its provenance, so a number is compared only with its like: fio, kernel
and replication versions read on the primary once per process, protocol, AZs, instance types,
the measured RTT and the run id.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.cell.spec import CellSpec
from harness.errors import ConfigError
from harness.inventory.models import Inventory
from harness.probes.rtt import RttStats
from harness.probes.toolversions import PROBES, node_versions
from harness.progress import Progress
from harness.remote import CommandResult, run_batch
from harness.remote.pool import NodePool
from harness.replication import read_product_version, version_probe
from harness.rules.bounds import BoundResult
from harness.runfiles.ledger import Ledger
from harness.runfiles.samples import METRICS, Sample, SampleStore
from harness.runfiles.series import CellSeries, FaultWindow, SeriesStore, series_from_framed_logs

__all__ = ["NodeFacts", "Recorder", "fault_windows", "os_release_name"]


@dataclass(frozen=True)
class NodeFacts:
    fio_version: str
    kernel: str
    drbd_version: str
    distro: str = ""  # os-release's PRETTY_NAME, e.g. "Debian GNU/Linux 11 (bullseye)"
    #: the other tools the harness drives, as each printed its version (harness.probes.toolversions)
    tools: str = ""


#: node-side tools recorded beside fio, the kernel and DRBD
_TOOLS = ("tc", "iperf3", "ping", "ssh")


def os_release_name(text: str) -> str:
    """The distribution an ``/etc/os-release`` names (PRETTY_NAME, else NAME VERSION_ID)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            fields[key.strip()] = value.strip().strip("'\"")
    return fields.get("PRETTY_NAME") or " ".join(v for v in (fields.get("NAME"), fields.get("VERSION_ID")) if v)


def fault_windows(spec: CellSpec) -> list[FaultWindow]:
    """When the cell's fault was in place, in fio's time (for the bandwidth plots)."""
    if spec.impairment is None:
        return []
    # in place from before fio started (through the ramp) until after it ended
    runtime = spec.workload.runtime_s or 0
    return [FaultWindow(-float(spec.workload.ramp_s), runtime + 1.0, spec.impairment.describe())]


class Recorder:
    """Records the cells of one run (one per process)."""

    def __init__(
        self,
        inventory: Inventory,
        *,
        run_id: str,
        run_dir: Path,
        pool: NodePool,
        store: SampleStore,
        ledger: Ledger,
        progress: Progress,
    ) -> None:
        self.inventory = inventory
        self.run_id = run_id
        self.run_dir = run_dir
        self.pool = pool
        self.store = store
        self.ledger = ledger
        self.progress = progress
        self._facts: dict[str, NodeFacts] = {}

    def facts(self, node_name: str) -> NodeFacts:
        if node_name not in self._facts:
            node = self.pool.get(node_name)
            probes = {
                "fio": ["fio", "--version"],
                "kernel": ["uname", "-r"],
                "drbd": version_probe(),
                "os": ["cat", "/etc/os-release"],
                **{f"v_{tool}": argv for tool, argv in PROBES.items() if tool in _TOOLS},
            }
            res = run_batch(node, probes, timeout=30)
            seen = node_versions({k[2:]: v for k, v in res.items() if k.startswith("v_")})
            self._facts[node_name] = NodeFacts(
                res["fio"].stdout.strip() or "missing",
                res["kernel"].stdout.strip(),
                read_product_version(res["drbd"].stdout),
                os_release_name(res["os"].stdout),
                " · ".join(seen[tool] for tool in _TOOLS if tool in seen),
            )
        return self._facts[node_name]

    def metadata(self, spec: CellSpec, rtt: RttStats | None, test_id: str) -> dict[str, Any]:
        inv = self.inventory
        pair = inv.pairs[spec.pair]
        prim, sec = inv.nodes[pair.primary], inv.nodes[pair.secondary]
        facts = self.facts(pair.primary)
        w = spec.workload
        return {
            "run_id": self.run_id,
            "inventory": inv.name,
            "test_id": test_id,
            "scenario": spec.scenario,
            "pair": spec.pair,
            "mode": spec.mode,
            "workload": w.id(),
            "impairment": spec.impairment_name,
            "impairment_detail": spec.impairment.as_metadata() if spec.impairment else None,
            "repeat": spec.repeat,
            "placement": "local" if spec.mode == "disconnected" else inv.placement(spec.pair),
            "primary": pair.primary,
            "secondary": pair.secondary,
            "az_primary": prim.az,
            "az_secondary": sec.az,
            "instance_type_primary": prim.instance_type,
            "instance_type_secondary": sec.instance_type,
            "protocol": spec.protocol or pair.protocol,
            "replication": pair.replication,
            "resource": pair.resource,
            "rw": w.rw,
            "bs": w.bs if w.bs_max is None else f"{w.bs}-{w.bs_max}",
            "numjobs": w.numjobs,
            "iodepth": w.iodepth,
            "size": w.size,
            "runtime_s": w.runtime_s,
            "rtt_ms": round(rtt.median_ms, 3) if rtt else None,
            "fio_version": facts.fio_version,
            "fio_version_secondary": self.facts(pair.secondary).fio_version,
            "kernel": facts.kernel,
            "drbd_version": facts.drbd_version,
            # each node's distribution: a pair's two nodes may run different releases
            "distro_primary": facts.distro,
            "distro_secondary": self.facts(pair.secondary).distro,
            # tc, iperf3, ping and ssh as each node printed them: a pair may mix releases
            "tools_primary": facts.tools,
            "tools_secondary": self.facts(pair.secondary).tools,
        }

    def record(
        self,
        cell: str,
        values: dict[str, float],
        meta: dict[str, Any],
        *,
        verdict: BoundResult,
        validity: BoundResult,
    ) -> list[Sample]:
        """Stamp the verdict on ``meta``, append one sample per value, note the cell done.  The
        replication's own window goes in ``replication_window``; ``validity`` is the cell's
        certificate (already in ``meta``)."""
        meta["verdict"] = verdict.verdict
        meta["verdict_reason"] = verdict.reason
        meta["replication_window"] = validity.reason
        samples = [Sample(metric, value, METRICS[metric], meta) for metric, value in values.items()]
        self.store.append(samples)
        self.ledger.record("cell-done", {"cell": cell, "verdict": verdict.verdict})
        return samples

    def record_series(self, metadata: dict[str, Any], logs: CommandResult | None, windows: list[FaultWindow]) -> None:
        """Append the cell's per-second bandwidth (from fio's logs) to ``series.ndjson``; a
        log that cannot be read costs the plot, never the cell."""
        if logs is None or not logs.stdout.strip():
            return
        try:
            values = series_from_framed_logs(
                logs.stdout, ddir="write" if metadata.get("rw", "").endswith("write") else "read"
            )
            series = CellSeries(
                test_id=str(metadata.get("test_id", "")),
                scenario=str(metadata["scenario"]),
                pair=str(metadata["pair"]),
                workload=str(metadata["workload"]),
                impairment=str(metadata.get("impairment") or "none"),
                mode=str(metadata["mode"]),
                repeat=int(metadata.get("repeat") or 0),
                interval_s=1.0,
                bw_mib_s=tuple(values),
                windows=tuple(windows),
            )
        except (ConfigError, ValueError) as exc:
            self.progress(f"{metadata.get('workload')}: no bandwidth series ({exc})")
            return
        SeriesStore(self.run_dir / "series.ndjson").append(series)
