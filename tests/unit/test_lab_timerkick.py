"""The lab's timer kick (harness.lab.timerkick), with real processes standing in for guests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.lab.processes import catches_signal
from harness.lab.timerkick import _open_guests, kick_forever
from harness.probes.process import process_alive

MARKER = "labdir=/run/test-timerkick"

# counts the SIGALRMs it receives; prints the count when asked with SIGUSR1
_COUNTER = """
import signal, sys, time
count = 0
def alarm(*_):
    global count
    count += 1
def report(*_):
    print(count, flush=True)
signal.signal(signal.SIGALRM, alarm)
signal.signal(signal.SIGUSR1, report)
while True:
    time.sleep(1)
"""


@pytest.fixture
def guest() -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen([sys.executable, "-c", _COUNTER, MARKER], stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)  # handlers installed
    yield proc
    proc.kill()
    proc.wait()


def _state(path: Path, pids: dict[str, int]) -> Path:
    path.write_text(json.dumps({"pids": pids}))
    return path


def test_only_processes_of_the_guest_uid_with_the_lab_marker_are_opened(
    guest: subprocess.Popen[str], tmp_path: Path
) -> None:
    state = _state(tmp_path / "state.json", {"a1": guest.pid, "self": os.getpid()})
    fds: dict[int, int] = {}
    assert _open_guests(state, os.getuid(), MARKER, fds)
    assert list(fds) == [guest.pid]  # this test process has no marker
    other: dict[int, int] = {}
    assert _open_guests(state, os.getuid() + 1, MARKER, other)
    assert other == {}  # a reused pid of another uid never gets a signal
    state.unlink()
    assert not _open_guests(state, os.getuid(), MARKER, fds)  # lab gone: stop
    for fd in fds.values():
        os.close(fd)


def test_the_kick_signals_every_guest_and_ends_with_the_state_file(
    guest: subprocess.Popen[str], tmp_path: Path
) -> None:
    state = _state(tmp_path / "state.json", {"a1": guest.pid})
    kicker = threading.Thread(target=kick_forever, args=(state, os.getuid(), MARKER, 0.01), daemon=True)
    kicker.start()
    time.sleep(0.5)
    state.unlink()
    kicker.join(timeout=5)
    assert not kicker.is_alive()
    guest.send_signal(signal.SIGUSR1)
    assert guest.stdout is not None
    received = int(guest.stdout.readline())
    assert received >= 10  # ~50 at 10 ms; a busy 2-core box still delivers a fraction


# installs its SIGALRM handler only after a delay, like linux.uml before its timer setup
_LATE_HANDLER = """
import signal, sys, time
time.sleep(float(sys.argv[1]))
count = 0
def alarm(*_):
    global count
    count += 1
signal.signal(signal.SIGALRM, alarm)
time.sleep(float(sys.argv[2]))
print(count, flush=True)
"""


def test_a_guest_without_its_alarm_handler_yet_is_not_kicked(tmp_path: Path) -> None:
    late = subprocess.Popen(
        [sys.executable, "-c", _LATE_HANDLER, "0.6", "0.6", MARKER], stdout=subprocess.PIPE, text=True
    )
    try:
        assert not catches_signal(late.pid, signal.SIGALRM)
        state = _state(tmp_path / "state.json", {"a1": late.pid})
        kicker = threading.Thread(target=kick_forever, args=(state, os.getuid(), MARKER, 0.01), daemon=True)
        kicker.start()
        out, _ = late.communicate(timeout=30)
        state.unlink()
        kicker.join(timeout=5)
        # default SIGALRM action would have ended it with -14 during its first 0.6 s
        assert late.returncode == 0
        assert int(out) >= 5  # kicked once the handler was in place
    finally:
        late.kill()
        late.wait()


def test_catches_signal_reads_the_handler_mask(guest: subprocess.Popen[str]) -> None:
    assert catches_signal(guest.pid, signal.SIGALRM)
    assert catches_signal(guest.pid, signal.SIGUSR1)
    assert not catches_signal(guest.pid, signal.SIGUSR2)
    assert not catches_signal(guest.pid, signal.SIGHUP)


def test_a_zombie_is_not_alive_and_catches_nothing() -> None:
    # a child that exits and is not waited for stays a zombie with a /proc entry
    child = subprocess.Popen([sys.executable, "-c", "import signal; signal.signal(signal.SIGALRM, print)"])
    deadline = time.monotonic() + 30
    while Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert Path(f"/proc/{child.pid}").exists()
    assert not catches_signal(child.pid, signal.SIGALRM)
    assert not process_alive(child.pid)
    child.wait()
