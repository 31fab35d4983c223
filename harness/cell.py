"""One measurement cell: a workload on a pair, in a mode, under an impairment.

The life of a cell (every step that changes a node has its undo registered first):

1. lock both nodes (a file lock per node, a second guard beside xdist's grouping);
2. check DRBD is Connected/UpToDate and the target passes the device guard;
3. ``disconnected`` mode: ``drbdadm disconnect`` (undo: connect and wait for resync);
4. measure the baseline RTT, apply the impairment on the nodes the profile names, read it
   back, and check the RTT moved by what the profile adds (else abort: the fault did not take);
5. watch ``drbdsetup events2`` while fio runs detached with a node-side deadline;
6. undo everything (in reverse order, on every exit path), judge validity from the events,
   turn the fio JSON into samples, judge the bounds.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import shlex
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from filelock import FileLock

from harness.bounds import BoundResult, absolute_bounds_for, check_absolute, combine, inconclusive
from harness.connections import ConnectionPool
from harness.drbd.events import resource_from_events2
from harness.drbd.state import ResourceState
from harness.drbd.validity import check_capture
from harness.errors import ConfigError, InfraError
from harness.fio.result import DirectionStats, FioResult
from harness.fio.runner import FioRun, FioRunner, fio_deadline_s
from harness.fio.spec import WorkloadSpec
from harness.impair.apply import AppliedImpairment, Impairer, ImpairmentMismatch
from harness.impair.profile import NetemProfile
from harness.inventory.models import Inventory
from harness.ledger import Ledger
from harness.nodefiles import node_run_dir, safe_token
from harness.outcome import CellOutcome, MeasuredRates
from harness.reboot import boot_id_argv, watch_reboots
from harness.remote import CommandResult, Runner, Shell, run_batch
from harness.rtt import RttStats, parse_ping, ping_argv
from harness.safety.device import guard_drbd_device
from harness.samples import METRICS, Sample, SampleStore
from harness.series import CellSeries, FaultWindow, SeriesStore, bw_logs_script, series_from_framed_logs

__all__ = ["CellContext", "CellResult", "CellRunner", "CellSpec", "MeasuredRates", "NodeFacts", "fio_values"]

Mode = Literal["replicated", "disconnected"]
Progress = Callable[[str], None]
#: adds model values to a finished cell: (spec, measured RTT or None, measured metric values)
#: -> (extra metric values, extra metadata), stored with the cell's own samples (one metadata)
Annotator = Callable[["CellSpec", RttStats | None, dict[str, float]], tuple[dict[str, float], dict[str, Any]]]


@dataclass(frozen=True)
class CellSpec:
    """What to measure."""

    scenario: str
    pair: str
    workload: WorkloadSpec
    mode: Mode = "replicated"
    impairment: NetemProfile | None = None
    repeat: int = 0

    @property
    def impairment_name(self) -> str:
        return self.impairment.name if self.impairment else "none"

    @property
    def id(self) -> str:
        parts = [self.pair, self.workload.id()]
        if self.mode != "replicated":
            parts.append(self.mode)
        if self.impairment:
            parts.append(self.impairment.name)
        if self.repeat:
            parts.append(f"r{self.repeat}")
        return "-".join(parts)


@dataclass(frozen=True)
class NodeFacts:
    fio_version: str
    kernel: str
    drbd_version: str


@dataclass(frozen=True)
class CellContext:
    """What extra checks of a scenario get to see (measured RTT, the node facts, the result)."""

    spec: CellSpec
    rtt: RttStats
    fio: FioResult
    stats: DirectionStats


@dataclass
class CellResult(CellOutcome):
    spec: CellSpec
    fio: FioResult
    stats: DirectionStats
    rtt: RttStats
    verdict: BoundResult
    validity: BoundResult
    metadata: dict[str, Any]
    samples: list[Sample] = field(default_factory=list)
    wall_s: float = 0.0

    PROPERTY_KEYS = (
        "pair",
        "placement",
        "protocol",
        "workload",
        "impairment",
        "mode",
        "fio_version",
        "kernel",
        "drbd_version",
        "run_id",
    )


def _ms(us: float | None) -> float:
    return float("nan") if us is None else us / 1000.0


def fio_values(stats: DirectionStats, *, wall: float, fio_wall: float | None) -> dict[str, float]:
    """The metrics every cell records from fio's report and its own timing (MiB/s, IOPS,
    completion latencies in ms, fio's runtime, the cell's wall time and harness overhead)."""
    return {
        "bw": stats.bytes_per_s / 2**20,
        "iops": stats.iops,
        "clat_mean": _ms(stats.clat_mean_us),
        "clat_p50": _ms(stats.clat_p50_us),
        "clat_p99": _ms(stats.clat_p99_us),
        "clat_p999": _ms(stats.clat_p99_9_us),
        "runtime": stats.runtime_ms / 1000.0,
        "wall": wall,
        # harness overhead: everything in the cell's wall time that is not fio running
        "overhead": wall - fio_wall if fio_wall is not None else float("nan"),
    }


class CellRunner:
    """Runs cells for one run of one inventory in one process (one per xdist worker)."""

    def __init__(
        self,
        inventory: Inventory,
        *,
        run_id: str,
        run_dir: Path,
        pool: ConnectionPool,
        store: SampleStore,
        ledger: Ledger,
        lock_dir: Path,
        progress: Progress = lambda _m: None,
        health_timeout_s: float = 120.0,
        deadman_grace_s: float = 90.0,
        host_guard: Path | None = None,
    ) -> None:
        self.inventory = inventory
        self.run_id = run_id
        self.run_dir = run_dir
        self.pool = pool
        self.store = store
        self.ledger = ledger
        self.lock_dir = lock_dir
        self.progress = progress
        self.health_timeout_s = health_timeout_s
        # A fault removes itself this long after the cell's fio deadline, should the harness
        # die or lose SSH without clearing it.
        self.deadman_grace_s = deadman_grace_s
        # The embedded lab shares one 2-core host between all guests: a CPU-heavy cell in one
        # xdist worker starves a latency-sensitive cell in the other (p99 stalls of 50-200 ms,
        # IOPS halved).  With a guard file, heavy cells run alone (exclusive flock) while light
        # ones may overlap each other (shared flock).  Real clusters do not need it.
        self.host_guard = host_guard
        self.impairer = Impairer(run_id, ledger)
        self.fio = FioRunner(run_id, ledger)
        self._facts: dict[str, NodeFacts] = {}
        self._baseline_rtt: dict[tuple[str, str], RttStats] = {}
        self._resolved: dict[tuple[str, str], tuple[str, str]] = {}

    @classmethod
    def standalone(cls, inventory: Inventory, run_dir: Path, **options: Any) -> CellRunner:
        """A runner with its own run id, connections, samples, ledger and locks under
        ``run_dir`` (for tools and tests outside a pytest run)."""
        from harness.runid import new_run_id

        run_id = new_run_id()
        return cls(
            inventory,
            run_id=run_id,
            run_dir=run_dir,
            pool=ConnectionPool(inventory),
            store=SampleStore(run_dir / "samples.ndjson"),
            ledger=Ledger(run_dir / "ledger.ndjson", run_id),
            lock_dir=run_dir / "locks",
            **options,
        )

    # -- facts and checks -------------------------------------------------------------------
    def facts(self, node_name: str) -> NodeFacts:
        if node_name not in self._facts:
            node = self.pool.get(node_name)
            res = run_batch(
                node,
                {"fio": ["fio", "--version"], "kernel": ["uname", "-r"], "drbd": ["cat", "/proc/drbd"]},
                timeout=30,
            )
            drbd_first = res["drbd"].stdout.splitlines()[0] if res["drbd"].stdout else ""
            drbd_version = drbd_first.split()[1] if drbd_first.startswith("version:") else "unknown"
            self._facts[node_name] = NodeFacts(
                res["fio"].stdout.strip() or "missing", res["kernel"].stdout.strip(), drbd_version
            )
        return self._facts[node_name]

    def resource_state(self, node: Runner, resource: str) -> ResourceState:
        text = node.run(["drbdsetup", "events2", "--now", "--statistics", resource], timeout=30).stdout
        state = resource_from_events2(text, resource)
        if state is None:
            raise InfraError(f"{node.name}: DRBD resource {resource} is not configured (events2 shows nothing)")
        return state

    def wait_healthy(self, node: Runner, resource: str, deadline_s: float) -> ResourceState:
        end = time.monotonic() + deadline_s
        while True:
            state = self.resource_state(node, resource)
            if not state.problems():
                return state
            if time.monotonic() > end:
                raise InfraError(
                    f"{node.name}: DRBD resource {resource} not healthy after {deadline_s:.0f} s: "
                    + "; ".join(state.problems())
                )
            time.sleep(0.5)

    def probe_rtt(self, node: Runner, dest: str, count: int = 20) -> RttStats:
        res = node.run(ping_argv(dest, count=count, interval_s=0.01), timeout=30, check=False)
        try:
            return parse_ping(res.stdout)
        except ValueError as exc:
            raise InfraError(f"{node.name}: RTT probe to {dest} failed: {exc}") from None

    # -- locks and undo ---------------------------------------------------------------------
    @staticmethod
    def is_heavy(spec: CellSpec) -> bool:
        """CPU-heavy on a UML lab: anything but a single small replicated stream.  Calibration
        cells count as heavy too: they measure the pair's parts, which must not share the host
        with another cell."""
        w = spec.workload
        return (
            spec.mode != "replicated"
            or spec.scenario == "calibration"
            or w.max_bs >= 64 * 1024
            or w.numjobs * w.iodepth >= 4
        )

    @contextmanager
    def host_slot(self, *, exclusive: bool) -> Iterator[None]:
        """Hold the host guard (no-op without one); see ``host_guard``."""
        if self.host_guard is None:
            yield
            return
        self.host_guard.parent.mkdir(parents=True, exist_ok=True)
        with open(self.host_guard, "a+") as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            try:
                yield
            finally:
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)

    @contextmanager
    def locked(self, nodes: Sequence[str]) -> Iterator[None]:
        """Hold the per-node file locks of ``nodes`` (a second guard beside xdist's grouping)."""
        self.lock_dir.mkdir(parents=True, exist_ok=True)
        with ExitStack() as stack:
            for name in sorted(set(nodes)):  # sorted: no lock-order deadlock between workers
                lock = FileLock(str(self.lock_dir / f"{self.inventory.name}-{name}.lock"))
                stack.enter_context(lock)
            yield

    # -- the cell -------------------------------------------------------------------------
    def run(
        self,
        spec: CellSpec,
        *,
        extra_checks: Callable[[CellContext], list[BoundResult]] | None = None,
        test_id: str = "",
        annotate: Annotator | None = None,
    ) -> CellResult:
        if spec.pair not in self.inventory.pairs:
            raise ConfigError(f"unknown pair {spec.pair!r} (inventory has {sorted(self.inventory.pairs)})")
        pair = self.inventory.pairs[spec.pair]
        with self.locked([pair.primary, pair.secondary]), self.host_slot(exclusive=self.is_heavy(spec)):
            start = time.monotonic()  # after the locks: waiting for another cell is not overhead
            nodes = self.pool.open_all([pair.primary, pair.secondary])
            primary, secondary = nodes[pair.primary], nodes[pair.secondary]
            self.progress(f"{spec.id}: checking {pair.resource} and {pair.device} on {pair.primary}")
            # One round trip: DRBD state and every device-guard probe.
            facts = guard_drbd_device(
                primary,
                resource=pair.resource,
                device=pair.device,
                needed_bytes=spec.workload.footprint_bytes,
                extra={
                    "events": ["drbdsetup", "events2", "--now", "--statistics", pair.resource],
                    "boot_id": boot_id_argv(),
                },
            )
            state = resource_from_events2(facts.extra["events"].stdout, pair.resource)
            if state is None or state.problems():
                self.wait_healthy(primary, pair.resource, self.health_timeout_s)
            peer_ip = self.inventory.nodes[pair.secondary].replication.ip
            # a node that reboots mid-cell loses its qdiscs and fio: the cell must say so (row 29);
            # checked after the undo below has run
            with (
                watch_reboots([primary, secondary], known={pair.primary: facts.extra["boot_id"].stdout}),
                ExitStack() as undo,
            ):
                if spec.mode == "disconnected":
                    self.ledger.record("drbd-disconnect", {"node": pair.primary, "resource": pair.resource})
                    undo.callback(self._reconnect, primary, pair.resource)
                    primary.run(["drbdadm", "disconnect", pair.resource], timeout=60)
                rtt: RttStats | None = None
                if spec.impairment is not None:
                    base_rtt = self.baseline_rtt(primary, peer_ip)
                    self._apply_impairment(spec, primary, secondary, undo)
                    rtt = self.probe_rtt(primary, peer_ip)
                    self._check_rtt(spec, base_rtt, rtt)
                watch_log, preamble = self._watch(pair.resource, spec) if spec.mode == "replicated" else (None, "")
                ping_in_preamble = spec.impairment is None and spec.mode == "replicated"
                if ping_in_preamble:
                    # Nothing depends on this RTT before fio starts: measure it in the same
                    # round trip, just before fio.
                    preamble = f"{shlex.join(ping_argv(peer_ip, count=10, interval_s=0.005))}; {preamble}"
                finished = False

                def stop_if_running(planned: FioRun) -> None:
                    if not finished:
                        self.fio.stop(primary, planned)
                        if watch_log:
                            primary.run_script(self._stop_watch_script(watch_log), timeout=30, check=False)

                def register_stop(planned: FioRun) -> None:
                    undo.callback(stop_if_running, planned)

                run = self.fio.start(
                    primary,
                    spec.workload,
                    pair.device,
                    safe_token(spec.id),
                    bw_log=True,
                    preamble=preamble,
                    # registered before fio (and the watcher) start on the node (CLEAN-1)
                    on_planned=register_stop,
                )
                if ping_in_preamble:
                    # A failed probe costs the cell its RTT, not its measurement: fio is running.
                    with contextlib.suppress(ValueError):
                        rtt = parse_ping(run.preamble_output)
                self.progress(f"{spec.id}: fio running ({spec.workload.runtime_s or '?'} s)")
                # fio's exit, its JSON, its timings and the DRBD events of the run (watcher
                # stopped) come back in the same round trip.
                collect: dict[str, Shell] = {
                    "fio": Shell(self.fio.output_script(run)),
                    "times": Shell(self.fio.times_script(run)),
                }
                if watch_log:
                    collect["events"] = Shell(self._stop_watch_script(watch_log))
                if run.bw_log_prefix:
                    collect["bw"] = Shell(bw_logs_script(run.bw_log_prefix))
                rc, out = self.fio.wait_exit(primary, run, progress=self.progress, after_exit=collect)
                finished = True
                fio_result = self.fio.parse(primary, run, rc, out["fio"].stdout)
                events = out["events"].stdout if "events" in out else ""
                fio_wall = self.fio.process_seconds(out["times"].stdout)
            validity = self._validity(spec, events)
            wall = time.monotonic() - start
        result = self._finish(
            spec,
            fio=fio_result,
            rtt=rtt,
            validity=validity,
            wall=wall,
            fio_wall=fio_wall,
            extra_checks=extra_checks,
            annotate=annotate,
            test_id=test_id,
        )
        windows = []
        if spec.impairment is not None:
            # in place from before fio started (through the ramp) until after it ended
            runtime = spec.workload.runtime_s or 0
            windows.append(FaultWindow(-float(spec.workload.ramp_s), runtime + 1.0, spec.impairment.describe()))
        self.record_series(result.metadata, out.get("bw"), windows)
        return result

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

    def baseline_rtt(self, primary: Runner, peer_ip: str) -> RttStats:
        """Unimpaired RTT of a path, measured once per process (it is a property of the path)."""
        key = (primary.name, peer_ip)
        if key not in self._baseline_rtt:
            self._baseline_rtt[key] = self.probe_rtt(primary, peer_ip)
        return self._baseline_rtt[key]

    def _apply_impairment(self, spec: CellSpec, primary: Runner, secondary: Runner, undo: ExitStack) -> None:
        assert spec.impairment is not None
        pair = self.inventory.pairs[spec.pair]
        hold = fio_deadline_s(spec.workload) + self.deadman_grace_s
        for role, node in (("primary", primary), ("secondary", secondary)):
            other = pair.secondary if role == "primary" else pair.primary
            self.impairer.apply(
                node,
                iface=self.inventory.nodes[node.name].replication.iface,
                peer_ip=self.inventory.nodes[other].replication.ip,
                profile=spec.impairment,
                hold_s=hold,
                role=role,  # type: ignore[arg-type]
                # the undo is registered before the node is touched (CLEAN-1)
                on_planned=functools.partial(self._register_clear, undo, node),
            )

    def _check_rtt(self, spec: CellSpec, base: RttStats, measured: RttStats) -> None:
        """netem adds a constant delay, so the *minimum* RTT moves by exactly what the profile
        adds; medians also carry host scheduling noise (on a busy 2-core lab host about a
        millisecond), which is not the fault failing to take."""
        assert spec.impairment is not None
        added_ms = spec.impairment.added_rtt_s * 1e3
        expected = base.min_ms + added_ms
        jitter_ms = spec.impairment.jitter_s * 1e3 * spec.impairment.impaired_directions
        tolerance = 0.10 * expected + 0.3 + jitter_ms
        if abs(measured.min_ms - expected) > tolerance:
            raise ImpairmentMismatch(
                f"{spec.id}: minimum RTT {measured.min_ms:.2f} ms after applying {spec.impairment.describe()}, "
                f"expected {expected:.2f} ± {tolerance:.2f} ms (baseline minimum {base.min_ms:.2f} ms)"
            )

    def _register_clear(self, undo: ExitStack, node: Runner, planned: AppliedImpairment) -> None:
        undo.callback(self._clear, node, planned)

    def _clear(self, node: Runner, applied: AppliedImpairment) -> None:
        self.impairer.clear(node, applied)

    def _reconnect(self, primary: Runner, resource: str) -> None:
        self.ledger.record("drbd-connect", {"node": primary.name, "resource": resource})
        primary.run(["drbdadm", "connect", resource], timeout=60, check=False)
        # Writes made while disconnected resync now; the next cell must start healthy.
        self.wait_healthy(primary, resource, 300.0)

    def _watch(self, resource: str, spec: CellSpec) -> tuple[str, str]:
        """Log path and the shell that starts a node-side ``events2`` watcher (bounded by
        ``timeout``, so it cannot outlive a crashed harness)."""
        base = node_run_dir(self.run_id)
        log = f"{base}/events-{safe_token(spec.id)}.log"
        seconds = fio_deadline_s(spec.workload) + self.deadman_grace_s
        inner = (
            f"timeout {seconds:.0f} drbdsetup events2 --timestamps --statistics {shlex.quote(resource)} "
            f"> {shlex.quote(log)} 2>&1"
        )
        start = (
            f"{{ setsid sh -c {shlex.quote(inner)} </dev/null >/dev/null 2>&1 & echo $! > {shlex.quote(log)}.pid; }}"
        )
        return log, start

    @staticmethod
    def _stop_watch_script(log: str) -> str:
        pid = shlex.quote(log + ".pid")
        return (
            f'if [ -e {pid} ]; then pkill -TERM -s "$(cat {pid})" 2>/dev/null; rm -f {pid}; fi; '
            f"cat {shlex.quote(log)} 2>/dev/null; true"
        )

    def _validity(self, spec: CellSpec, events: str) -> BoundResult:
        if spec.mode != "replicated":
            return BoundResult("pass", "disconnected by design")
        if not events.strip():
            return inconclusive("no DRBD events captured during the run")
        verdict = check_capture(events, resource=self.inventory.pairs[spec.pair].resource)
        if verdict.status == "valid":
            return BoundResult("pass", "DRBD stayed Connected/UpToDate")
        return inconclusive(f"DRBD state changed during the run: {verdict}")

    # -- results --------------------------------------------------------------------------
    def _metadata(self, spec: CellSpec, rtt: RttStats | None, test_id: str) -> dict[str, Any]:
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
            "protocol": pair.protocol,
            "resource": pair.resource,
            "rw": w.rw,
            "bs": w.bs if w.bs_max is None else f"{w.bs}-{w.bs_max}",
            "numjobs": w.numjobs,
            "iodepth": w.iodepth,
            "size": w.size,
            "runtime_s": w.runtime_s,
            "rtt_ms": round(rtt.median_ms, 3) if rtt else None,
            "fio_version": facts.fio_version,
            "kernel": facts.kernel,
            "drbd_version": facts.drbd_version,
        }

    def _finish(
        self,
        spec: CellSpec,
        *,
        fio: FioResult,
        rtt: RttStats | None,
        validity: BoundResult,
        wall: float,
        fio_wall: float | None,
        extra_checks: Callable[[CellContext], list[BoundResult]] | None,
        test_id: str,
        annotate: Annotator | None = None,
    ) -> CellResult:
        stats = fio.write if spec.workload.is_write else fio.read
        meta = self._metadata(spec, rtt, test_id)
        runtime_s = stats.runtime_ms / 1000.0
        ramp = float(spec.workload.ramp_s)
        values = {
            **fio_values(stats, wall=wall, fio_wall=fio_wall),
            "rtt": rtt.median_ms if rtt else float("nan"),
            # fio's own start-up and tear-down beyond ramp + runtime (large on UML guests)
            "fio_overhead": fio_wall - runtime_s - ramp if fio_wall is not None else float("nan"),
        }
        if annotate is not None:
            extra_values, extra_meta = annotate(spec, rtt, dict(values))
            values.update(extra_values)
            meta.update(extra_meta)
        limits = self.inventory.thresholds
        checks = [
            validity,
            check_absolute(
                absolute_bounds_for(
                    f"{spec.workload.id()}@{spec.impairment_name}", limits.min_mib_s, limits.min_iops, limits.max_p99_ms
                ),
                mib_s=values["bw"],
                iops=values["iops"],
                p99_ms=values["clat_p99"],
            ),
        ]
        ctx_rtt = rtt if rtt is not None else RttStats((0.0,), 1, 1)
        if extra_checks is not None and validity.passed:
            checks += extra_checks(CellContext(spec, ctx_rtt, fio, stats))
        verdict = combine(checks)
        meta["verdict"] = verdict.verdict
        meta["verdict_reason"] = verdict.reason
        meta["validity"] = validity.reason
        samples = [Sample(metric, value, METRICS[metric], meta) for metric, value in values.items()]
        self.store.append(samples)
        self.ledger.record("cell-done", {"cell": spec.id, "verdict": verdict.verdict})
        return CellResult(spec, fio, stats, ctx_rtt, verdict, validity, meta, samples, wall)
