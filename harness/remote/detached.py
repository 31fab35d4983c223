"""A process started on a node that outlives the SSH call which started it (:class:`DetachedJob`).

The one way the harness leaves something running on a node (fio, the replication's event
watchers, a dead-man switch, an iperf3 server, the lock's lease watchdog, the sysrq crash), in
the style of teuthology's ``run(wait=False)``: start it, ask whether it is alive, wait for it,
stop it, fetch what it printed.

* **start** — ``setsid sh -c COMMAND </dev/null >/dev/null 2>&1 &``: a session of its own, no
  terminal, no open SSH stream, so the starting command returns at once and closing or losing
  the connection does not touch the job.  ``$!`` is setsid's pid, and setsid does not fork here
  (a background job of a non-interactive shell leads no process group), so the pid file names
  the new session: :meth:`stop` signals the whole session (the job and every child it made).
* **deadline** — the command runs under coreutils ``timeout`` (``--kill-after`` when given) on
  the node, so it ends by itself even if the harness is SIGKILLed or the network goes away.
  ``deadline_s=None`` is for jobs that bound themselves (a dead-man switch is a ``sleep``; the
  lock watchdog ends with the lock); every caller states which it is.
* **records** — optional files beside the pid file: ``log`` (stdout and stderr), ``rc_file``
  (the exit code, written when the command ends; 124/137 = deadline hit) and ``times_file``
  (the node's clock at start and end, a duration that does not mix clocks).

A job is a frozen plan: the ``*_script`` methods return shell to run inside a round trip the
caller makes anyway (fio starts in the same script that prepares its directory); :meth:`start`,
:meth:`alive`, :meth:`wait`, :meth:`stop` and :meth:`output` run them on a :class:`Runner`.  A
watch of a measurement window (the replication's event watchers) ends with
:meth:`~DetachedJob.collect_script`: stopped, whether it still ran, what it wrote.
"""

from __future__ import annotations

import math
import posixpath
import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from harness.remote.command import WAIT_ONLY_MARK, Runner

__all__ = ["WAIT_CHUNK_S", "DetachedJob", "cancel_mark", "session_start", "stop_script"]

#: longest single wait on the node; bounds how late an interrupt of the harness is acted on
#: (fabric answers Ctrl-C by forwarding it and waiting for the remote command to end)
WAIT_CHUNK_S: Final = 5.0
#: tenths of a second a stop waits for SIGKILLed processes to leave (in-flight I/O ends first)
_KILLED_TICKS: Final = 30
#: reads the pid file into ``$p`` with shell builtins, empty unless it is a plain number
_READ_PID: Final = "p=; [ -e {pf} ] && read -r p < {pf}; case \"$p\" in ''|*[!0-9]*) p= ;; esac"


def _seconds(value: float, what: str) -> str:
    """``value`` as ``timeout`` reads it: whole seconds as an integer, else to the millisecond."""
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{what} must be a positive number of seconds, got {value!r}")
    return str(int(value)) if float(value).is_integer() else f"{value:.3f}".rstrip("0").rstrip(".")


def session_start(inner: str, pid_file: str | None, cancel_file: str | None = None) -> str:
    """Shell that runs ``inner`` in a session of its own, detached, and writes the session id to
    ``pid_file`` (see :class:`DetachedJob`; None: a job nobody watches or stops).

    ``cancel_file``: a stop may reach the node while the round trip that starts the session is
    still on its way (an interrupt during the start).  The stop writes the file first
    (:func:`cancel_mark`); a start that finds it never launches; the new session looks again
    right after ``setsid`` (a stop that found no session yet finds the file instead); and the
    starting shell, once the pid file is written, ends the session itself if the file appeared
    meanwhile (TERM until the session is empty, since a process forked while pkill read /proc
    escapes one round; then KILL).  One name per start, so a later start is not refused."""
    q = shlex.quote
    if cancel_file is not None:
        if pid_file is None:
            raise ValueError("a cancel file needs a pid file (the stop reads it)")
        inner = f"[ -e {q(cancel_file)} ] && exit 0; {inner}"  # the session's own look
    start = f"setsid sh -c {q(inner)} </dev/null >/dev/null 2>&1 &"
    if pid_file is None:
        return start
    launch = f"{start} echo $! > {q(pid_file)};"
    if cancel_file is None:
        return f"{{ {launch} }}"
    cancel = q(cancel_file)
    end = (
        'i=0; while pkill -TERM -s "$!" 2>/dev/null && [ $i -lt 20 ]; do sleep 0.05; i=$((i+1)); done; '
        'pkill -KILL -s "$!" 2>/dev/null'
    )
    return f"{{ [ -e {cancel} ] || {{ {launch} if [ -e {cancel} ]; then {end}; fi; true; }}; }}"


def cancel_mark(cancel_file: str) -> str:
    """Shell a stop runs first, so that a start still on its way never leaves its job running
    (see :func:`session_start`).  The start may be the one that makes the job's directory (a
    run's first fio), so the stop makes it when it is missing: else the mark is never written."""
    where = shlex.quote(posixpath.dirname(cancel_file) or ".")
    return f"{{ [ -d {where} ] || mkdir -p {where}; }}; : > {shlex.quote(cancel_file)}"


def stop_script(pid_file: str, *, grace_s: float | None = 1.0, one_group: bool = False) -> str:
    """Shell that stops the session a job's pid file names: SIGTERM, then SIGKILL ``grace_s``
    later (None: SIGTERM only), and forgets the pid file.  Harmless when the job already
    ended; a pid file that does not hold a number signals nothing.  The pid file is the job's
    handle: whoever holds it (a disarm, a cleanup) can stop the job.

    ``one_group``: the job never leaves its session's first process group (a bare job: no
    ``timeout``, which makes a group of its own), so the shell's own ``kill`` reaches all of
    it, without ``pkill`` walking /proc (about 35 ms on a UML guest)."""
    if one_group and grace_s is not None:
        raise ValueError("one_group stops with SIGTERM only (grace_s=None)")
    # the grace is a bound, not a wait: fio ends within ~0.1 s of SIGTERM, and the interrupt
    # path has 7 s in all before CI's SIGKILL, so look every 0.1 s and go on once the session is gone
    ticks = 0 if grace_s is None else max(1, math.ceil(float(_seconds(grace_s, "grace")) * 10))
    # (zombies do not count: they are gone for everything but their parent's wait)
    alive = 'ps -o stat= -s "$p" 2>/dev/null | grep -qv "^Z"'
    kill = (
        f"; i=0; while [ $i -lt {ticks} ] && {alive}; do sleep 0.1; i=$((i+1)); done"
        # a killed process still finishing the I/O it had in flight is still there: the stop
        # ends once it is gone (bounded), so whoever checks next finds the node clean
        f'; if {alive}; then pkill -KILL -s "$p" 2>/dev/null; i=0; '
        f"while [ $i -lt {_KILLED_TICKS} ] && {alive}; do sleep 0.1; i=$((i+1)); done; fi"
        if grace_s is not None
        else ""
    )
    pf = shlex.quote(pid_file)
    signal = 'kill -s TERM -- "-$p"' if one_group else 'pkill -TERM -s "$p"'
    return f'{_READ_PID.format(pf=pf)}; if [ -n "$p" ]; then {signal} 2>/dev/null{kill}; fi; rm -f {pf}; true'


@dataclass(frozen=True)
class DetachedJob:
    """One detached process on a node: what it runs, its node-side deadline and its files."""

    argv: tuple[str, ...]
    """What runs (see :meth:`of_argv` and :meth:`of_script`)."""
    deadline_s: float | None
    """Node-side ``timeout`` around ``argv``; None only for a job that bounds itself."""
    kill_after_s: float | None = None
    """``timeout --kill-after``: SIGKILL this long after the deadline's SIGTERM."""
    pid_file: str | None = None
    """Where the session id goes; without it the job can be neither watched nor stopped."""
    log: str | None = None
    rc_file: str | None = None
    times_file: str | None = None
    cancel_file: str | None = None
    """A stop may reach the node while the round trip that starts the job is still on its way:
    see :func:`session_start` (one name per start)."""

    def __post_init__(self) -> None:
        if not self.argv:
            raise ValueError("empty command")
        if self.cancel_file is not None and self.pid_file is None:
            raise ValueError("a cancel file needs a pid file (the stop reads it)")
        if self.deadline_s is not None:
            _seconds(self.deadline_s, "deadline")
        if self.kill_after_s is not None:
            if self.deadline_s is None:
                raise ValueError("kill_after_s needs a deadline")
            _seconds(self.kill_after_s, "kill-after")

    @classmethod
    def of_argv(
        cls,
        argv: Sequence[str],
        *,
        deadline_s: float | None,
        kill_after_s: float | None = None,
        pid_file: str | None = None,
        log: str | None = None,
        rc_file: str | None = None,
        times_file: str | None = None,
        cancel_file: str | None = None,
    ) -> DetachedJob:
        """A job running ``argv``, every element quoted (no value can leave its word)."""
        return cls(tuple(argv), deadline_s, kill_after_s, pid_file, log, rc_file, times_file, cancel_file)

    @classmethod
    def of_script(
        cls,
        script: str,
        *,
        deadline_s: float | None,
        kill_after_s: float | None = None,
        pid_file: str | None = None,
        log: str | None = None,
        rc_file: str | None = None,
        times_file: str | None = None,
        cancel_file: str | None = None,
    ) -> DetachedJob:
        """A job running a shell script the harness wrote (never built from unquoted input)."""
        if not script.strip():
            raise ValueError("empty script")
        return cls(("sh", "-c", script), deadline_s, kill_after_s, pid_file, log, rc_file, times_file, cancel_file)

    @property
    def bare(self) -> bool:
        """No deadline, exit code or stamps: a script then runs as the session's own shell (one
        process less), its output to the log when there is one."""
        return self.deadline_s is None and self.rc_file is None and self.times_file is None

    # -- the shell -----------------------------------------------------------------------------
    def inner_script(self) -> str:
        """What runs inside the new session: stamps, the deadline-bound command, its exit code."""
        q = shlex.quote
        if self.bare and self.argv[:2] == ("sh", "-c") and len(self.argv) == 3:
            return self.argv[2] if self.log is None else f"exec > {q(self.log)} 2>&1; {self.argv[2]}"
        deadline = ""
        if self.deadline_s is not None:
            kill = f"--kill-after={_seconds(self.kill_after_s, 'kill-after')} " if self.kill_after_s else ""
            deadline = f"timeout {kill}{_seconds(self.deadline_s, 'deadline')} "
        command = f"{deadline}{shlex.join(self.argv)}"
        if self.log is not None:
            command += f" > {q(self.log)} 2>&1"
        parts = [command]
        if self.times_file is not None:
            parts.insert(0, f"date +%s.%N > {q(self.times_file)}")
        if self.rc_file is not None or self.times_file is not None:
            parts.append("rc=$?")
            if self.times_file is not None:
                parts.append(f"date +%s.%N >> {q(self.times_file)}")
            if self.rc_file is not None:
                parts.append(f"echo $rc > {q(self.rc_file)}")
        return "; ".join(parts)

    def start_script(self) -> str:
        """Shell that starts the job detached and returns at once (one command, safe to chain
        with ``&&``: it succeeds once the job is started)."""
        return session_start(self.inner_script(), self.pid_file, self.cancel_file)

    def alive_script(self) -> str:
        """Shell that prints ``1`` while a process of the job's session runs, else ``0``."""
        return (
            f"{_READ_PID.format(pf=shlex.quote(self._pid()))}; "
            'if [ -n "$p" ] && pgrep -s "$p" >/dev/null 2>&1; then echo 1; else echo 0; fi'
        )

    def ended_test(self) -> str:
        """Shell condition that holds once the job has ended (its exit code is written)."""
        return f"[ -s {shlex.quote(self._rc())} ]"

    def wait_script(self, chunk_s: float) -> str:
        """Shell that waits up to ``chunk_s`` for the job to end, then prints its exit code
        (nothing while it still runs).  ``tail --pid`` waits without a poller forking every
        tick (a fork costs ~22 ms on a UML guest and would steal CPU from a measurement)."""
        rc = shlex.quote(self._rc())
        return (
            f"{WAIT_ONLY_MARK} {self.ended_test()} || if read p < {shlex.quote(self._pid())}; "
            f'then timeout {max(1, math.ceil(chunk_s))} tail -s 0.1 --pid="$p" -f /dev/null; else sleep 1; fi; '
            f"read c < {rc} 2>/dev/null && echo $c; true"
        )

    def stop_script(self, *, grace_s: float | None = 1.0) -> str:
        """Shell that stops the job's whole session (see :func:`stop_script`), and with a
        :attr:`cancel_file` also a start still on its way."""
        stop = stop_script(self._pid(), grace_s=grace_s)
        return stop if self.cancel_file is None else f"{cancel_mark(self.cancel_file)}; {stop}"

    def collect_script(self, mark: str, *, leader_holds: str | None = None) -> str:
        """Shell that ends a watch: stops the job if it still runs, prints ``<mark>1`` if it did
        and ``<mark>0`` if it had ended before (so the end of the window was not watched), then
        everything it wrote to its log.

        ``leader_holds``: the session is signalled only while its leader's command line holds
        this word, since a pid from a stale file may have been recycled by something else."""
        pf = shlex.quote(self._pid())
        # a leader nobody has reaped yet is a zombie: it has ended, though kill -0 still answers
        running = (
            '[ -n "$p" ] && kill -0 "$p" 2>/dev/null && read -r s < "/proc/$p/stat" 2>/dev/null'
            ' && case "${s##*) }" in Z*) false ;; *) true ;; esac'
        )
        if leader_holds is not None:
            running += f' && grep -q {shlex.quote(leader_holds)} "/proc/$p/cmdline" 2>/dev/null'
        cancel = "" if self.cancel_file is None else f"{cancel_mark(self.cancel_file)}; "
        return (
            f"{cancel}{_READ_PID.format(pf=pf)}; alive=0; "
            f'if {running}; then alive=1; pkill -TERM -s "$p" 2>/dev/null; fi; '
            f'rm -f {pf}; echo "{mark}$alive"; {self.output_script()}'
        )

    def output_script(self, *, tail_lines: int | None = None) -> str:
        """Shell that prints what the job wrote to its log (the last ``tail_lines`` lines)."""
        log = shlex.quote(self._log())
        if tail_lines is not None:
            return f"tail -n {int(tail_lines)} {log} 2>/dev/null; true"
        return f"cat {log} 2>/dev/null; true"

    def times_script(self) -> str:
        """Shell that prints the job's start and end stamps (node clock), one a line."""
        times = shlex.quote(self._times())
        return f"while read -r t; do echo $t; done < {times} 2>/dev/null; true"

    @staticmethod
    def seconds(times_text: str) -> float | None:
        """The job's wall time on the node from :meth:`times_script` output (None: not ended)."""
        stamps = [float(t) for t in times_text.split() if t.replace(".", "", 1).isdigit()]
        return stamps[1] - stamps[0] if len(stamps) == 2 else None

    # -- on a node -----------------------------------------------------------------------------
    def start(self, node: Runner, *, timeout: float = 30.0) -> None:
        node.run_script(self.start_script(), timeout=timeout)

    def alive(self, node: Runner, *, timeout: float = 20.0) -> bool:
        return node.run_script(self.alive_script(), timeout=timeout).stdout.strip() == "1"

    def wait(self, node: Runner, *, timeout_s: float) -> int | None:
        """The job's exit code once it ended, or None if it still runs after ``timeout_s``."""
        end = time.monotonic() + timeout_s
        while True:
            chunk = max(1.0, min(WAIT_CHUNK_S, end - time.monotonic()))
            text = node.run_script(self.wait_script(chunk), timeout=chunk + 30).stdout.strip()
            if text:
                return int(text) if text.lstrip("-").isdigit() else -1
            if time.monotonic() >= end:
                return None

    def stop(self, node: Runner, *, grace_s: float | None = 1.0, timeout: float = 30.0) -> None:
        node.run_script(self.stop_script(grace_s=grace_s), timeout=timeout, check=False)

    def output(self, node: Runner, *, tail_lines: int | None = None, timeout: float = 60.0) -> str:
        return node.run_script(self.output_script(tail_lines=tail_lines), timeout=timeout, check=False).stdout

    # -- the files a feature needs -------------------------------------------------------------
    def _pid(self) -> str:
        if self.pid_file is None:
            raise ValueError("a job without a pid file cannot be watched or stopped; it must end by itself")
        return self.pid_file

    def _rc(self) -> str:
        if self.rc_file is None:
            raise ValueError("a job without an rc file cannot be waited for")
        return self.rc_file

    def _log(self) -> str:
        if self.log is None:
            raise ValueError("a job without a log printed nowhere")
        return self.log

    def _times(self) -> str:
        if self.times_file is None:
            raise ValueError("a job without a times file has no stamps")
        return self.times_file
