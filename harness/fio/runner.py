"""Running fio on a node: detached, under a node-side deadline, output fetched from a file.

fio is a :class:`~harness.remote.DetachedJob`: its own session, wrapped in coreutils ``timeout``
(``--kill-after=10``), so it stops by itself at the deadline even when the harness is killed or
SSH drops; the harness waits for the exit-code file, then fetches the JSON output file (stdout
is not clean JSON).  :meth:`FioRunner.stop` kills the whole session on any early exit.
"""

from __future__ import annotations

import secrets
import shlex
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from harness.errors import InfraError
from harness.fio.command import Target, build_fio_argv
from harness.fio.report import parse_fio_json, parse_last_fio_report
from harness.fio.result import FioOutputError, FioResult
from harness.fio.spec import WorkloadSpec
from harness.remote import CommandResult, DetachedJob, Runner, Shell, run_batch
from harness.remote.detached import WAIT_CHUNK_S
from harness.remote.nodefiles import node_run_dir, safe_token
from harness.runfiles.ledger import Ledger

__all__ = ["FioFailed", "FioRun", "FioRunner", "fio_deadline_s"]

# fio startup, file layout and JSON writing on a slow (UML) node take several seconds.
_STARTUP_GRACE_S = 30.0
#: separates fio's log from the kernel's in the one round trip that fetches both
KERNEL_MARK = "--- kernel log ---"
#: SIGKILL this long after the deadline's SIGTERM, for a fio stuck in uninterruptible I/O
_KILL_AFTER_S: Final = 10.0


class FioFailed(InfraError):
    """fio exited non-zero, hit its deadline, or wrote no usable JSON."""


def fio_deadline_s(spec: WorkloadSpec, default_s: float = 600.0) -> float:
    """Node-side deadline: ramp + runtime + grace for time-bounded jobs, else ``default_s``."""
    if spec.runtime_s is not None:
        return float(spec.ramp_s + spec.runtime_s) + _STARTUP_GRACE_S
    return default_s


@dataclass(frozen=True)
class FioRun:
    """A started fio job on one node."""

    node: str
    cell: str
    output: str
    job: DetachedJob
    started: float
    preamble_output: str = ""
    bw_log_prefix: str | None = None  # fio's write_bw_log prefix on the node, when logging

    @property
    def log(self) -> str:
        """fio's stdout and stderr on the node."""
        assert self.job.log is not None
        return self.job.log

    @property
    def deadline_s(self) -> float:
        assert self.job.deadline_s is not None
        return self.job.deadline_s


Progress = Callable[[str], None]


def _noop(_: str) -> None:
    pass


def _current_mib_s(text: str) -> float | None:
    """Sum of the jobs' latest bandwidth-log values (``time, KiB/s, ...`` lines), in MiB/s."""
    total, seen = 0.0, False
    for line in text.splitlines():
        fields = line.split(",")
        if len(fields) >= 2:
            try:
                total += float(fields[1]) / 1024.0
                seen = True
            except ValueError:
                continue
    return total if seen else None


class FioRunner:
    """Starts, waits for and stops fio jobs of one run."""

    def __init__(self, run_id: str, ledger: Ledger) -> None:
        self.run_id = run_id
        self.ledger = ledger

    def start(
        self,
        node: Runner,
        spec: WorkloadSpec,
        filename: str,
        cell: str,
        *,
        target: Target = "block",
        deadline_s: float | None = None,
        status_interval: int | None = None,
        bw_log: bool = False,
        preamble: str = "",
        on_planned: Callable[[FioRun], None] | None = None,
    ) -> FioRun:
        """Start fio detached.  ``preamble`` is shell the caller wants run in the same round
        trip just before fio starts (e.g. starting an event watcher), to save a round trip.
        ``on_planned`` receives the job's identity before anything starts on the node, so the
        caller can register its stop first (an interrupt during this call still stops fio)."""
        base = node_run_dir(self.run_id)
        name = safe_token(cell)
        output, rc_file = f"{base}/fio-{name}.json", f"{base}/fio-{name}.rc"
        argv = build_fio_argv(
            spec,
            filename,
            output,
            status_interval=status_interval,
            extra_log_prefix=f"{base}/bw-{name}" if bw_log else None,
            target=target,
            aux_path=base,
        )
        # The times file records fio's own start and end (node clock, used only as a duration),
        # so the harness can tell its overhead from fio's start-up cost.
        job = DetachedJob.of_argv(
            argv,
            deadline_s=deadline_s if deadline_s is not None else fio_deadline_s(spec),
            kill_after_s=_KILL_AFTER_S,
            pid_file=f"{base}/fio-{name}.pid",
            log=f"{base}/fio-{name}.log",
            rc_file=rc_file,
            times_file=f"{base}/fio-{name}.times",
            # an interrupt may stop fio while this start is still on its way to the node
            cancel_file=f"{base}/fio-{name}-{secrets.token_hex(4)}.cancel",
        )
        q = shlex.quote
        script = (
            # builtins first: mkdir/rm only when needed (every exec is ~0.1 s on a UML guest)
            f"umask 077; {{ [ -d {q(base)} ] || mkdir -p {q(base)}; }} && "
            f"{{ [ ! -e {q(output)} ] && [ ! -e {q(rc_file)} ] || rm -f {q(output)} {q(rc_file)}; }} && "
            f"cd {q(base)} && {preamble + ' && ' if preamble else ''}{job.start_script()}"
        )
        self.ledger.record(
            "fio-start", {"node": node.name, "cell": cell, "argv": shlex.join(argv), "deadline_s": job.deadline_s}
        )
        planned = FioRun(node.name, cell, output, job, time.monotonic())
        if on_planned is not None:
            on_planned(planned)
        res = node.run_script(script, timeout=30)
        # fio is running on the node: the start round trip ends here (`harness bench overhead`)
        self.ledger.record("fio-running", {"node": node.name, "cell": cell})
        return FioRun(
            node.name, cell, output, job, planned.started, res.stdout, f"{base}/bw-{name}" if bw_log else None
        )

    def wait_exit(
        self,
        node: Runner,
        run: FioRun,
        *,
        progress: Progress = _noop,
        after_exit: Mapping[str, Shell] | None = None,
    ) -> tuple[int, dict[str, CommandResult]]:
        """Block until fio's wrapper exits; return fio's exit code and the results of the
        ``after_exit`` snippets, which run in the same round trip once fio is done (to
        collect its output without another SSH round trip).

        ``tail --pid`` waits on the node without forking a poller every tick (a fork costs
        ~22 ms on a UML guest and would steal CPU from the measurement)."""
        limit = run.started + run.deadline_s + 20.0
        ended = run.job.ended_test()
        while True:
            # Short chunks: fabric (invoke) answers Ctrl-C/SIGTERM by forwarding it to the remote
            # command and waiting for that to end, so the interrupt lands after the chunk.
            chunk = max(1.0, min(WAIT_CHUNK_S, limit - time.monotonic()))
            batch: dict[str, Shell] = {"rc": Shell(run.job.wait_script(chunk))}
            if run.bw_log_prefix:
                # the last second of every job's bandwidth log: "now" for the progress line
                batch["now"] = Shell(
                    f'if ! {ended}; then for f in {run.bw_log_prefix}_bw.*.log; do [ -e "$f" ] && '
                    f'tail -n 1 "$f"; done; fi; true'
                )
            # only once fio has exited: never stop a watcher or read half a file mid-run
            # (`if`, never `exit`: an exit inside a batch group would end the whole batch)
            batch.update(
                {name: Shell(f"if {ended}; then {snippet}; fi") for name, snippet in (after_exit or {}).items()}
            )
            out = run_batch(node, batch, timeout=chunk + 30)
            text = out["rc"].stdout.strip()
            if text:
                code = int(text) if text.lstrip("-").isdigit() else -1
                self.ledger.record("fio-exit", {"node": node.name, "cell": run.cell, "rc": code})
                return code, out
            if time.monotonic() > limit:
                self.stop(node, run)
                raise FioFailed(f"{node.name}: fio for {run.cell} did not finish within {run.deadline_s:.0f} s")
            now = _current_mib_s(out["now"].stdout) if "now" in out else None
            progress(
                f"{run.cell}: fio running on {node.name}, {time.monotonic() - run.started:.0f} s "
                f"(deadline {run.deadline_s:.0f} s)" + (f", now {now:.1f} MiB/s" if now is not None else "")
            )

    def output_script(self, run: FioRun) -> str:
        """Shell that prints the job's JSON output (to batch with other reads)."""
        return f"cat {shlex.quote(run.output)} 2>/dev/null"

    def times_script(self, run: FioRun) -> str:
        """Shell that prints fio's start and end epoch, one per line."""
        return run.job.times_script()

    @staticmethod
    def process_seconds(times_text: str) -> float | None:
        """fio's wall time on the node from :meth:`times_script` output."""
        return DetachedJob.seconds(times_text)

    def parse(self, node: Runner, run: FioRun, rc: int, text: str) -> FioResult:
        """Turn exit code and output into a result, or a FioFailed that quotes fio's log."""

        def log_tail() -> str:
            # the kernel's last words beside fio's: an I/O error, a frozen device, a DRBD state
            # change explain a failure fio only reports (reliability.md row 23)
            script = f"tail -n 8 {shlex.quote(run.log)}; echo {shlex.quote(KERNEL_MARK)}; dmesg 2>/dev/null | tail -n 5"
            out = node.run_script(script, timeout=20, check=False).stdout
            fio_part, _, kernel = out.partition(KERNEL_MARK + "\n")
            kernel_lines = " | ".join(kernel.strip().splitlines())
            return fio_part.strip() + (f"; kernel log: {kernel_lines}" if kernel_lines else "")

        if rc in (124, 137):
            raise FioFailed(f"{node.name}: fio for {run.cell} hit its node-side deadline of {run.deadline_s:.0f} s")
        try:
            result = parse_last_fio_report(text) if text.count('"fio version"') > 1 else parse_fio_json(text)
        except FioOutputError as exc:
            raise FioFailed(
                f"{node.name}: fio for {run.cell} exited {rc} without usable JSON ({exc}); log: {log_tail()}"
            ) from None
        if rc != 0 or result.error:
            raise FioFailed(
                f"{node.name}: fio for {run.cell} failed (exit {rc}, fio error {result.error}): {log_tail()}"
            )
        return result

    def wait(self, node: Runner, run: FioRun, *, progress: Progress = _noop) -> FioResult:
        """Wait for exit, fetch and parse the JSON (one round trip once fio is done)."""
        rc, out = self.wait_exit(node, run, progress=progress, after_exit={"fio": Shell(self.output_script(run))})
        return self.parse(node, run, rc, out["fio"].stdout)

    def stop(self, node: Runner, run: FioRun) -> None:
        """Kill the job's whole session (timeout, fio and its workers); harmless if it ended."""
        run.job.stop(node, grace_s=1.0)
        self.ledger.record("fio-stopped", {"node": node.name, "cell": run.cell})

    def fetch_text(self, node: Runner, path: str) -> str:
        return node.run(["cat", path], timeout=60, check=False).stdout
