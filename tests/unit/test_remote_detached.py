"""DetachedJob (harness.remote.detached): its shell, built for any input, and its behaviour, run
for real with this machine's /bin/sh exactly as SshNode sends it to a node."""

from __future__ import annotations

import functools
import math
import random
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import CommandFailed, CommandTimeout
from harness.remote import CommandResult, DetachedJob, render_command
from harness.remote.detached import stop_script

NEEDS = ("setsid", "timeout", "pgrep", "pkill", "tail", "date")
pytestmark = pytest.mark.skipif(
    not all(shutil.which(t) for t in NEEDS) or not Path("/proc/self/stat").exists(),
    reason=f"needs Linux with {', '.join(NEEDS)}",
)

# words of a command line: anything but NUL, which no argv can carry
# what UTF-8 can encode (no lone surrogates): no command line can carry anything else
words = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=20)
paths = st.text(st.characters(codec="utf-8", exclude_characters="\x00/"), min_size=1, max_size=20)


@dataclass
class NodeShell:
    """A node played by this machine: each command is the exact text SshNode sends
    (``timeout --kill-after=5 T sh -c SCRIPT``), run by /bin/sh, with SshNode's exit rules."""

    name: str = "local"

    def run(self, argv: Sequence[str], *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        command = render_command(argv, timeout=timeout, sudo=False)
        start = time.monotonic()
        done = subprocess.run(
            ["/bin/sh", "-c", command], capture_output=True, text=True, timeout=timeout + 20, check=False
        )
        result = CommandResult(self.name, shlex.join(argv), done.returncode, done.stdout, done.stderr, 0.0)
        if done.returncode in (124, 137) and time.monotonic() - start >= timeout * 0.95:
            raise CommandTimeout(self.name, result.command, timeout)
        if check and done.returncode != 0:
            raise CommandFailed(result)
        return result

    def run_script(self, script: str, *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        return self.run(["sh", "-c", script], timeout=timeout, check=check)


def session(pid: int) -> list[int]:
    """Live processes of session ``pid`` (zombies waiting for init are gone)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[3]) == pid:
            out.append(int(stat.parent.name))
    return out


def until(condition: Callable[[], bool], seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def job(tmp: Path, command: str, **kwargs: object) -> DetachedJob:
    files = {"pid_file": tmp / "j.pid", "log": tmp / "j.log", "rc_file": tmp / "j.rc", "times_file": tmp / "j.t"}
    merged = {k: str(v) for k, v in files.items()} | kwargs
    return DetachedJob.of_script(command, **merged)  # type: ignore[arg-type]


def pid_of(j: DetachedJob) -> int:
    assert j.pid_file is not None
    return int(Path(j.pid_file).read_text())


# -- the shell, for any input ---------------------------------------------------------------------
@given(st.lists(words, min_size=1, max_size=6), paths, paths, st.integers(1, 86400), st.integers(1, 60))
def test_every_value_stays_one_word(argv: list[str], log: str, pid: str, deadline: int, kill: int) -> None:
    j = DetachedJob.of_argv(argv, deadline_s=deadline, kill_after_s=kill, pid_file=f"/r/{pid}", log=f"/r/{log}")
    script = j.start_script()
    assert script.startswith("{ setsid sh -c ") and script.endswith(f" & echo $! > {shlex.quote(f'/r/{pid}')}; }}")
    inner = shlex.split(shlex.split(script)[4])
    assert inner == ["timeout", f"--kill-after={kill}", str(deadline), *argv, ">", f"/r/{log}", "2>&1"]


@given(st.floats(allow_nan=True, allow_infinity=True).filter(lambda s: not 0 < s < math.inf))
def test_a_deadline_is_a_positive_finite_time(seconds: float) -> None:
    with pytest.raises(ValueError, match="deadline must be a positive number of seconds"):
        DetachedJob.of_argv(["sleep", "1"], deadline_s=seconds)


@given(st.integers(1, 10**9) | st.floats(0.001, 1e9))
def test_timeout_reads_the_deadline_asked_for(seconds: float) -> None:
    text = shlex.split(DetachedJob.of_argv(["true"], deadline_s=seconds).inner_script())[1]
    assert abs(float(text) - seconds) <= 0.0005 and "e" not in text
    if isinstance(seconds, int):
        assert text == str(seconds)


def test_the_shell_of_a_job_that_bounds_itself() -> None:
    crash = DetachedJob.of_script("sleep 1; echo c > /proc/sysrq-trigger", deadline_s=None)
    assert crash.start_script() == "setsid sh -c 'sleep 1; echo c > /proc/sysrq-trigger' </dev/null >/dev/null 2>&1 &"
    with pytest.raises(ValueError, match="cannot be watched or stopped"):
        crash.stop_script()
    with pytest.raises(ValueError, match="kill_after_s needs a deadline"):
        DetachedJob.of_argv(["sleep", "1"], deadline_s=None, kill_after_s=5)


@settings(max_examples=8)
@given(st.lists(words.filter(lambda w: "\n" not in w and "\r" not in w), min_size=1, max_size=5))
def test_the_argv_reaches_the_process_unchanged(tmp_path_factory: pytest.TempPathFactory, argv: list[str]) -> None:
    tmp = tmp_path_factory.mktemp("argv")
    j = DetachedJob.of_argv(
        ["printf", "%s\\n", *argv],
        deadline_s=10,
        pid_file=str(tmp / "p"),
        log=str(tmp / "l"),
        rc_file=str(tmp / "rc"),
    )
    node = NodeShell()
    j.start(node)
    assert j.wait(node, timeout_s=10) == 0
    assert j.output(node) == "".join(f"{a}\n" for a in argv)


# -- behaviour, for real ----------------------------------------------------------------------------
def test_a_job_outlives_the_call_that_started_it_and_reports_its_exit(tmp_path: Path) -> None:
    node = NodeShell()
    j = job(tmp_path, "sleep 0.5; echo done; exit 3", deadline_s=30)
    began = time.monotonic()
    j.start(node)
    assert time.monotonic() - began < 0.4  # returned at once
    assert j.alive(node)
    assert session(pid_of(j))  # pid file names the session
    assert j.wait(node, timeout_s=10) == 3
    assert j.output(node) == "done\n"
    assert not j.alive(node)
    seconds = DetachedJob.seconds(node.run_script(j.times_script(), timeout=10).stdout)
    assert seconds is not None and 0.4 < seconds < 5


def test_the_node_side_deadline_ends_a_job_nobody_waits_for(tmp_path: Path) -> None:
    node = NodeShell()
    j = job(tmp_path, "sleep 60", deadline_s=1)
    j.start(node)
    assert until(lambda: Path(tmp_path / "j.rc").exists(), 5)  # nobody asked: the node ended it
    assert (tmp_path / "j.rc").read_text() == "124\n"


def test_kill_after_ends_a_job_that_ignores_the_deadline(tmp_path: Path) -> None:
    node = NodeShell()
    j = job(tmp_path, "trap '' TERM; sleep 60", deadline_s=1, kill_after_s=1)
    j.start(node)
    assert j.wait(node, timeout_s=10) == 137


def test_stop_ends_the_whole_session_and_forgets_the_pid(tmp_path: Path) -> None:
    node = NodeShell()
    j = job(tmp_path, "sleep 60 & sleep 60 & wait", deadline_s=120)
    j.start(node)
    sid = pid_of(j)
    assert until(lambda: len(session(sid)) >= 3, 5)  # sh and both sleeps
    j.stop(node)
    assert until(lambda: not session(sid), 5)
    assert not Path(j.pid_file or "").exists()
    assert not j.alive(node)
    j.stop(node)  # again: harmless


def test_stop_kills_what_ignores_sigterm(tmp_path: Path) -> None:
    node = NodeShell()
    j = job(tmp_path, "trap '' TERM; sleep 60 & wait", deadline_s=120)
    j.start(node)
    sid = pid_of(j)
    assert until(lambda: len(session(sid)) >= 2, 5)
    j.stop(node, grace_s=0.5)
    assert until(lambda: not session(sid), 5)


def test_a_pid_file_that_holds_no_number_signals_nothing(tmp_path: Path) -> None:
    node = NodeShell()
    pid_file = tmp_path / "j.pid"
    for text in ("", "-1\n", "0 1\n", "$(touch x)\n"):
        pid_file.write_text(text)
        j = DetachedJob.of_argv(["true"], deadline_s=1, pid_file=str(pid_file))
        assert not j.alive(node)
        j.stop(node)
        assert not pid_file.exists()
    assert not (Path.cwd() / "x").exists()


def test_a_job_without_records_runs_and_ends_by_itself(tmp_path: Path) -> None:
    marker = tmp_path / "fired"
    j = DetachedJob.of_script(f"sleep 0.3; touch {shlex.quote(str(marker))}", deadline_s=None)
    NodeShell().run_script(j.start_script(), timeout=10)
    assert not marker.exists()
    assert until(marker.exists, 5)


def test_waiting_is_bounded_while_the_job_runs(tmp_path: Path) -> None:
    node = NodeShell()
    j = job(tmp_path, "sleep 60", deadline_s=120)
    j.start(node)
    try:
        began = time.monotonic()
        assert j.wait(node, timeout_s=1) is None
        assert time.monotonic() - began < 4
    finally:
        j.stop(node)


def test_nothing_is_left_when_the_starting_shell_is_gone(tmp_path: Path) -> None:
    """The start returns with the job running; the job keeps no stream of the caller open."""
    j = job(tmp_path, "sleep 60", deadline_s=120)
    done = subprocess.run(["/bin/sh", "-c", j.start_script()], capture_output=True, text=True, timeout=5, check=False)
    assert done.returncode == 0 and done.stdout == ""  # communicate() returned: no pipe held open
    sid = pid_of(j)
    # the start returns once the job is forked; its setsid may run a moment later on a busy host
    assert until(lambda: bool(session(sid)), 5)
    DetachedJob.of_argv(["true"], deadline_s=1, pid_file=j.pid_file).stop(NodeShell())
    assert until(lambda: not session(sid), 5)


def test_a_bare_job_stops_with_the_shells_own_kill(tmp_path: Path) -> None:
    # a dead-man switch: a bare script, one process group, stopped without pkill
    marker = tmp_path / "fired"
    pid_file = str(tmp_path / "switch.pid")
    j = DetachedJob.of_script(f"sleep 60; touch {shlex.quote(str(marker))}", deadline_s=None, pid_file=pid_file)
    node = NodeShell()
    node.run_script(j.start_script(), timeout=10)
    sid = pid_of(j)
    assert until(lambda: len(session(sid)) >= 2, 5)  # sh and its sleep
    script = stop_script(pid_file, grace_s=None, one_group=True)
    assert "pkill" not in script
    node.run_script(script, timeout=10)
    assert until(lambda: not session(sid), 5)
    assert not Path(pid_file).exists() and not marker.exists()
    node.run_script(script, timeout=10)  # again: harmless
    with pytest.raises(ValueError, match="one_group"):
        stop_script(pid_file, grace_s=1.0, one_group=True)


def _watch(tmp: Path, script: str) -> DetachedJob:
    """A job as a replication's watcher is one: a loop that bounds itself, its output in a log."""
    return DetachedJob.of_script(
        script, deadline_s=None, pid_file=str(tmp / "w.pid"), log=str(tmp / "w.log"), cancel_file=str(tmp / "w.x")
    )


def test_a_watch_writes_everything_to_its_log_and_its_collect_stops_it(tmp_path: Path) -> None:
    node = NodeShell()
    w = _watch(tmp_path, "echo first; echo oops >&2; while :; do sleep 0.1; done")
    assert w.inner_script().startswith("exec > ")  # the session's own shell: no process between
    node.run_script(w.start_script(), timeout=10)
    sid = pid_of(w)
    log = Path(w.log or "")
    assert until(lambda: log.exists() and "oops" in log.read_text(), 5)
    out = node.run_script(w.collect_script("alive="), timeout=10).stdout
    assert out.splitlines() == ["alive=1", "first", "oops"]  # it ran to the end of the window
    assert until(lambda: not session(sid), 5)
    assert not Path(w.pid_file or "").exists()
    # collected again: nothing runs, the log is still read
    assert node.run_script(w.collect_script("alive="), timeout=10).stdout.splitlines() == ["alive=0", "first", "oops"]


def test_a_watch_that_ended_before_the_window_did_is_reported(tmp_path: Path) -> None:
    node = NodeShell()
    w = _watch(tmp_path, "echo done")
    node.run_script(w.start_script(), timeout=10)
    sid = pid_of(w)
    assert until(lambda: not session(sid), 5)
    assert node.run_script(w.collect_script("alive="), timeout=10).stdout.splitlines() == ["alive=0", "done"]


def test_a_watch_signals_only_a_leader_that_holds_its_word(tmp_path: Path) -> None:
    # a stale pid file whose pid now belongs to something else: that session is left alone
    node = NodeShell()
    stranger = subprocess.Popen(["setsid", "sleep", "60"])
    try:
        assert until(lambda: bool(session(stranger.pid)), 5)
        w = _watch(tmp_path, "sleep 60")
        Path(w.pid_file or "").write_text(f"{stranger.pid}\n")
        out = node.run_script(w.collect_script("alive=", leader_holds="drbdsetup"), timeout=10).stdout
        assert out.splitlines()[0] == "alive=0"
        time.sleep(0.3)
        assert stranger.poll() is None
        assert node.run_script(w.collect_script("alive=", leader_holds="sleep"), timeout=10).stdout.startswith("alive=")
    finally:
        stranger.kill()
        stranger.wait()


def test_a_stop_that_reaches_the_node_first_keeps_the_start_from_launching(tmp_path: Path) -> None:
    node = NodeShell()
    marker = f"sleep 600.{time.monotonic_ns() % 10**6}"
    j = job(tmp_path, marker, deadline_s=700, cancel_file=str(tmp_path / "j.cancel"))
    j.stop(node)
    j.start(node)  # the start still succeeds: it was asked to stop before it ran
    time.sleep(0.3)
    assert _gone(marker)
    assert not Path(j.pid_file or "").exists()


def test_a_stop_first_keeps_the_start_from_launching_even_before_the_run_dir_exists(tmp_path: Path) -> None:
    """The first fio of a run: its start creates the node's run directory, so a stop that comes
    first finds no directory to leave its cancel file in, and must make it."""
    node = NodeShell()
    marker = f"sleep 600.{time.monotonic_ns() % 10**6}"
    later = tmp_path / "run-dir-not-yet-made"
    j = job(later, marker, deadline_s=700, cancel_file=str(later / "j.cancel"))
    j.stop(node)
    node.run_script(f"mkdir -p {shlex.quote(str(later))} && {j.start_script()}", timeout=10)
    time.sleep(0.3)
    try:
        assert _gone(marker)
    finally:
        subprocess.run(["pkill", "-f", marker], check=False)


def test_a_stop_racing_the_start_leaves_nothing_running(tmp_path: Path) -> None:
    """An interrupt stops fio while the round trip that starts it is still on its way: the
    two shells run at once on the node, in either order, and whichever wins nothing is left."""
    node = NodeShell()
    leaked = []
    for i in range(30):
        marker = f"sleep 600.{i}{time.monotonic_ns() % 10**6}"
        here = tmp_path / str(i)
        here.mkdir()
        j = job(here, marker, deadline_s=700, cancel_file=str(here / "j.cancel"))
        starter = threading.Thread(target=j.start, args=(node,))
        starter.start()
        time.sleep(random.uniform(0, 0.005))
        j.stop(node)  # as fio is stopped: TERM, then KILL what is left a second later
        starter.join(timeout=30)
        if not until(functools.partial(_gone, marker), 3):
            leaked.append(marker)
            subprocess.run(["pkill", "-f", marker], check=False)
    assert leaked == []


def _gone(pattern: str) -> bool:
    return subprocess.run(["pgrep", "-f", pattern], capture_output=True, check=False).stdout == b""
