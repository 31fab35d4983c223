"""Step 3 of a cell: one call into fio, returning one :class:`Measurement`.

fio runs detached under a node-side deadline (:mod:`harness.fio.runner`); what is left here is
the replication's watch and the impairment's proof around it.  The round trip that starts fio
also starts the event watch (and, with nothing impaired, measures the RTT just before fio); the
round trip that sees fio exit also stops the watch and clears the primary's impairment
(:class:`~harness.cell.fault.ImpairedPath`; the cell's undo clears what that did not confirm).
That round trip also closes the cell's validity window (:mod:`.certificate`): the primary's
pressure snapshot and, before the impairment is cleared, the path's ping after fio; the
secondary's snapshot and the lab host's follow at once.  The stop of fio and of the watch is
registered before either starts, so every exit path stops them.
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass

from harness.cell.certificate import PRESSURE, HostProbe, Readings, node_print, pressure_reads, read_ends
from harness.cell.fault import ImpairedPath
from harness.cell.guard import Target
from harness.cell.reconnect import check_faults, with_reconnect
from harness.cell.spec import CellSpec
from harness.errors import ConnectionLost, HarnessError, InfraError
from harness.fio.job import FioFailed, FioJob
from harness.fio.outcome import FioOutcome
from harness.fio.runner import FioRunner, fio_deadline_s
from harness.probes.rtt import RttStats, parse_ping, ping_argv
from harness.progress import Progress
from harness.remote import CommandResult, Shell
from harness.remote.nodefiles import safe_token
from harness.replication import EventWatch, Replication, WindowVerdict
from harness.runfiles.ledger import Ledger

__all__ = ["RTT_AFTER", "Measurement", "Measurer"]

#: the name of the ping after fio in the exit round trip
RTT_AFTER = "ping_after"


@dataclass(frozen=True)
class Measurement:
    """What fio and the watch brought back: fio's outcome (its report, its own wall time on the
    node, its bandwidth logs), the RTT (measured under the impairment, or just before fio; None
    if neither), the window's verdict (None: no watch, replication was cut on purpose), the
    close of the validity window and the path's RTT after fio (None: not pinged)."""

    fio: FioOutcome
    rtt: RttStats | None
    window: WindowVerdict | None
    window_end: Readings | None = None
    rtt_after: RttStats | None = None


def with_replication_state(exc: FioFailed, replication: Replication) -> FioFailed:
    """A fio that hit its deadline is most often writing to a frozen device (fencing, lost
    quorum, suspended I/O): the error says what the replication was doing then.  Nothing is
    resumed: unfreezing a device the product froze could hide the fault or lose writes."""
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
    """Runs the fio of the cells of one run (one per process); ``ledger`` is the run's, which
    holds the faults in place when a connection is lost."""

    def __init__(
        self,
        fio: FioRunner,
        run_id: str,
        *,
        ledger: Ledger,
        deadman_grace_s: float,
        progress: Progress,
        host_probe: HostProbe | None = None,
    ) -> None:
        self.fio = fio
        self.run_id = run_id
        self.ledger = ledger
        self.deadman_grace_s = deadman_grace_s
        self.progress = progress
        self.host_probe = host_probe

    def measure(self, spec: CellSpec, target: Target, undo: ExitStack, impaired: ImpairedPath | None) -> Measurement:
        """fio under the watch; an ``impaired`` path's proof is pinged in fio's start round trip,
        and its primary's side cleared in the round trip that sees fio exit."""
        watch = self._watch(spec, target)
        # The RTT rides the round trip that starts fio, just before fio: under an impairment it
        # is the proof the fault took (judged as soon as fio runs, and a failed proof stops fio
        # through the undo); unimpaired it is only reported.
        ping = impaired is not None or spec.mode == "replicated"
        job = self.fio.start(
            target.primary,
            spec.workload,
            target.pair.device,
            safe_token(spec.id),
            bw_log=True,
            preamble=_preamble(target, watch, ping=ping),
            # registered before fio (and the watcher) start on the node: an interrupt during the
            # start still stops both
            on_planned=lambda planned: undo.callback(_stop_if_running, planned, watch),
        )
        rtt = _start_rtt(target, impaired, job.preamble_output) if ping else None
        self.progress(f"{spec.id}: fio running ({spec.workload.runtime_s or '?'} s)")
        outcome = self._wait(spec, target, job, watch, impaired, ping=ping)
        end = self._close_window(target, outcome.after_exit)
        if "state" in outcome.after_exit:
            _check_still_alone(spec, target.replication, outcome.after_exit["state"].stdout)
        window = watch.judge(outcome.after_exit["events"].stdout) if watch is not None else None
        after = _parsed_ping(outcome.after_exit[RTT_AFTER].stdout) if RTT_AFTER in outcome.after_exit else None
        return Measurement(outcome, rtt, window, end, after)

    def _close_window(self, target: Target, exit_reads: Mapping[str, CommandResult]) -> Readings:
        """The primary's snapshot from the exit round trip, the secondary's and the host's now."""
        mine, why = node_print(target.primary.name, exit_reads)
        rest = read_ends([target.secondary], self.host_probe)
        return Readings({**mine, **rest.nodes}, rest.host, (*why, *rest.problems))

    def _watch(self, spec: CellSpec, target: Target) -> EventWatch | None:
        """The replication's event watch of a replicated cell (None: the replication is cut)."""
        if spec.mode != "replicated":
            return None
        # the watcher outlives fio's deadline by the dead-man grace, then stops by itself
        seconds = fio_deadline_s(spec.workload) + self.deadman_grace_s
        return target.replication.watch(self.run_id, safe_token(spec.id), max_duration_s=seconds)

    def _wait(
        self,
        spec: CellSpec,
        target: Target,
        job: FioJob,
        watch: EventWatch | None,
        impaired: ImpairedPath | None,
        *,
        ping: bool,
    ) -> FioOutcome:
        """fio's outcome; the exit round trip also stops the watch, probes a cut replication,
        closes the validity window and clears the primary's impairment (settled before fio's
        report is judged)."""
        try:
            return job.wait(
                progress=self.progress,
                after_exit=_exit_reads(spec, target, watch, impaired, ping=ping),
                on_exit=impaired.settle if impaired is not None else None,
            )
        except ConnectionLost as lost:
            if job.exited:  # lost while reading fio's log after it ended: fio's own error
                raise
            raise self._lost(spec, job, lost) from None
        except FioFailed as exc:
            raise with_replication_state(_with_events(exc, job, watch), target.replication) from None

    def _lost(self, spec: CellSpec, job: FioJob, lost: ConnectionLost) -> InfraError:
        """fio's output and the window's events may be incomplete: the cell fails, after holding
        the node's faults against the ledger; the undo then stops fio."""
        active = self.ledger.open_faults()
        return InfraError(
            f"{job.node.name}: SSH connection lost while fio ran for {spec.id} ({lost}); the measurement "
            f"is lost; {check_faults(job.node, self.run_id, active)}"
        )


def _preamble(target: Target, watch: EventWatch | None, *, ping: bool) -> str:
    """The shell that runs just before fio in its start round trip: the RTT probe, then the
    watch's start."""
    preamble = watch.start_script() if watch is not None else ""
    if ping:
        preamble = f"{_ping(target)}; {preamble}"
    return preamble


def _ping(target: Target) -> str:
    # netem adds a constant delay, so ten replies show the minimum the proof needs
    return shlex.join(ping_argv(target.peer_ip, count=10, interval_s=0.005))


def _parsed_ping(output: str) -> RttStats | None:
    """A ping's RTT, or None when it printed none (it costs the certificate a figure, no more)."""
    with contextlib.suppress(ValueError):
        return parse_ping(output)
    return None


def _start_rtt(target: Target, impaired: ImpairedPath | None, ping_output: str) -> RttStats | None:
    """The RTT the start round trip measured: an impairment's proof (a fault that did not take
    raises, and the undo stops fio and clears the fault), else only reported."""
    if impaired is not None:
        return impaired.proof.judge(target.primary.name, target.peer_ip, ping_output)
    # A failed probe costs the cell its RTT, not its measurement: fio is running.
    return _parsed_ping(ping_output)


def _exit_reads(
    spec: CellSpec, target: Target, watch: EventWatch | None, impaired: ImpairedPath | None, *, ping: bool
) -> dict[str, Shell]:
    """What the round trip that sees fio exit does besides collecting fio: stop the watch,
    probe a cut replication, close the validity window (the path's ping while the impairment
    is still in place, then the pressure snapshot), and (last) clear the primary's impairment."""
    reads: dict[str, Shell] = {}
    if watch is not None:
        reads["events"] = Shell(watch.stop_script())
    if spec.mode == "disconnected":
        # a peer that came back during the run made it a replicated measurement
        reads["state"] = Shell(shlex.join(target.replication.state_probe()))
    if ping:
        reads[RTT_AFTER] = Shell(_ping(target))
    reads[PRESSURE] = pressure_reads()[PRESSURE]
    if impaired is not None:
        # last: after fio's output and the watch are read
        reads.update(impaired.exit_batch())
    return reads


def _stop_if_running(job: FioJob, watch: EventWatch | None) -> None:
    """The undo of fio and its watch; nothing once fio has exited (the exit round trip stopped
    the watch).  Reconnects (bounded) when the connection dropped: stopping twice is harmless."""
    if job.exited:
        return
    with_reconnect(job.stop)
    if watch is not None:
        with_reconnect(lambda: job.node.run_script(watch.stop_script(), timeout=30, check=False))


def _with_events(exc: FioFailed, job: FioJob, watch: EventWatch | None) -> FioFailed:
    """Beside fio's log tail and the kernel's: what the replication did meanwhile, from the
    watch's capture the exit round trip brought back (none when fio never exited)."""
    if job.exit_outputs is None or watch is None:
        return exc
    events = watch.judge(job.exit_outputs["events"].stdout)
    return FioFailed(f"{exc}; replication events on {job.node.name}: {events.reason}")


def _check_still_alone(spec: CellSpec, replication: Replication, state_output: str) -> None:
    """Refuse a disconnected cell whose replication was connected again when fio ended."""
    state = replication.read_state(state_output)
    if state is not None and state.connected:
        raise InfraError(
            f"{spec.id}: {replication.node}'s {replication.resource} was connected to its peer again when fio "
            f"ended ({', '.join(state.words)}): the cell measured replicated writes, not the node alone"
        )
