"""A started fio job on one node (:class:`FioJob`): wait for it and get one
:class:`~harness.fio.outcome.FioOutcome`, or stop it.

The handle :meth:`FioRunner.start <harness.fio.runner.FioRunner.start>` returns, in the style of
teuthology's ``run(wait=False)``.  The wait blocks on the node in short chunks (``tail --pid``:
no poller forking every tick); the round trip that sees fio exit also brings back its JSON
output file (stdout is not clean JSON), its start and end stamps, the caller's own snippets and
its bandwidth logs, so collecting a finished job costs no round trip of its own.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from harness.errors import InfraError
from harness.fio.outcome import FioOutcome
from harness.fio.report import parse_fio_json, parse_last_fio_report
from harness.fio.result import FioOutputError, FioResult
from harness.fio.spec import WorkloadSpec
from harness.remote import CommandResult, DetachedJob, Runner, Shell, run_batch
from harness.remote.detached import WAIT_CHUNK_S
from harness.runfiles.ledger import Ledger
from harness.runfiles.series import bw_logs_script

__all__ = ["KERNEL_MARK", "FioFailed", "FioJob", "Progress"]

#: separates fio's log from the kernel's in the one round trip that fetches both
KERNEL_MARK = "--- kernel log ---"
#: exit codes of coreutils ``timeout``: the deadline's SIGTERM (124) or its SIGKILL (137)
_DEADLINE_CODES = (124, 137)
#: how long past its node-side deadline the harness still waits for the job's exit code
_WAIT_SLACK_S = 20.0

Progress = Callable[[str], None]
ExitHook = Callable[[Mapping[str, CommandResult]], None]


class FioFailed(InfraError):
    """fio exited non-zero, hit its deadline, or wrote no usable JSON."""


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


@dataclass(eq=False)
class FioJob:
    """fio running detached on ``node`` for ``cell``: ``plan`` is its session (deadline, pid,
    log, exit-code and times files), ``output`` its JSON file, ``bw_log_prefix`` its bandwidth
    logs' prefix when it logs, ``preamble_output`` what the caller's start snippet printed.
    ``exit_outputs`` is None until the wait has seen fio exit: from then on the job has ended
    and the round trip's results are kept here, even when fio's report is then refused."""

    node: Runner
    cell: str
    workload: WorkloadSpec
    plan: DetachedJob
    output: str
    ledger: Ledger
    started: float
    bw_log_prefix: str | None = None
    preamble_output: str = ""
    exit_outputs: dict[str, CommandResult] | None = None

    @property
    def log(self) -> str:
        """fio's stdout and stderr on the node."""
        assert self.plan.log is not None
        return self.plan.log

    @property
    def deadline_s(self) -> float:
        assert self.plan.deadline_s is not None
        return self.plan.deadline_s

    @property
    def exited(self) -> bool:
        return self.exit_outputs is not None

    # -- waiting -------------------------------------------------------------------------------
    def wait(
        self,
        *,
        progress: Progress = _noop,
        after_exit: Mapping[str, Shell] | None = None,
        on_exit: ExitHook | None = None,
    ) -> FioOutcome:
        """Block until fio ends; its outcome, or :class:`FioFailed` quoting fio's and the
        kernel's last log lines.  ``after_exit`` snippets run in the round trip that sees the
        exit, right after fio's own output and stamps are read (a watch the caller stops there
        stops as soon as fio has); ``on_exit`` receives that round trip's results before fio's
        report is judged."""
        rc, out = self._wait_exit(progress, self._exit_reads(after_exit or {}))
        self.exit_outputs = out
        if on_exit is not None:
            on_exit(out)
        result = self._result(rc, out["fio"].stdout)
        return FioOutcome(result, self.workload, DetachedJob.seconds(out["times"].stdout), out.get("bw"), out)

    def _exit_reads(self, after_exit: Mapping[str, Shell]) -> dict[str, Shell]:
        """What the exit round trip reads: fio's output and stamps, the caller's snippets, then
        the bandwidth logs (only files: nothing waits on them)."""
        reads = {"fio": Shell(f"cat {shlex.quote(self.output)} 2>/dev/null"), "times": Shell(self.plan.times_script())}
        reads.update(after_exit)
        if self.bw_log_prefix:
            reads["bw"] = Shell(bw_logs_script(self.bw_log_prefix))
        return reads

    def _wait_exit(self, progress: Progress, reads: Mapping[str, Shell]) -> tuple[int, dict[str, CommandResult]]:
        """fio's exit code and the results of ``reads``, which run in the same round trip once
        fio is done; stops fio and fails when it outlives its deadline."""
        limit = self.started + self.deadline_s + _WAIT_SLACK_S
        while True:
            # Short chunks: fabric (invoke) answers Ctrl-C/SIGTERM by forwarding it to the remote
            # command and waiting for that to end, so the interrupt lands after the chunk.
            chunk = max(1.0, min(WAIT_CHUNK_S, limit - time.monotonic()))
            out = run_batch(self.node, self._poll(chunk, reads), timeout=chunk + 30)
            text = out["rc"].stdout.strip()
            if text:
                code = int(text) if text.lstrip("-").isdigit() else -1
                self.ledger.record("fio-exit", {"node": self.node.name, "cell": self.cell, "rc": code})
                return code, out
            if time.monotonic() > limit:
                self.stop()
                raise FioFailed(f"{self.node.name}: fio for {self.cell} did not finish within {self.deadline_s:.0f} s")
            progress(self._progress_line(out))

    def _poll(self, chunk: float, reads: Mapping[str, Shell]) -> dict[str, Shell]:
        """One wait chunk: the exit code once fio ended, the bandwidth now while it runs, and
        ``reads`` only once fio has exited: never stop a watcher or read half a file mid-run
        (``if``, never ``exit``: an exit inside a batch group would end the whole batch)."""
        ended = self.plan.ended_test()
        batch: dict[str, Shell] = {"rc": Shell(self.plan.wait_script(chunk))}
        if self.bw_log_prefix:
            # the last second of every job's bandwidth log: "now" for the progress line
            batch["now"] = Shell(
                f'if ! {ended}; then for f in {self.bw_log_prefix}_bw.*.log; do [ -e "$f" ] && '
                f'tail -n 1 "$f"; done; fi; true'
            )
        batch.update({name: Shell(f"if {ended}; then {snippet}; fi") for name, snippet in reads.items()})
        return batch

    def _progress_line(self, out: Mapping[str, CommandResult]) -> str:
        now = _current_mib_s(out["now"].stdout) if "now" in out else None
        return (
            f"{self.cell}: fio running on {self.node.name}, {time.monotonic() - self.started:.0f} s "
            f"(deadline {self.deadline_s:.0f} s)" + (f", now {now:.1f} MiB/s" if now is not None else "")
        )

    # -- judging fio's report ------------------------------------------------------------------
    def _result(self, rc: int, text: str) -> FioResult:
        """Exit code and output as a result, or a FioFailed that quotes fio's log."""
        where = f"{self.node.name}: fio for {self.cell}"
        if rc in _DEADLINE_CODES:
            raise FioFailed(f"{where} hit its node-side deadline of {self.deadline_s:.0f} s")
        try:
            result = parse_last_fio_report(text) if text.count('"fio version"') > 1 else parse_fio_json(text)
        except FioOutputError as exc:
            raise FioFailed(f"{where} exited {rc} without usable JSON ({exc}); log: {self._log_tail()}") from None
        if rc != 0 or result.error:
            raise FioFailed(f"{where} failed (exit {rc}, fio error {result.error}): {self._log_tail()}")
        return result

    def _log_tail(self) -> str:
        """fio's last log lines and the kernel's: an I/O error, a frozen device or a
        replication state change explains a failure fio only reports."""
        script = f"tail -n 8 {shlex.quote(self.log)}; echo {shlex.quote(KERNEL_MARK)}; dmesg 2>/dev/null | tail -n 5"
        out = self.node.run_script(script, timeout=20, check=False).stdout
        fio_part, _, kernel = out.partition(KERNEL_MARK + "\n")
        kernel_lines = " | ".join(kernel.strip().splitlines())
        return fio_part.strip() + (f"; kernel log: {kernel_lines}" if kernel_lines else "")

    # -- stopping ------------------------------------------------------------------------------
    def stop(self) -> None:
        """Kill the job's whole session (timeout, fio and its workers); harmless if it ended,
        and with the cancel file also a start still on its way to the node."""
        self.plan.stop(self.node, grace_s=1.0)
        self.ledger.record("fio-stopped", {"node": self.node.name, "cell": self.cell})
