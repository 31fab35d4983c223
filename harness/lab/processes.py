"""Finding and stopping the lab's user-mode-linux processes — only ours, never anyone else's.

A UML guest is several host processes: the main kernel process, its ubd/SIGIO helper clones
and one stub process per guest address space.  SIGKILL of the main process alone leaves the
helpers running with the disk and tap open (LAB-NOTES P4).  Every guest is started in its own
session (``setsid``), so all its processes share that session id; and every one carries our
``umid=<netns>-<guest>`` and ``labdir=<state dir>`` on its command line.  We only ever signal
a process that matches both the session we recorded *and* (or, after a crash, only) that
command-line signature, so a recycled pid is never killed by mistake.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LabProcess", "find_lab_processes", "stop_processes"]

_PROC = Path("/proc")


@dataclass(frozen=True)
class LabProcess:
    pid: int
    sid: int
    guest: str


def _read_cmdline(pid: int) -> list[str]:
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def _session_id(pid: int) -> int | None:
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # Field 2 (comm) may contain spaces and parentheses: parse after the last ')'.
    fields = stat[stat.rfind(")") + 2 :].split()
    return int(fields[3]) if len(fields) > 3 else None


def find_lab_processes(netns: str, state_dir: Path) -> list[LabProcess]:
    """Every live process of this lab (matched by umid prefix and state dir)."""
    umid_prefix = f"umid={netns}-"
    labdir = f"labdir={state_dir}"
    found: list[LabProcess] = []
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        argv = _read_cmdline(pid)
        if labdir not in argv:
            continue
        umids = [a for a in argv if a.startswith(umid_prefix)]
        if not umids:
            continue
        sid = _session_id(pid)
        if sid is None:
            continue
        found.append(LabProcess(pid, sid, umids[0][len(umid_prefix) :]))
    return found


def _alive(pid: int) -> bool:
    # When this process started the guest (pytest boots the lab in-process), reap it so it
    # does not linger as our zombie.
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie still answers kill(0); it is gone for our purposes.
    try:
        state = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return False
    return state[state.rfind(")") + 2 :].split()[0] != "Z"


def _signal(pids: Iterable[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def stop_processes(netns: str, state_dir: Path, main_pids: Iterable[int], grace_s: float = 5.0) -> list[int]:
    """Stop the lab's guests: SIGTERM the main processes (a clean UML exit takes its helpers
    with it), then SIGKILL whatever of the lab is still there after ``grace_s``.

    Returns the pids that survived even SIGKILL (should be empty; a process in
    uninterruptible I/O can linger briefly).
    """
    mains = [pid for pid in main_pids if _alive(pid)]
    ours = {p.pid for p in find_lab_processes(netns, state_dir)}
    _signal([pid for pid in mains if pid in ours], signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not any(_alive(p.pid) for p in find_lab_processes(netns, state_dir)):
            return []
        time.sleep(0.05)
    # Kill back to back, main processes first, so helpers cannot respawn anything.
    for _ in range(3):
        left = find_lab_processes(netns, state_dir)
        if not left:
            return []
        left.sort(key=lambda p: p.pid != p.sid)
        _signal([p.pid for p in left], signal.SIGKILL)
        end = time.monotonic() + 2.0
        while time.monotonic() < end and any(_alive(p.pid) for p in left):
            time.sleep(0.05)
    return [p.pid for p in find_lab_processes(netns, state_dir) if _alive(p.pid)]
