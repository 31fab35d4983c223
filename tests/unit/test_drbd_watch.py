"""The DRBD event watch (harness.drbd.watch): its plan and scripts, its window verdict, and the
scripts run for real on this machine with a stand-in ``drbdsetup`` that prints a recorded stream
(tests/data/drbd), to check the detach / pid / kill logic.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.drbd.watch import EventWatch, watch_paths
from harness.errors import ConfigError
from tests.doubles import DATA, FakeRunner, LocalRunner, recorded_replication

RES = "single-az"


def read(name: str) -> str:
    return (DATA / "drbd" / name).read_text()


# -- the event watch (scripted) ----------------------------------------------------------------
def test_watch_plan_and_start_script() -> None:
    watch = recorded_replication(FakeRunner("a1")).watch("run-1", "single-az-randwrite-4k", max_duration_s=119.5)
    log = "/run/harness/run-1/events-single-az-randwrite-4k.log"
    assert watch == EventWatch("a1", RES, "/run/harness/run-1", log, 119.5, cancel_path=watch.cancel_path)
    # one cancel file per plan, beside the log: a stop that comes first keeps the start from launching
    assert watch.cancel_path is not None and watch.cancel_path.startswith(f"{log}.")
    assert watch.cancel_path.endswith(".cancel") and watch.cancel_path in watch.stop_script()
    # where the leftover sweep looks for watchers (harness.safety.leftovers)
    assert watch.pid_path == "/run/harness/run-1/events-single-az-randwrite-4k.log.pid"
    script = watch.start_script()
    assert "mkdir -p /run/harness/run-1" in script
    assert "setsid sh -c" in script
    assert "timeout --kill-after=5 120 drbdsetup events2 --timestamps --statistics single-az" in script
    assert "> /run/harness/run-1/events-single-az-randwrite-4k.log 2>&1" in script


@pytest.mark.parametrize("run_id", ["", "..", ".hidden", "-x", "a/b", "a b", "r;reboot", "x" * 65])
def test_watch_refuses_bad_run_ids(run_id: str) -> None:
    with pytest.raises(ConfigError):
        recorded_replication(FakeRunner("a1")).watch(run_id, "c", max_duration_s=60)


@pytest.mark.parametrize("name", ["", "..", "a/b", "a b", "c;reboot"])
def test_watch_refuses_bad_names(name: str) -> None:
    with pytest.raises(ConfigError):
        watch_paths("r1", name)


@pytest.mark.parametrize("duration", [0, -1, 86401])
def test_watch_refuses_bad_durations(duration: float) -> None:
    with pytest.raises(ConfigError):
        recorded_replication(FakeRunner("a1")).watch("r1", "c", max_duration_s=duration)


def _watch(max_duration_s: float = 60) -> EventWatch:
    return recorded_replication(FakeRunner("a1")).watch("r1", "c", max_duration_s=max_duration_s)


@pytest.mark.parametrize(
    ("alive", "capture", "valid", "reason"),
    [
        ("1", "84-events2-now-primary-connected.txt", True, "DRBD stayed Connected/UpToDate"),
        (
            "1",
            "84-events2-stream-primary-disconnect-resync.txt",
            False,
            "DRBD state changed during the run: inconclusive: single-az: connection to peer left Connected: "
            "Connected -> Disconnecting at 2026-11-21T09:48:02",
        ),
        ("0", "84-events2-now-primary-connected.txt", False, "event watcher of single-az on a1 had exited before"),
        ("0", "84-events2-stream-primary-disconnect-resync.txt", False, "Connected -> Disconnecting"),
    ],
)
def test_the_window_verdict(alive: str, capture: str, valid: bool, reason: str) -> None:
    verdict = _watch().judge(f"harness-watch alive={alive}\n" + read(capture))
    assert verdict.valid is valid
    assert reason in verdict.reason


def test_an_empty_or_foreign_capture_is_inconclusive() -> None:
    assert _watch().judge("harness-watch alive=1\n").reason == "no DRBD events captured during the run"
    assert _watch().judge("").reason == "no DRBD events captured during the run"
    garbage = _watch().judge("sh: 1: cannot create /run/harness/r1/x: Permission denied\n")
    assert not garbage.valid and "cannot read the event stream" in garbage.reason


def test_stop_script_signals_only_our_watcher() -> None:
    script = _watch().stop_script()
    assert 'grep -q drbdsetup "/proc/$p/cmdline"' in script
    assert 'pkill -TERM -s "$p"' in script
    assert "rm -f /run/harness/r1/events-c.log.pid" in script


@given(st.sampled_from(["1", "0"]), st.text(alphabet="abc:- \n", max_size=40))
def test_any_output_gets_a_verdict_never_an_exception(alive: str, tail: str) -> None:
    verdict = _watch().judge(f"harness-watch alive={alive}\n{tail}")
    assert isinstance(verdict.valid, bool) and verdict.reason


# -- the watch scripts, run for real with a stand-in drbdsetup ---------------------------------
def _process_gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"  # a zombie waiting for init is gone too


def _wait(condition: object, seconds: float) -> bool:
    assert callable(condition)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


@pytest.fixture
def local_drbd(tmp_path: Path) -> tuple[LocalRunner, Path]:
    if not (shutil.which("setsid") and shutil.which("timeout")) or not Path("/proc/self/cmdline").exists():
        pytest.skip("needs Linux with setsid and coreutils timeout")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "drbdsetup"
    # Stand-in: prints a recorded capture, then waits like a real `events2` stream.
    fake.write_text('#!/bin/sh\necho $$ > "$FAKE_DRBDSETUP_PID"\ncat "$FAKE_CAPTURE"\nexec sleep 60\n')
    fake.chmod(0o755)
    env = {
        "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "FAKE_DRBDSETUP_PID": str(tmp_path / "drbdsetup.pid"),
    }
    return LocalRunner("a1", env=env), tmp_path


def _session_of(pid_path: Path) -> int:
    assert _wait(lambda: pid_path.exists() and pid_path.read_text().strip().isdigit(), 5)
    return int(pid_path.read_text())


def test_watch_scripts_detach_capture_and_stop(local_drbd: tuple[LocalRunner, Path]) -> None:
    runner, tmp = local_drbd
    runner.env["FAKE_CAPTURE"] = str(DATA / "drbd" / "84-events2-stream-primary-disconnect-resync.txt")
    replication = recorded_replication(runner, watch_root=str(tmp / "run"))
    watch = replication.watch("run-1", "cell-1", max_duration_s=30)
    runner.run_script(watch.start_script(), timeout=10)
    log = Path(watch.log_path)
    expected = read("84-events2-stream-primary-disconnect-resync.txt")
    assert _wait(lambda: log.exists() and log.read_text() == expected, 5)
    session = _session_of(Path(watch.pid_path))
    inner_pid = int((tmp / "drbdsetup.pid").read_text())
    assert not _process_gone(session)

    verdict = watch.judge(runner.run_script(watch.stop_script(), timeout=10).stdout)
    assert "Connected -> Disconnecting at 2026-11-21T09:48:02.743260+00:00" in verdict.reason
    assert _wait(lambda: _process_gone(session) and _process_gone(inner_pid), 5)
    assert not Path(watch.pid_path).exists()
    assert oct(log.parent.stat().st_mode & 0o777) == "0o700"


def test_watch_stops_itself_at_its_deadline(local_drbd: tuple[LocalRunner, Path]) -> None:
    runner, tmp = local_drbd
    runner.env["FAKE_CAPTURE"] = str(DATA / "drbd" / "84-events2-now-primary-connected.txt")
    replication = recorded_replication(runner, watch_root=str(tmp / "run"))
    watch = replication.watch("run-2", "cell-2", max_duration_s=1)
    runner.run_script(watch.start_script(), timeout=10)
    session = _session_of(Path(watch.pid_path))
    assert _wait(lambda: _process_gone(session), 10)
    verdict = watch.judge(runner.run_script(watch.stop_script(), timeout=10).stdout)
    assert not verdict.valid
    assert "had exited before the window ended" in verdict.reason
