"""Step 3 of a cell: one call into fio, returning one :class:`Measurement`.

fio runs detached under a node-side deadline (:mod:`harness.fio.runner`).  The round trip that
starts it also starts the replication's event watch (and, with nothing impaired, measures the
RTT just before fio); the round trip that sees fio exit also stops the watch, brings back
fio's JSON, its timings, its bandwidth logs and the watch's capture, and clears the primary's
impairment (:class:`~harness.cell.fault.ImpairedPath`; the cell's undo clears what that did not
confirm).  The stop of fio and of the watch is registered before either starts, so every exit
path stops them.
"""

from __future__ import annotations

import contextlib
import shlex
from contextlib import ExitStack
from dataclasses import dataclass

from harness.cell.fault import ImpairedPath
from harness.cell.guard import Target
from harness.cell.reconnect import check_faults, with_reconnect
from harness.cell.spec import CellSpec
from harness.errors import ConnectionLost, HarnessError, InfraError
from harness.fio.result import FioResult
from harness.fio.runner import FioFailed, FioRun, FioRunner, fio_deadline_s
from harness.probes.rtt import RttStats, parse_ping, ping_argv
from harness.progress import Progress
from harness.remote import CommandResult, Shell
from harness.remote.nodefiles import safe_token
from harness.replication import EventWatch, Replication, WindowVerdict
from harness.runfiles.series import bw_logs_script

__all__ = ["Measurement", "Measurer"]


@dataclass(frozen=True)
class Measurement:
    """What fio and the watch brought back: fio's result, the RTT (measured under the
    impairment, or just before fio; None if neither), the window's verdict (None: no watch,
    replication was cut on purpose), fio's own wall time on the node and its bandwidth logs."""

    fio: FioResult
    rtt: RttStats | None
    window: WindowVerdict | None
    fio_wall_s: float | None
    bw_logs: CommandResult | None


def with_replication_state(exc: FioFailed, replication: Replication) -> FioFailed:
    """A fio that hit its deadline is most often writing to a frozen device (fencing, lost
    quorum, suspended I/O): the error says what the replication was doing then.  Nothing is
    resumed: resuming frozen I/O overrides the product's own safety decision."""
    if "deadline" not in str(exc) and "did not finish" not in str(exc):
        return exc
    try:
        state = replication.state()
    except HarnessError as probe:
        return FioFailed(f"{exc}; the replication's state could not be read: {probe}")
    problems = state.problems()
    return FioFailed(
        f"{exc}; {replication.node} then: {state.describe()}" + (f" ({'; '.join(problems)})" if problems else "")
    )


class Measurer:
    """Runs the fio of the cells of one run (one per process)."""

    def __init__(self, fio: FioRunner, run_id: str, *, deadman_grace_s: float, progress: Progress) -> None:
        self.fio = fio
        self.run_id = run_id
        self.deadman_grace_s = deadman_grace_s
        self.progress = progress

    def measure(self, spec: CellSpec, target: Target, undo: ExitStack, impaired: ImpairedPath | None) -> Measurement:
        """fio under the watch; an ``impaired`` path's proof is pinged in fio's start round trip,
        and its primary's side cleared in the round trip that sees fio exit."""
        proof = impaired.proof if impaired is not None else None
        primary = target.primary
        cell = safe_token(spec.id)
        watch: EventWatch | None = None
        preamble = ""
        rtt: RttStats | None = None
        if spec.mode == "replicated":
            # the watcher outlives fio's deadline by the dead-man grace, then stops by itself
            seconds = fio_deadline_s(spec.workload) + self.deadman_grace_s
            watch = target.replication.watch(self.run_id, cell, max_duration_s=seconds)
            preamble = watch.start_script()
        ping_in_preamble = proof is not None or spec.mode == "replicated"
        if ping_in_preamble:
            # The RTT rides the round trip that starts fio, just before fio: under an
            # impairment it is the proof the fault took (judged as soon as fio runs, and a
            # failed proof stops fio below); unimpaired it is only reported.
            # netem adds a constant delay, so ten replies show the minimum the proof needs
            argv = ping_argv(target.peer_ip, count=10, interval_s=0.005)
            preamble = f"{shlex.join(argv)}; {preamble}"
        finished = False

        def stop_if_running(planned: FioRun) -> None:
            if not finished:
                # reconnects (bounded) when the connection dropped: stopping twice is harmless
                with_reconnect(lambda: self.fio.stop(primary, planned))
                if watch is not None:
                    with_reconnect(lambda: primary.run_script(watch.stop_script(), timeout=30, check=False))

        def register_stop(planned: FioRun) -> None:
            undo.callback(stop_if_running, planned)

        run = self.fio.start(
            primary,
            spec.workload,
            target.pair.device,
            cell,
            bw_log=True,
            preamble=preamble,
            # registered before fio (and the watcher) start on the node: an interrupt at any point stops them
            on_planned=register_stop,
        )
        if proof is not None:
            # a fault that did not take: the undo stops fio and clears the fault
            rtt = proof.judge(primary.name, target.peer_ip, run.preamble_output)
        elif ping_in_preamble:
            # A failed probe costs the cell its RTT, not its measurement: fio is running.
            with contextlib.suppress(ValueError):
                rtt = parse_ping(run.preamble_output)
        self.progress(f"{spec.id}: fio running ({spec.workload.runtime_s or '?'} s)")
        collect: dict[str, Shell] = {
            "fio": Shell(self.fio.output_script(run)),
            "times": Shell(self.fio.times_script(run)),
        }
        if watch is not None:
            collect["events"] = Shell(watch.stop_script())
        if run.bw_log_prefix:
            collect["bw"] = Shell(bw_logs_script(run.bw_log_prefix))
        if spec.mode == "disconnected":
            # a peer that came back during the run made it a replicated measurement
            collect["state"] = Shell(shlex.join(target.replication.state_probe()))
        if impaired is not None:
            # last: after fio's output and the watch are read
            collect.update(impaired.exit_batch())
        try:
            try:
                rc, out = self.fio.wait_exit(primary, run, progress=self.progress, after_exit=collect)
            except ConnectionLost as lost:
                # fio's output and the window's events may be incomplete: the cell fails, after
                # holding the node's faults against the ledger (so none is forgotten); the undo then stops fio
                active = self.fio.ledger.open_faults()
                raise InfraError(
                    f"{primary.name}: SSH connection lost while fio ran for {spec.id} ({lost}); the measurement "
                    f"is lost; {check_faults(primary, self.run_id, active)}"
                ) from None
            finished = True
            if impaired is not None:
                impaired.settle(out)
            result = self.fio.parse(primary, run, rc, out["fio"].stdout)
            if "state" in out:
                _check_still_alone(spec, target.replication, out["state"].stdout)
        except FioFailed as exc:
            if finished and watch is not None and "events" in out:
                # beside fio's log tail and the kernel's: what the replication did meanwhile
                # (a frozen device explains a stuck fio), from the watch's capture the exit round trip brought back
                exc = FioFailed(
                    f"{exc}; replication events on {primary.name}: {watch.judge(out['events'].stdout).reason}"
                )
            raise with_replication_state(exc, target.replication) from None
        return Measurement(
            fio=result,
            rtt=rtt,
            window=watch.judge(out["events"].stdout if "events" in out else "") if watch is not None else None,
            fio_wall_s=self.fio.process_seconds(out["times"].stdout),
            bw_logs=out.get("bw"),
        )


def _check_still_alone(spec: CellSpec, replication: Replication, state_output: str) -> None:
    """Refuse a disconnected cell whose replication was connected again when fio ended."""
    state = replication.read_state(state_output)
    if state is not None and state.connected:
        raise InfraError(
            f"{spec.id}: {replication.node}'s {replication.resource} was connected to its peer again when fio "
            f"ended ({', '.join(state.words)}): the cell measured replicated writes, not the node alone"
        )
