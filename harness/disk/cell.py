"""One disk-study cell: a workload on a node's raw scratch device, a RAID0 over several, or a
file on a fresh filesystem — the bottom of the stack, before anyone blames replication.

The life of a cell (each change has its undo registered first, undone on every exit path):

1. lock the node (and, on the lab, take the host alone: disk studies are CPU-heavy);
2. guard every scratch device the layout uses (inventory-named, unmounted, unheld, no
   partitions or signatures, backing no DRBD resource, big enough) — reads included;
3. build the layout: ``mdadm --create`` an md RAID0, or ``mkfs`` + mount + pre-allocate a file;
4. precondition: fill the target to a percentage with sequential writes (when asked);
5. run fio detached under its node-side deadline, collect its JSON in the same round trip, the
   node's (and on the lab the host's) pressure read just before and after it: the cell's
   validity certificate, recorded beside its figures (a study has no bound for it to void);
6. tear the layout down (stop and wipe the array; unmount and wipe the filesystem) and
   record the samples: columns of the study tables are the layout labels (``raw``,
   ``raid0x2``, ``xfs``, ``raw-fill99``), rows the workloads.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from harness.cell import CellRunner
from harness.cell.certificate import CellCertificate, cell_certificate, read_ends
from harness.cell.outcome import CellOutcome, MeasuredRates
from harness.disk.layout import DiskLayout, fill_argv
from harness.errors import ConfigError, InfraError
from harness.fio.job import FioJob
from harness.fio.outcome import FioOutcome
from harness.fio.result import DirectionStats, FioResult
from harness.fio.samples import fio_values
from harness.fio.spec import WorkloadSpec
from harness.remote import Runner
from harness.remote.nodefiles import node_run_dir, safe_token
from harness.rules.bounds import BoundResult
from harness.runfiles.samples import METRICS, Sample
from harness.safety.device import guard_scratch_device
from harness.units import MIB

__all__ = ["DiskCellResult", "DiskCellRunner", "DiskCellSpec", "PreparedTarget", "StudySpec"]

T = TypeVar("T")

#: room a fresh filesystem needs beside the fio file (journal, metadata)
_FS_SLACK = 64 * MIB


@dataclass(frozen=True)
class DiskCellSpec:
    scenario: str
    node: str
    layout: DiskLayout
    workload: WorkloadSpec
    fill_pct: int | None = None  # precondition: fill the target to this % first
    repeat: int = 0

    def __post_init__(self) -> None:
        if self.fill_pct is not None and not 1 <= self.fill_pct <= 100:
            raise ConfigError(f"fill percentage must be 1..100, got {self.fill_pct}")
        if self.fill_pct is not None and self.layout.kind == "fs":
            raise ConfigError("preconditioning fills a block device; use a raw or RAID0 layout")

    @property
    def mode(self) -> str:
        """The table column: layout label, plus the fill level when preconditioned."""
        return self.layout.label + (f"-fill{self.fill_pct}" if self.fill_pct is not None else "")

    @property
    def id(self) -> str:
        return "-".join([self.node, self.mode, self.workload.id()] + ([f"r{self.repeat}"] if self.repeat else []))


@dataclass
class DiskCellResult(CellOutcome, MeasuredRates):
    spec: DiskCellSpec
    fio: FioResult
    stats: DirectionStats
    verdict: BoundResult
    metadata: dict[str, Any]
    samples: list[Sample] = field(default_factory=list)
    wall_s: float = 0.0

    PROPERTY_KEYS = ("node", "mode", "workload", "devices", "steady_state")


@dataclass(frozen=True)
class PreparedTarget:
    """A built layout, ready for an engine: the node, what to point the engine at (a device,
    a pre-allocated file or a mount point: ``kind``), the cell's undo stack, device sizes, and
    when the cell got its locks (``time.monotonic()``: its wall time counts from there)."""

    node: Runner
    target: str
    kind: str
    undo: ExitStack
    sizes: dict[str, int]
    started: float


def _needed_per_device(spec: DiskCellSpec) -> int:
    footprint = spec.workload.footprint_bytes
    if spec.layout.kind == "raid0":
        return -(-footprint // len(spec.layout.devices)) + MIB
    if spec.layout.kind == "fs":
        return footprint + _FS_SLACK
    return footprint


class StudySpec(Protocol):
    """A disk-study cell of any engine: where it ran and on what layout."""

    @property
    def scenario(self) -> str: ...

    @property
    def node(self) -> str: ...

    @property
    def layout(self) -> DiskLayout: ...

    @property
    def repeat(self) -> int: ...

    @property
    def mode(self) -> str: ...


class DiskCellRunner:
    """Runs disk-study cells with the connections, ledger, fio runner, samples and locks of a
    :class:`~harness.cell.CellRunner` (one run, one set of records)."""

    def __init__(self, cells: CellRunner) -> None:
        self.cells = cells

    def run(self, spec: DiskCellSpec, *, test_id: str = "") -> DiskCellResult:
        with self.prepared(
            spec.id,
            spec.node,
            spec.layout,
            needed_bytes=_needed_per_device(spec),
            file_bytes=spec.workload.footprint_bytes,
        ) as ready:
            steady = None
            if spec.fill_pct is not None:
                self._fill(ready.node, spec, ready.target, ready.sizes)
            outcome, certificate = self.certified(
                ready.node, lambda: self._fio(ready.node, spec, ready.target, ready.kind, ready.undo)
            )
            states = [g.steady_state for g in outcome.result.groups if g.steady_state is not None]
            if states:
                steady = all(state.attained for state in states)
        wall = time.monotonic() - ready.started
        result = self._finish(spec, outcome, wall=wall, steady=steady, test_id=test_id, certificate=certificate)
        self.cells.record_series(result.metadata, outcome.bw_logs, [])
        return result

    def certified(self, node: Runner, engine: Callable[[], T]) -> tuple[T, CellCertificate]:
        """``engine`` run between two readings of ``node``'s (and the lab host's) pressure: what
        it returned and the window's certificate."""
        opened = read_ends([node], self.cells.host_probe)
        done = engine()
        closed = read_ends([node], self.cells.host_probe)
        return done, cell_certificate(opened, closed, self.cells.inventory.validity)

    @contextmanager
    def prepared(
        self, cell_id: str, node_name: str, layout: DiskLayout, *, needed_bytes: int, file_bytes: int | None
    ) -> Iterator[PreparedTarget]:
        """Lock the node, guard every device of ``layout``, build it, and tear it down on exit.

        A filesystem layout gets a pre-allocated file of ``file_bytes`` for fio, or none at all
        with ``None`` (an engine that makes its own files: bonnie++); the target is then the
        mount point.
        """
        inventory = self.cells.inventory
        if node_name not in inventory.nodes:
            raise ConfigError(f"unknown node {node_name!r} (inventory has {sorted(inventory.nodes)})")
        scratch = inventory.nodes[node_name].scratch_devices
        with self.cells.locked([node_name]), self.cells.host_slot([node_name], exclusive=True):
            started = time.monotonic()  # the cell's wall time: from holding its locks
            node = self.cells.pool.get(node_name)
            sizes = {}
            for device in layout.devices:
                self.cells.progress(f"{cell_id}: checking scratch device {device} on {node_name}")
                facts = guard_scratch_device(node, device=device, scratch=scratch, needed_bytes=needed_bytes)
                sizes[device] = facts.size_bytes or 0
            # short (an md name holds at most 32 characters) and unique within the run
            token = f"{self.cells.run_id[-4:].lower()}-{time.time_ns() // 1_000_000 % 10**7}"
            with ExitStack() as undo:
                target, kind = self._build(node, cell_id, layout, token=token, undo=undo, file_bytes=file_bytes)
                yield PreparedTarget(node, target, kind, undo, sizes, started)

    # -- layout -----------------------------------------------------------------------------
    def _build(
        self,
        node: Runner,
        cell_id: str,
        layout: DiskLayout,
        *,
        token: str,
        undo: ExitStack,
        file_bytes: int | None,
    ) -> tuple[str, str]:
        """Create the layout; returns (fio filename or mount point, target kind)."""
        ledger, node_name = self.cells.ledger, node.name
        if layout.kind == "raw":
            return layout.devices[0], "block"
        if layout.kind == "raid0":
            md = layout.md_path(token)
            ledger.record("md-create", {"node": node_name, "array": md, "members": list(layout.devices)})
            undo.callback(self._run_undo, node, "md-remove", md, layout.md_teardown_script(token))
            self.cells.progress(f"{cell_id}: creating {md} over {', '.join(layout.devices)}")
            node.run(layout.md_create_argv(token), timeout=60)
            # fio gets the kernel name: /dev/md/<name> is a udev-style alias that may lag
            real = node.run(["readlink", "-e", md], timeout=15).stdout.strip()
            if not real.startswith("/dev/md"):
                raise InfraError(f"{node_name}: {md} resolves to {real!r}, not an md device")
            return real, "block"
        mountpoint = f"{node_run_dir(self.cells.run_id)}/mnt-{token}"
        ledger.record("mkfs", {"node": node_name, "device": layout.devices[0], "fstype": layout.fstype})
        undo.callback(self._run_undo, node, "fs-remove", layout.devices[0], layout.fs_teardown_script(mountpoint))
        self.cells.progress(f"{cell_id}: mkfs.{layout.fstype} {layout.devices[0]}")
        node.run(layout.mkfs_argv(), timeout=300)
        if file_bytes is None:
            node.run_script(layout.mount_script(mountpoint), timeout=120)
            return mountpoint, "directory"
        file = f"{mountpoint}/fio.dat"
        node.run_script(layout.mount_script(mountpoint, file, file_bytes), timeout=120)
        return file, "file"

    def _run_undo(self, node: Runner, event: str, what: str, script: str) -> None:
        self.cells.ledger.record(event, {"node": node.name, "target": what})
        done = node.run_script(script, timeout=120, check=False)
        if not done.ok:
            raise InfraError(f"{node.name}: tearing down {what} failed: {done.stderr.strip() or done.stdout.strip()}")

    def _fill(self, node: Runner, spec: DiskCellSpec, target: str, sizes: dict[str, int]) -> None:
        assert spec.fill_pct is not None
        total = node.run(["blockdev", "--getsize64", target], timeout=15).stdout.strip()
        size = int(total) if total.isdigit() else sum(sizes.values())
        fill = size * spec.fill_pct // 100 // MIB * MIB
        self.cells.progress(f"{spec.id}: filling {target} to {spec.fill_pct}% ({fill // MIB} MiB)")
        self.cells.ledger.record("precondition", {"node": spec.node, "target": target, "bytes": fill})
        out = f"{node_run_dir(self.cells.run_id)}/fill-{safe_token(spec.id)}.json"
        # a generous node-side bound: 20 MiB/s would be a very slow disk
        node.run_script(
            f"mkdir -p {shlex.quote(node_run_dir(self.cells.run_id))} && {shlex.join(fill_argv(target, fill, out))}",
            timeout=120 + fill / (20 * MIB),
        )

    # -- fio --------------------------------------------------------------------------------
    def _fio(self, node: Runner, spec: DiskCellSpec, target: str, kind: str, undo: ExitStack) -> FioOutcome:
        def stop_if_running(job: FioJob) -> None:
            if not job.exited:
                job.stop()

        job = self.cells.fio.start(
            node,
            spec.workload,
            target,
            safe_token(spec.id),
            target=kind,  # type: ignore[arg-type]  # "block" or "file", from _build
            bw_log=True,
            on_planned=lambda planned: undo.callback(stop_if_running, planned),
        )
        self.cells.progress(f"{spec.id}: fio running ({spec.workload.runtime_s or '?'} s)")
        return job.wait(progress=self.cells.progress)

    # -- results ----------------------------------------------------------------------------
    def study_metadata(self, spec: StudySpec, test_id: str) -> dict[str, Any]:
        """What every disk-study cell records, whatever engine measured it (fio, bonnie++)."""
        inventory = self.cells.inventory
        node = inventory.nodes[spec.node]
        facts = self.cells.facts(spec.node)
        return {
            "run_id": self.cells.run_id,
            "inventory": inventory.name,
            "test_id": test_id,
            "scenario": spec.scenario,
            # the study tables' columns are (node, layout): the node stands where a pair would
            "pair": spec.node,
            "node": spec.node,
            "mode": spec.mode,
            "impairment": "none",
            "repeat": spec.repeat,
            "placement": "local",
            "primary": spec.node,
            "az_primary": node.az,
            "instance_type_primary": node.instance_type,
            "layout": spec.layout.kind,
            "devices": list(spec.layout.devices),
            "fstype": spec.layout.fstype,
            "kernel": facts.kernel,
            "drbd_version": facts.drbd_version,
        }

    def _finish(
        self,
        spec: DiskCellSpec,
        outcome: FioOutcome,
        *,
        wall: float,
        steady: bool | None,
        test_id: str,
        certificate: CellCertificate,
    ) -> DiskCellResult:
        facts = self.cells.facts(spec.node)
        w = spec.workload
        stats = outcome.stats
        meta: dict[str, Any] = {
            **self.study_metadata(spec, test_id),
            "workload": w.id(),
            "stripes": len(spec.layout.devices),
            "fill_pct": spec.fill_pct,
            "rw": w.rw,
            "bs": w.bs if w.bs_max is None else f"{w.bs}-{w.bs_max}",
            "numjobs": w.numjobs,
            "iodepth": w.iodepth,
            "size": w.size,
            "runtime_s": w.runtime_s,
            "steady_state": None if steady is None else ("attained" if steady else "not attained"),
            "fio_version": facts.fio_version,
        }
        values = fio_values(outcome, wall=wall)
        if steady is not None:
            values["ss_attained"] = 1.0 if steady else 0.0
        reason = f"{spec.layout.label} on {', '.join(spec.layout.devices)}"
        if steady is not None:
            reason += f"; steady state {meta['steady_state']}"
        verdict = BoundResult("pass", reason)
        meta["verdict"] = verdict.verdict
        meta["verdict_reason"] = verdict.reason
        meta.update(certificate.properties())
        samples = [Sample(metric, value, METRICS[metric], meta) for metric, value in values.items()]
        self.cells.store.append(samples)
        self.cells.ledger.record("cell-done", {"cell": spec.id, "verdict": verdict.verdict})
        return DiskCellResult(spec, outcome.result, stats, verdict, meta, samples, wall)
