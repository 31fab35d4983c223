"""The replication seam and DrbdReplication over a runner (harness.drbd.replication).

The fake runner replays outputs recorded in the lab (tests/data/drbd); it never makes DRBD
output up.  The watcher's shell scripts are also run for real on this machine, with a stand-in
``drbdsetup`` that prints a recorded stream, to check the detach / pid / kill logic.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from harness.drbd.errors import DrbdNotReady, DrbdOutputError
from harness.drbd.events import resource_from_events2
from harness.drbd.replication import (
    DrbdReplication,
    EventWatch,
    NoReplication,
    Replication,
    watch_paths,
)
from harness.drbd.state import Connection, ResourceState
from harness.errors import ConfigError, RefusedError
from harness.remote import CommandFailed, CommandResult, CommandTimeout, ConnectionLost

DATA = Path(__file__).resolve().parent.parent / "data" / "drbd"
RES = "single-az"
EVENTS_NOW = ("drbdsetup", "events2", "--now", "--statistics", RES)
ONELINERS = (DATA / "84-drbdadm-oneliners.txt").read_text().splitlines()


def read(name: str) -> str:
    return (DATA / name).read_text()


def ok(stdout: str, node: str = "a1") -> CommandResult:
    return CommandResult(node, "recorded", 0, stdout, "", 0.01)


Reply = CommandResult | Exception


@dataclass
class FakeRunner:
    """Answers each argv with recorded outputs, in order (the last one repeats)."""

    name: str = "a1"
    replies: dict[tuple[str, ...], list[Reply]] = field(default_factory=dict)
    script_replies: list[str] = field(default_factory=list)
    calls: list[tuple[str, ...]] = field(default_factory=list)
    timeouts: list[float] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)

    def run(self, argv: Sequence[str], *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        key = tuple(argv)
        self.calls.append(key)
        self.timeouts.append(timeout)
        queue = self.replies.get(key)
        assert queue, f"unexpected command {key}"
        reply = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(reply, Exception):
            raise reply
        if check and reply.exit_code != 0:
            raise CommandFailed(reply)
        return reply

    def run_script(self, script: str, *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        self.scripts.append(script)
        assert self.script_replies, "unexpected script"
        return ok(self.script_replies.pop(0), self.name)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def drbd(runner: FakeRunner, clock: FakeClock | None = None, **kwargs: object) -> DrbdReplication:
    clock = clock or FakeClock()
    return DrbdReplication(runner, RES, clock=clock, sleep=clock.sleep, **kwargs)  # type: ignore[arg-type]


def events_runner(*files: str) -> FakeRunner:
    return FakeRunner(replies={EVENTS_NOW: [ok(read(f)) for f in files]})


# -- state -------------------------------------------------------------------------------------
def test_state_and_healthy() -> None:
    replication = drbd(events_runner("84-events2-now-primary-connected.txt"))
    state = replication.state()
    assert state.describe() == "Connected UpToDate/UpToDate Primary/Secondary"
    assert replication.healthy()
    assert replication.node == "a1"


def test_unknown_resource() -> None:
    replication = drbd(events_runner("9-events2-no-resources.txt"))
    with pytest.raises(DrbdNotReady, match="a1: DRBD resource single-az is not configured"):
        replication.state()
    assert not replication.healthy()


def test_wait_healthy_polls_until_healthy() -> None:
    clock = FakeClock()
    runner = events_runner(
        "84-events2-now-primary-standalone.txt",
        "84-events2-now-primary-syncsource.txt",
        "84-events2-now-primary-connected.txt",
    )
    state = drbd(runner, clock).wait_healthy(30)
    assert state.healthy
    assert len(runner.calls) == 3
    assert clock.sleeps == [1.0, 1.0]


def test_wait_healthy_deadline_names_node_resource_and_last_state() -> None:
    clock = FakeClock()
    runner = events_runner("84-events2-now-primary-syncsource.txt")
    with pytest.raises(DrbdNotReady) as info:
        drbd(runner, clock).wait_healthy(5)
    assert str(info.value) == (
        "a1: DRBD resource single-az not healthy after 5 s; last state: SyncSource UpToDate/Inconsistent "
        "Primary/Secondary out-of-sync:306980KiB (replication to peer volume 0 is SyncSource; "
        "peer disk of peer volume 0 is Inconsistent)"
    )
    assert info.value.exit_code == 3
    assert clock.now == pytest.approx(1005.0)
    assert all(t <= 30 for t in runner.timeouts)


def test_wait_healthy_on_standalone_explains_it_does_not_heal() -> None:
    with pytest.raises(DrbdNotReady, match=r"StandAlone does not reconnect by itself.*drbdadm connect single-az"):
        drbd(events_runner("84-events2-now-primary-standalone.txt")).wait_healthy(2)


def test_wait_healthy_with_out_of_sync_baseline() -> None:
    runner = FakeRunner(
        replies={
            ("drbdsetup", "events2", "--now", "--statistics", "some-resource"): [
                ok(read("9-events2-create-change-statistics.txt"))
            ]
        }
    )
    clock = FakeClock()
    replication = DrbdReplication(runner, "some-resource", clock=clock, sleep=clock.sleep)
    assert replication.wait_healthy(1).out_of_sync_kib == 25
    with pytest.raises(DrbdNotReady, match="out-of-sync 25 KiB > 0 KiB"):
        replication.wait_healthy(1, max_out_of_sync_kib=0)


def test_wait_healthy_retries_failed_probes() -> None:
    timeout = CommandTimeout("a1", "drbdsetup events2 --now --statistics single-az", 30)
    runner = FakeRunner(replies={EVENTS_NOW: [timeout, ok(read("84-events2-now-primary-connected.txt"))]})
    assert drbd(runner).wait_healthy(10).healthy


def test_wait_healthy_reports_the_last_probe_error() -> None:
    # The message drbdsetup prints without the kernel module (ecosystem.md §4.1, verified).
    failed = CommandResult(
        "a1", "drbdsetup events2 --now --statistics single-az", 20, "", "Failed to modprobe drbd", 0.1
    )
    runner = FakeRunner(replies={EVENTS_NOW: [failed]})
    with pytest.raises(DrbdNotReady, match=r"last probe failed: .*Failed to modprobe drbd"):
        drbd(runner).wait_healthy(3)


def test_wait_healthy_does_not_retry_a_lost_connection() -> None:
    runner = FakeRunner(replies={EVENTS_NOW: [ConnectionLost("a1", "reset by peer")]})
    with pytest.raises(ConnectionLost):
        drbd(runner).wait_healthy(60)
    assert len(runner.calls) == 1


def test_split_brain_fails_at_once() -> None:
    healthy = resource_from_events2(read("84-events2-now-primary-connected.txt"), RES)
    assert healthy is not None
    split = replace(healthy, connections=(Connection(0, "peer", "StandAlone", sync_state="SplitBrain"),))

    class SplitBrained(DrbdReplication):
        def state(self, *, timeout: float | None = None) -> ResourceState:
            return split

    clock = FakeClock()
    with pytest.raises(DrbdNotReady, match=r"split brain.*does not resolve it"):
        SplitBrained(FakeRunner(), RES, clock=clock, sleep=clock.sleep).wait_healthy(300)
    assert clock.sleeps == []


# -- devices, versions, roles ------------------------------------------------------------------
def test_device_resolution_and_safety() -> None:
    runner = FakeRunner(
        replies={
            ("drbdadm", "sh-dev", RES): [ok(ONELINERS[0] + "\n")],
            ("drbdadm", "sh-ll-dev", RES): [ok(ONELINERS[1] + "\n")],
        }
    )
    assert drbd(runner).device == "/dev/drbd0"
    assert drbd(runner, device="/dev/drbd0").resolve_device() == "/dev/drbd0"
    assert drbd(runner).backing_device() == "/dev/ubda"
    with pytest.raises(RefusedError, match="inventory says /dev/drbd1"):
        drbd(runner, device="/dev/drbd1").resolve_device()
    bad = FakeRunner(replies={("drbdadm", "sh-dev", RES): [ok(ONELINERS[1] + "\n")]})
    with pytest.raises(DrbdOutputError, match="not /dev/drbdN"):
        drbd(bad).resolve_device()


@pytest.mark.parametrize("device", ["/dev/vda", "/dev/drbd0;reboot", "drbd0", "/dev/drbd/by-res/r0/0"])
def test_inventory_device_must_be_a_drbd_minor(device: str) -> None:
    with pytest.raises(ConfigError):
        drbd(FakeRunner(), device=device)


def test_version_and_show() -> None:
    runner = FakeRunner(
        replies={
            ("drbdadm", "--version"): [ok("\n".join(ONELINERS[5:8]) + "\n")],
            ("drbdsetup", "show", RES): [ok(read("84-drbdsetup-show.txt"))],
        }
    )
    replication = drbd(runner)
    assert replication.version().kernel == "8.4.11"
    assert "10.213.1.12:7789" in replication.show()


def test_promote_and_demote_check_the_role() -> None:
    runner = FakeRunner(
        replies={
            ("drbdadm", "primary", RES): [ok("")],
            ("drbdadm", "secondary", RES): [ok("")],
            EVENTS_NOW: [
                ok(read("84-events2-now-primary-connected.txt")),
                ok(read("84-events2-now-primary-connected.txt")),
                ok(read("84-events2-now-secondary-connected.txt")),
            ],
        }
    )
    replication = drbd(runner)
    assert replication.promote().role == "Primary"
    with pytest.raises(DrbdNotReady, match="is Primary, expected Secondary"):
        replication.demote()
    assert replication.demote().role == "Secondary"
    assert ("drbdadm", "primary", RES) in runner.calls
    assert not any("--force" in call for call in runner.calls)


def test_connection_changes_run_only_the_plain_commands() -> None:
    runner = FakeRunner(
        replies={
            (cmd, *args): [ok("")]
            for cmd, *args in [("drbdadm", c, RES) for c in ("disconnect", "connect", "down", "up")]
        }
    )
    replication = drbd(runner)
    replication.disconnect()
    replication.connect()
    replication.down()
    replication.up()
    assert runner.calls == [("drbdadm", c, RES) for c in ("disconnect", "connect", "down", "up")]


# -- the event watch (scripted) ----------------------------------------------------------------
def test_start_watch_script() -> None:
    runner = FakeRunner(script_replies=["4242\n"])
    watch = drbd(runner).start_watch("run-1", max_duration_s=119.5)
    assert watch == EventWatch(
        "a1",
        RES,
        "run-1",
        "/run/harness/run-1/events-single-az.log",
        "/run/harness/run-1/events-single-az.pid",
        4242,
        119.5,
    )
    (script,) = runner.scripts
    assert "mkdir -p /run/harness/run-1" in script
    assert "setsid sh -c" in script
    assert "timeout --kill-after=5 120 drbdsetup events2 --timestamps --statistics single-az" in script
    assert "> /run/harness/run-1/events-single-az.log 2>&1 < /dev/null" in script


@pytest.mark.parametrize("run_id", ["", "..", ".hidden", "-x", "a/b", "a b", "r;reboot", "x" * 65])
def test_start_watch_refuses_bad_run_ids(run_id: str) -> None:
    runner = FakeRunner()
    with pytest.raises(ConfigError):
        drbd(runner).start_watch(run_id, max_duration_s=60)
    assert runner.scripts == []


@pytest.mark.parametrize("duration", [0, -1, 86401])
def test_start_watch_refuses_bad_durations(duration: float) -> None:
    with pytest.raises(ConfigError):
        drbd(FakeRunner()).start_watch("r1", max_duration_s=duration)


def test_start_watch_without_pid() -> None:
    with pytest.raises(DrbdOutputError, match="did not report a pid"):
        drbd(FakeRunner(script_replies=["\n"])).start_watch("r1", max_duration_s=60)


def _watch(max_duration_s: float = 60) -> EventWatch:
    _, log, pid = watch_paths("r1", RES)
    return EventWatch("a1", RES, "r1", log, pid, 4242, max_duration_s)


@pytest.mark.parametrize(
    ("alive", "capture", "valid", "reason"),
    [
        ("1", "84-events2-now-primary-connected.txt", True, "single-az stayed Connected"),
        (
            "1",
            "84-events2-stream-primary-disconnect-resync.txt",
            False,
            "Connected -> Disconnecting at 2026-11-21T09:48:02",
        ),
        ("0", "84-events2-now-primary-connected.txt", False, "event watcher on a1 had exited before the window ended"),
        ("0", "84-events2-stream-primary-disconnect-resync.txt", False, "Connected -> Disconnecting"),
    ],
)
def test_stop_watch_verdicts(alive: str, capture: str, valid: bool, reason: str) -> None:
    runner = FakeRunner(script_replies=[f"harness-watch alive={alive}\n" + read(capture)])
    report = drbd(runner).stop_watch(_watch())
    assert report.verdict.valid is valid
    assert reason in report.verdict.reason
    assert report.capture == read(capture)
    assert report.watcher_alive_at_stop is (alive == "1")
    assert len(report.events) == len([line for line in read(capture).splitlines() if line])
    (script,) = runner.scripts
    assert 'grep -q drbdsetup "/proc/$pid/cmdline"' in script
    assert "rm -f /run/harness/r1/events-single-az.pid" in script


def test_stop_watch_rejects_foreign_paths_and_garbage() -> None:
    forged = replace(_watch(), log_path="/etc/shadow")
    with pytest.raises(ConfigError):
        drbd(FakeRunner()).stop_watch(forged)
    with pytest.raises(DrbdOutputError):
        drbd(FakeRunner(script_replies=["sh: 1: cannot create\n"])).stop_watch(_watch())


# -- the watch scripts, run for real with a stand-in drbdsetup ---------------------------------
@dataclass
class LocalRunner:
    """Runs scripts with the local /bin/sh (no sudo, no SSH): only for the watch scripts."""

    env: dict[str, str]
    name: str = "local"

    def run(self, argv: Sequence[str], *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        raise AssertionError("only scripts are expected")

    def run_script(self, script: str, *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        done = subprocess.run(
            ["sh", "-c", script], env=self.env, capture_output=True, text=True, timeout=timeout, check=False
        )
        result = CommandResult(self.name, "sh", done.returncode, done.stdout, done.stderr, 0.0)
        if check and done.returncode != 0:
            raise CommandFailed(result)
        return result


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
    return LocalRunner(env), tmp_path


def test_watch_scripts_detach_capture_and_stop(local_drbd: tuple[LocalRunner, Path]) -> None:
    runner, tmp = local_drbd
    runner.env["FAKE_CAPTURE"] = str(DATA / "84-events2-stream-primary-disconnect-resync.txt")
    replication = DrbdReplication(runner, RES, watch_root=str(tmp / "run"))
    watch = replication.start_watch("run-1", max_duration_s=30)
    log = Path(watch.log_path)
    expected = read("84-events2-stream-primary-disconnect-resync.txt")
    assert _wait(lambda: log.exists() and log.read_text() == expected, 5)
    inner_pid = int((tmp / "drbdsetup.pid").read_text())
    assert not _process_gone(watch.pid or 0)

    report = replication.stop_watch(watch)
    assert report.watcher_alive_at_stop
    assert report.capture == expected
    assert "Connected -> Disconnecting at 2026-11-21T09:48:02.743260+00:00" in report.verdict.reason
    assert _wait(lambda: _process_gone(watch.pid or 0) and _process_gone(inner_pid), 5)
    assert not Path(watch.pid_path).exists()
    assert oct(Path(watch.log_path).parent.stat().st_mode & 0o777) == "0o700"


def test_watch_stops_itself_at_its_deadline(local_drbd: tuple[LocalRunner, Path]) -> None:
    runner, tmp = local_drbd
    runner.env["FAKE_CAPTURE"] = str(DATA / "84-events2-now-primary-connected.txt")
    replication = DrbdReplication(runner, RES, watch_root=str(tmp / "run"))
    watch = replication.start_watch("run-2", max_duration_s=1)
    assert _wait(lambda: _process_gone(watch.pid or 0), 10)
    report = replication.stop_watch(watch)
    assert not report.watcher_alive_at_stop
    assert not report.verdict.valid
    assert "had exited before the window ended" in report.verdict.reason


# -- the seam ----------------------------------------------------------------------------------
def test_both_implementations_fit_the_protocol() -> None:
    impls: list[Replication] = [drbd(events_runner("84-events2-now-primary-connected.txt")), NoReplication("/dev/vdb")]
    assert [r.state().healthy for r in impls] == [True, True]
    assert [r.device for r in impls[1:]] == ["/dev/vdb"]


def test_no_replication() -> None:
    plain = NoReplication("/dev/nvme1n1", node="b1")
    assert plain.wait_healthy(10).describe() == "plain device /dev/nvme1n1 (no replication)"
    assert plain.promote().out_of_sync_kib == 0
    assert plain.demote().role == "Primary"
    assert plain.healthy()
    report = plain.stop_watch(plain.start_watch("r1", max_duration_s=60))
    assert report.verdict.valid
    assert report.events == ()


@pytest.mark.parametrize("device", ["vdb", "/dev/../etc/passwd", "/dev/vdb;reboot", "/tmp/x"])
def test_no_replication_refuses_odd_paths(device: str) -> None:
    with pytest.raises(ConfigError):
        NoReplication(device)
