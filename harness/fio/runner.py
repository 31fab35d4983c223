"""Starting fio on a node: detached, under a node-side deadline, returning one handle.

fio is a :class:`~harness.remote.DetachedJob`: its own session, wrapped in coreutils ``timeout``
(``--kill-after=10``), so it stops by itself at the deadline even when the harness is killed or
SSH drops.  :meth:`FioRunner.start` returns a :class:`~harness.fio.job.FioJob`, whose
``wait()`` gives the job's one :class:`~harness.fio.outcome.FioOutcome` and whose ``stop()``
kills the whole session on any early exit.
"""

from __future__ import annotations

import secrets
import shlex
import time
from collections.abc import Callable
from typing import Final

from harness.fio.command import Target, build_fio_argv
from harness.fio.job import FioJob
from harness.fio.spec import WorkloadSpec
from harness.remote import DetachedJob, Runner
from harness.remote.nodefiles import node_run_dir, safe_token
from harness.runfiles.ledger import Ledger

__all__ = ["FioRunner", "fio_deadline_s"]

# fio startup, file layout and JSON writing on a slow (UML) node take several seconds.
_STARTUP_GRACE_S = 30.0
#: SIGKILL this long after the deadline's SIGTERM, for a fio stuck in uninterruptible I/O
_KILL_AFTER_S: Final = 10.0


def fio_deadline_s(spec: WorkloadSpec, default_s: float = 600.0) -> float:
    """Node-side deadline: ramp + runtime + grace for time-bounded jobs, else ``default_s``."""
    if spec.runtime_s is not None:
        return float(spec.ramp_s + spec.runtime_s) + _STARTUP_GRACE_S
    return default_s


class FioRunner:
    """Starts the fio jobs of one run, each as one :class:`~harness.fio.job.FioJob`."""

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
        on_planned: Callable[[FioJob], object] | None = None,
    ) -> FioJob:
        """Start fio detached; the handle to wait for it or stop it.  ``preamble`` is shell the
        caller wants run in the same round trip just before fio starts (e.g. starting an event
        watcher), to save a round trip; the handle keeps what it printed.  ``on_planned``
        receives the handle before anything starts on the node, so the caller can register its
        stop first (an interrupt during this call still stops fio)."""
        base = node_run_dir(self.run_id)
        name = safe_token(cell)
        output, rc_file = f"{base}/fio-{name}.json", f"{base}/fio-{name}.rc"
        bw_log_prefix = f"{base}/bw-{name}" if bw_log else None
        argv = build_fio_argv(
            spec,
            filename,
            output,
            status_interval=status_interval,
            extra_log_prefix=bw_log_prefix,
            target=target,
            aux_path=base,
        )
        # The times file records fio's own start and end (node clock, used only as a duration),
        # so the harness can tell its overhead from fio's start-up cost.
        plan = DetachedJob.of_argv(
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
            f"cd {q(base)} && {preamble + ' && ' if preamble else ''}{plan.start_script()}"
        )
        self.ledger.record(
            "fio-start", {"node": node.name, "cell": cell, "argv": shlex.join(argv), "deadline_s": plan.deadline_s}
        )
        job = FioJob(node, cell, spec, plan, output, self.ledger, time.monotonic(), bw_log_prefix)
        if on_planned is not None:
            on_planned(job)
        job.preamble_output = node.run_script(script, timeout=30).stdout
        # fio is running on the node: the start round trip ends here (`harness bench overhead`)
        self.ledger.record("fio-running", {"node": node.name, "cell": cell})
        return job
