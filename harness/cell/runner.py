"""A cell, from the guard to the record (:class:`CellRunner`).

The life of a cell; every step that changes a node has its undo registered first, and the undo
runs on every exit path (failure, Ctrl-C, SIGTERM):

1. **slots** — the nodes' file locks and, on the lab, the host guard (:mod:`.slots`);
2. **guard** — the target is the pair's own replicated device and the replication is healthy
   (:mod:`.guard`);
3. **fault** — cut the replication (local-disk mode) or impair its path and prove it took
   (:mod:`.fault`);
4. **fio** — one call that runs fio under the replication's event watch and returns one
   :class:`~harness.cell.measure.Measurement` (:mod:`.measure`);
5. **judge** — values, validity, bounds, the scenario's checks, and the validity certificate of
   the window from the guard to fio's exit (:mod:`.certificate`): a bound that failed while
   something else was in the way is inconclusive (:mod:`.judge`);
6. **record** — samples with provenance, the ledger, the bandwidth series (:mod:`.record`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import Any

from harness.cell.certificate import CellCertificate, HostProbe, Readings, cell_certificate, rtt_check
from harness.cell.fault import Faults
from harness.cell.features import read_missing, refuse_missing
from harness.cell.guard import Target, guard_cell, pair_replication
from harness.cell.judge import judge
from harness.cell.measure import Measurement, Measurer
from harness.cell.reconnect import recheck_after_reboot
from harness.cell.record import NodeFacts, Recorder, fault_windows
from harness.cell.result import CellResult
from harness.cell.slots import CellSlots, is_heavy
from harness.cell.spec import Annotator, CellContext, CellSpec
from harness.errors import ConfigError, InfraError
from harness.fio.runner import FioRunner
from harness.impair.apply import DEFAULT_DEADMAN_GRACE_S
from harness.inventory.models import Inventory
from harness.probes.reboot import NodeRebooted, watch_reboots
from harness.probes.rtt import RttStats
from harness.progress import Progress, quiet
from harness.remote import CommandResult, Runner
from harness.remote.pool import ConnectionPool, NodePool
from harness.replication import Replication
from harness.rules.bounds import BoundResult
from harness.rules.inconclusive import DEFAULT_POLICY, Policy
from harness.runfiles.ledger import Ledger
from harness.runfiles.samples import SampleStore
from harness.runfiles.series import FaultWindow

__all__ = ["CellRunner"]


class CellRunner:
    """Runs cells for one run of one inventory in one process (one per xdist worker)."""

    def __init__(
        self,
        inventory: Inventory,
        *,
        run_id: str,
        run_dir: Path,
        pool: NodePool,
        store: SampleStore,
        ledger: Ledger,
        lock_dir: Path,
        progress: Progress = quiet,
        health_timeout_s: float = 120.0,
        deadman_grace_s: float = DEFAULT_DEADMAN_GRACE_S,
        host_guard: Path | None = None,
        node_cpus: Mapping[str, int] | None = None,
        allow_disconnecting: bool = False,
        host_probe: HostProbe | None = None,
        inconclusive_policy: Policy = DEFAULT_POLICY,
    ) -> None:
        self.inventory = inventory
        self.run_id = run_id
        self.run_dir = run_dir
        self.pool = pool
        self.store = store
        self.ledger = ledger
        self.progress = progress
        self.health_timeout_s = health_timeout_s
        self.deadman_grace_s = deadman_grace_s
        self.fio = FioRunner(run_id, ledger)
        self.slots = CellSlots(inventory.name, lock_dir, host_guard, node_cpus)
        self.faults = Faults(
            inventory, run_id, ledger, deadman_grace_s=deadman_grace_s, allow_disconnecting=allow_disconnecting
        )
        #: the embedded lab's host, read at both ends of every cell's window (None: real nodes)
        self.host_probe = host_probe
        #: what a bound that failed in a disturbed window becomes (:mod:`harness.rules.inconclusive`)
        self.inconclusive_policy: Policy = inconclusive_policy
        #: each pair's calibrated replication-path RTT (ms), set by its calibration; a pair without
        #: one is held against the path's first ping of this process
        self.rtt_reference: dict[str, float] = {}
        self.measurer = Measurer(
            self.fio, run_id, ledger=ledger, deadman_grace_s=deadman_grace_s, progress=progress, host_probe=host_probe
        )
        self.recorder = Recorder(
            inventory, run_id=run_id, run_dir=run_dir, pool=pool, store=store, ledger=ledger, progress=progress
        )

    @classmethod
    def standalone(cls, inventory: Inventory, run_dir: Path, **options: Any) -> CellRunner:
        """A runner with its own run id, connections, samples, ledger and locks under
        ``run_dir`` (for tools and tests outside a pytest run)."""
        from harness.runfiles.runid import new_run_id

        run_id = new_run_id()
        return cls(
            inventory,
            run_id=run_id,
            run_dir=run_dir,
            pool=ConnectionPool(inventory.ssh_specs()),
            store=SampleStore(run_dir / "samples.ndjson"),
            ledger=Ledger(run_dir / "ledger.ndjson", run_id),
            lock_dir=run_dir / "locks",
            **options,
        )

    # -- the cell -----------------------------------------------------------------------------
    def run(
        self,
        spec: CellSpec,
        *,
        extra_checks: Callable[[CellContext], list[BoundResult]] | None = None,
        test_id: str = "",
        annotate: Annotator | None = None,
    ) -> CellResult:
        return self.run_series([spec], extra_checks=extra_checks, test_id=test_id, annotate=annotate)[0]

    def run_series(
        self,
        specs: Sequence[CellSpec],
        *,
        extra_checks: Callable[[CellContext], list[BoundResult]] | None = None,
        test_id: str = "",
        annotate: Annotator | None = None,
    ) -> list[CellResult]:
        """Cells of one pair one after another under one guard and one fault.

        Local-disk cells of a pair share one disconnection this way: each reconnect costs a
        DRBD handshake and a resync (on the lab about 2 s), and a cell after the first starts
        on a replication that is its own cut, not a healthy one.  Each cell's fio still checks,
        when it ends, that the replication stayed cut.  Only unimpaired cells share a fault
        (an impairment's proof is per cell).
        """
        if not specs:
            return []
        first = specs[0]
        if first.pair not in self.inventory.pairs:
            raise ConfigError(f"unknown pair {first.pair!r} (inventory has {sorted(self.inventory.pairs)})")
        if len(specs) > 1 and any((s.pair, s.mode, s.impairment) != (first.pair, first.mode, None) for s in specs):
            raise ConfigError("a series of cells shares one pair and one mode, and no impairment")
        pair = self.inventory.pairs[first.pair]
        for spec in specs:
            self.check_features(spec)
        # the guard checks room for the largest footprint; the slot is held as the heaviest says
        widest = max(specs, key=lambda s: s.workload.footprint_bytes)
        heaviest = next((s for s in specs if is_heavy(s)), first)
        measured: list[tuple[CellSpec, Measurement, float, dict[str, float], CellCertificate]] = []
        with self.slots.hold(heaviest, [pair.primary, pair.secondary]):
            start = time.monotonic()  # after the locks: waiting for another cell is not overhead
            # phase boundaries no other ledger event marks, for `harness bench overhead`
            marks = {"start": time.time()}
            target = guard_cell(
                self.inventory,
                self.pool,
                widest,
                health_timeout_s=self.health_timeout_s,
                progress=self.progress,
                host_probe=self.host_probe,
            )
            opened = target.window_start
            marks["guarded"] = time.time()
            # a node that reboots mid-cell loses its qdiscs and fio: the cell must say so, not
            # report a half-measured window; checked after the undo below has run
            try:
                with (
                    watch_reboots([target.primary, target.secondary], known=target.boot_ids()),
                    ExitStack() as undo,
                ):
                    undo.callback(lambda: marks.update(undone=time.time()))  # runs last: after every undo
                    impaired = self.faults.inject(first, target, undo)
                    marks["faulted"] = time.time()
                    for spec in specs:
                        if measured:  # a later cell of the series: its own span starts now
                            start, marks = time.monotonic(), dict.fromkeys(("start", "guarded", "faulted"), time.time())
                        with ExitStack() as own:  # stops this cell's fio on any exit
                            measurement = self.measurer.measure(spec, target, own, impaired)
                        certificate = self._certificate(spec, target, opened, measurement)
                        opened = measurement.window_end or Readings({})  # the next cell's window opens here
                        measured.append((spec, measurement, start, marks, certificate))
                        marks["undone"] = time.time()  # the last cell's is the fault's undo, above
            except NodeRebooted as rebooted:
                # the undo ran without the rebooted node's tc state; what did it leave on the
                # nodes, the one that did not reboot above all?
                recheck = recheck_after_reboot([target.primary, target.secondary], self.run_id)
                raise NodeRebooted(f"{rebooted}; {recheck}") from rebooted.__cause__
            end = time.monotonic()
            marks["rechecked"] = time.time()
        results = []
        for i, (spec, measurement, began, spec_marks, certificate) in enumerate(measured):
            last = i == len(measured) - 1
            wall = (end if last else measured[i + 1][2]) - began
            results.append(
                self._finish(
                    spec,
                    measurement,
                    wall=wall,
                    marks=spec_marks,
                    certificate=certificate,
                    extra_checks=extra_checks,
                    test_id=test_id,
                    annotate=annotate,
                    last=last,
                )
            )
        return results

    def _finish(
        self,
        spec: CellSpec,
        measurement: Measurement,
        *,
        wall: float,
        marks: dict[str, float],
        certificate: CellCertificate,
        extra_checks: Callable[[CellContext], list[BoundResult]] | None,
        test_id: str,
        annotate: Annotator | None,
        last: bool,
    ) -> CellResult:
        judgement = judge(
            spec,
            measurement,
            wall=wall,
            limits=self.inventory.thresholds,
            extra_checks=extra_checks,
            annotate=annotate,
            certificate=certificate.certificate,
            policy=self.inconclusive_policy,
        )
        meta = self.recorder.metadata(spec, measurement.rtt, test_id)
        meta.update(judgement.extra_metadata)
        meta.update(certificate.properties())
        samples = self.recorder.record(
            spec.id, judgement.values, meta, verdict=judgement.verdict, validity=judgement.validity
        )
        result = CellResult(
            spec,
            measurement.fio.result,
            judgement.stats,
            judgement.rtt,
            judgement.verdict,
            judgement.validity,
            meta,
            samples,
            wall,
            certificate.certificate,
        )
        self.recorder.record_series(meta, measurement.fio.bw_logs, fault_windows(spec))
        if not last:
            marks.setdefault("rechecked", marks["undone"])
        self.ledger.record(
            "cell-phases",
            {
                "cell": spec.id,
                "mode": spec.mode,
                "impairment": spec.impairment_name,
                "fio_s": measurement.fio.wall_s,
                "fio_planned_s": (spec.workload.runtime_s or 0) + spec.workload.ramp_s,
                **marks,
                "recorded": time.time(),
            },
        )
        return result

    def _certificate(
        self, spec: CellSpec, target: Target, opened: Readings, measurement: Measurement
    ) -> CellCertificate:
        """The cell's certificate, its pings held against the pair's calibrated RTT."""
        end = measurement.window_end or Readings({}, problems=("the window's end was not read",))
        check = None
        if measurement.rtt is not None or measurement.rtt_after is not None:
            path = f"{target.primary.name}-{target.pair.secondary}"
            reference = self._reference_rtt(spec.pair, target)
            check = rtt_check(spec, path, reference, measurement.rtt, measurement.rtt_after)
        return cell_certificate(opened, end, self.inventory.validity, rtt=check)

    def _reference_rtt(self, pair: str, target: Target) -> float | None:
        """The pair's calibrated path RTT, else the path's first ping of this process."""
        if pair in self.rtt_reference:
            return self.rtt_reference[pair]
        try:
            return self.baseline_rtt(target.primary, target.peer_ip).median_ms
        except InfraError:
            return None

    def check_features(self, spec: CellSpec) -> None:
        """A cell needing a feature the run's preflight found missing on a node of its pair
        raises :class:`~harness.cell.features.FeatureMissing`, before any change (the other
        cells of the run go on)."""
        pair = self.inventory.pairs[spec.pair]
        refuse_missing(spec, (pair.primary, pair.secondary), read_missing(self.run_dir))

    # -- what other cells (disk studies, calibration, the failover) share --------------------------
    def replication(self, pair: str, node: str) -> Replication:
        """The pair's replicated device on ``node`` (either side), over the current connection."""
        return pair_replication(self.pool, self.inventory.pairs[pair], node, self.inventory.nodes)

    def facts(self, node_name: str) -> NodeFacts:
        return self.recorder.facts(node_name)

    def baseline_rtt(self, primary: Runner, peer_ip: str) -> RttStats:
        """Unimpaired RTT of a path, measured once per process."""
        return self.faults.baseline_rtt(primary, peer_ip)

    def host_slot(self, nodes: Sequence[str], *, exclusive: bool) -> AbstractContextManager[None]:
        return self.slots.host_slot(nodes, exclusive=exclusive)

    def locked(self, nodes: Sequence[str]) -> AbstractContextManager[None]:
        return self.slots.locked(nodes)

    def record_series(self, metadata: dict[str, Any], logs: CommandResult | None, windows: list[FaultWindow]) -> None:
        self.recorder.record_series(metadata, logs, windows)
