"""A bonnie++ cell of the filesystem study: bonnie++ on a fresh filesystem of a scratch device.

The seed study measured each volume with fio and with bonnie++.  This cell is bonnie++'s half:
the same guarded scratch device and the same fresh xfs/ext4 as fio's filesystem cells
(:meth:`~harness.disk.cell.DiskCellRunner.prepared`: lock, guard, mkfs and mount, undo on
every exit path), but no pre-allocated file: bonnie++ makes its own files in a directory.  It
runs once per cell and records one table row per bonnie++ phase (``bonnie-seq-output-block``,
``bonnie-random-seeks``, ``bonnie-seq-create`` …) beside fio's rows, in the same columns.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

from harness.bonnie import BONNIE_ENGINE, BonnieResult, bonnie_values, job_for_memory, meminfo_total_kib
from harness.bonnie.result import parse_bonnie_csv
from harness.cell.certificate import CellCertificate
from harness.cell.outcome import CellOutcome, junit_properties, property_name
from harness.disk.cell import DiskCellRunner
from harness.disk.layout import DiskLayout
from harness.errors import ConfigError, InfraError
from harness.rules.bounds import BoundResult
from harness.runfiles.samples import METRICS, Sample
from harness.units import MIB

__all__ = ["BonnieCellResult", "BonnieCellRunner", "BonnieCellSpec"]

#: room a fresh filesystem needs beside bonnie++'s files (journal, metadata)
_FS_SLACK = 64 * MIB
#: the slowest disk the node-side deadline allows for: bonnie++ passes over its file five
#: times (per-char and block writes, rewrite, two reads), then runs the file phases
_FLOOR_BYTES_PER_S = 20 * MIB
_FILE_PHASES_S = 600.0


@dataclass(frozen=True)
class BonnieCellSpec:
    scenario: str
    node: str
    layout: DiskLayout
    #: files of the create/stat/delete phases, in units of 1024 (bonnie++'s ``-n``, default 16)
    files_k: int = 16
    repeat: int = 0

    def __post_init__(self) -> None:
        if self.layout.kind != "fs":
            raise ConfigError("bonnie++ runs on a filesystem: use a DiskLayout of kind 'fs'")

    @property
    def mode(self) -> str:
        return self.layout.label

    @property
    def id(self) -> str:
        return "-".join([self.node, self.mode, "bonnie"] + ([f"r{self.repeat}"] if self.repeat else []))


@dataclass
class BonnieCellResult(CellOutcome):
    spec: BonnieCellSpec
    result: BonnieResult
    verdict: BoundResult
    metadata: dict[str, Any]
    samples: list[Sample] = field(default_factory=list)
    wall_s: float = 0.0

    PROPERTY_KEYS: ClassVar[tuple[str, ...]] = ("node", "mode", "engine", "bonnie_version", "bonnie_file_size")

    def properties(self) -> list[tuple[str, str]]:
        """JUnit properties named ``<row>.<metric>_<unit>``: every bonnie++ phase records ``bw``
        or ``ops``, so the metric alone would repeat."""
        metrics = ((f"{s.metadata['workload']}.{property_name(s.metric, s.unit)}", s.value) for s in self.samples)
        rest: list[tuple[str, object]] = [("verdict", self.verdict.verdict), ("verdict_reason", self.verdict.reason)]
        rest += [(key, self.metadata.get(key)) for key in self.PROPERTY_KEYS]
        return junit_properties(metrics, rest)


class BonnieCellRunner:
    """Runs bonnie++ cells with a :class:`~harness.disk.cell.DiskCellRunner`'s locks, guard and layouts."""

    def __init__(self, disk: DiskCellRunner) -> None:
        self.disk = disk
        self.cells = disk.cells

    def run(self, spec: BonnieCellSpec, *, test_id: str = "") -> BonnieCellResult:
        node = self.cells.pool.get(spec.node)
        meminfo = node.run(["cat", "/proc/meminfo"], timeout=15, sudo=False).stdout
        label = f"{spec.node}-{spec.mode}"
        # the directory is known once the filesystem is mounted; the size is known now
        plan = job_for_memory("/run/harness/bonnie", label, meminfo_total_kib(meminfo), spec.files_k)
        with self.disk.prepared(
            spec.id, spec.node, spec.layout, needed_bytes=plan.footprint_bytes + _FS_SLACK, file_bytes=None
        ) as ready:
            job = dataclasses.replace(plan, directory=f"{ready.target}/bonnie")
            self.cells.ledger.record("bonnie-start", {"node": spec.node, "directory": job.directory})
            deadline = _FILE_PHASES_S + 5 * plan.size_mib * MIB / _FLOOR_BYTES_PER_S
            self.cells.progress(f"{spec.id}: bonnie++ -s {job.size_mib} MiB -n {job.files_k} (up to {deadline:.0f} s)")
            out, certificate = self.disk.certified(
                node, lambda: node.run_script(job.script(), timeout=deadline, check=False)
            )
            if out.exit_code != 0:
                raise InfraError(
                    f"{spec.node}: bonnie++ exited {out.exit_code}: {out.stderr.strip()[-400:] or '(no message)'}"
                )
            result = parse_bonnie_csv(out.stdout)[-1]
            wall = time.monotonic() - ready.started
        return self._finish(spec, result, wall, test_id, certificate)

    def _finish(
        self, spec: BonnieCellSpec, result: BonnieResult, wall: float, test_id: str, certificate: CellCertificate
    ) -> BonnieCellResult:
        verdict = BoundResult("pass", f"bonnie++ on {spec.layout.label} on {spec.layout.devices[0]}")
        base: dict[str, Any] = {
            **self.disk.study_metadata(spec, test_id),
            "engine": BONNIE_ENGINE,
            "bonnie_version": result.version,
            "bonnie_file_size": result.file_size,
            "bonnie_files_k": result.num_files_k,
            "bonnie_too_fast": [p.name for p in result.phases if p.too_fast],
            "verdict": verdict.verdict,
            "verdict_reason": verdict.reason,
            "wall_s": wall,
            **certificate.properties(),
        }
        samples = [
            Sample(metric, value, METRICS[metric], {**base, "workload": row})
            for row, values in bonnie_values(result).items()
            for metric, value in values.items()
        ]
        self.cells.store.append(samples)
        self.cells.ledger.record("cell-done", {"cell": spec.id, "verdict": verdict.verdict})
        return BonnieCellResult(spec, result, verdict, base, samples, wall)
