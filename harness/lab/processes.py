"""Finding and stopping the lab's user-mode-linux processes — only ours, never anyone else's.

A UML guest is several host processes: the main kernel process, its ubd/SIGIO helper clones
and one stub process per guest address space.  SIGKILL of the main process alone leaves the
helpers running with the disk and tap open (re-parented to pid 1).  Every guest is started
in its own session (``setsid``), so all its processes share that session id; and every one
carries our ``umid=<netns>-<guest>`` and ``labdir=<state dir>`` on its command line.  We only ever signal
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

from harness.probes.process import process_alive

__all__ = [
    "LabProcess",
    "catches_signal",
    "cmdline_of",
    "find_lab_processes",
    "find_orphan_guest_processes",
    "kill_session",
    "session_of",
    "stop_processes",
    "uid_of",
]

_PROC = Path("/proc")


@dataclass(frozen=True)
class LabProcess:
    pid: int
    sid: int
    guest: str


def cmdline_of(pid: int) -> list[str]:
    """The command line of ``pid`` (empty when it is gone)."""
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def session_of(pid: int) -> int | None:
    """The session id of ``pid`` (None when it is gone)."""
    return _session_id(pid)


def _session_id(pid: int) -> int | None:
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # Field 2 (comm) may contain spaces and parentheses: parse after the last ')'.
    fields = stat[stat.rfind(")") + 2 :].split()
    return int(fields[3]) if len(fields) > 3 else None


def _exe(pid: int) -> str:
    try:
        return os.readlink(_PROC / str(pid) / "exe")
    except OSError:
        return ""


def uid_of(pid: int) -> int | None:
    """The uid owning ``pid`` (None when it is gone)."""
    try:
        return (_PROC / str(pid)).stat().st_uid
    except OSError:
        return None


def _pids() -> list[int]:
    return [int(e.name) for e in _PROC.iterdir() if e.name.isdigit()]


def find_lab_processes(netns: str, state_dir: Path) -> list[LabProcess]:
    """Every live process of this lab.

    A UML kernel process carries our ``umid=`` and ``labdir=`` on its command line; the guest's
    own processes are host processes too (ptrace stubs) that show the *guest's* program
    (``sleep 3600``, even as ``/proc/PID/exe``), but they stay in the session the lab started
    the guest in, as the lab's uid.  So: find the kernel processes by command line, then take
    the lab uid's processes of their sessions.
    """
    umid_prefix = f"umid={netns}-"
    labdir = f"labdir={state_dir}"
    by_sid: dict[int, str] = {}
    found: dict[int, LabProcess] = {}
    pids = _pids()
    for pid in pids:
        argv = cmdline_of(pid)
        if labdir not in argv:
            continue
        umids = [a for a in argv if a.startswith(umid_prefix)]
        sid = _session_id(pid)
        if not umids or sid is None or not process_alive(pid):
            continue
        guest = umids[0][len(umid_prefix) :]
        by_sid[sid] = guest
        found[pid] = LabProcess(pid, sid, guest)
    uids = {uid_of(p.pid) for p in found.values()}
    for pid in pids:
        if pid in found:
            continue
        sid = _session_id(pid)
        if sid in by_sid and uid_of(pid) in uids and process_alive(pid):  # zombies are gone for our purposes
            found[pid] = LabProcess(pid, sid, by_sid[sid])
    return sorted(found.values(), key=lambda p: p.pid)


def find_orphan_guest_processes(uid: int) -> list[int]:
    """Processes of the lab's own uid whose guest kernel is gone (their session leader, the
    UML main process, died): what a stopped or SIGKILLed guest can leave behind.  With the
    tracing kernel gone, a guest process's pending system call runs natively on the host — a
    guest's ``sleep 3600`` sleeps on, as the lab uid, holding the guest's tap and namespace."""
    orphans = []
    for pid in _pids():
        if uid_of(pid) != uid:
            continue
        sid = _session_id(pid)
        if sid is None or sid == pid:
            continue
        leader = cmdline_of(sid)
        if not any(a.startswith("umid=") for a in leader) and process_alive(pid):
            orphans.append(pid)
    return orphans


def kill_session(sid: int, uid: int) -> None:
    """SIGKILL every process of a guest's session (the lab uid's only; main process first)."""
    members = [pid for pid in _pids() if _session_id(pid) == sid and uid_of(pid) == uid]
    members.sort(key=lambda pid: pid != sid)
    _signal(members, signal.SIGKILL)


def catches_signal(pid: int, sig: signal.Signals) -> bool:
    """True when ``pid`` has a handler installed for ``sig`` (``SigCgt`` in its status).

    A user-mode-linux kernel installs its SIGALRM handler only at timer setup, some
    milliseconds into its boot; until then SIGALRM's default action kills it (measured: a
    SIGALRM 1-10 ms after exec ends ``linux.uml`` with -14), and so does the first instant
    after a guest ``reboot``, which re-execs the same pid."""
    try:
        status = (_PROC / str(pid) / "status").read_text()
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (int(sig) - 1) & 1)
    return False


def _signal(pids: Iterable[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def kill_orphans(uid: int, timeout_s: float = 5.0) -> list[int]:
    """SIGKILL the lab uid's orphaned guest processes; returns any that survived."""
    deadline = time.monotonic() + timeout_s
    while True:
        orphans = [pid for pid in find_orphan_guest_processes(uid) if process_alive(pid)]
        if not orphans or time.monotonic() > deadline:
            return orphans
        _signal(orphans, signal.SIGKILL)
        time.sleep(0.1)


def stop_processes(netns: str, state_dir: Path, main_pids: Iterable[int], grace_s: float = 5.0) -> list[int]:
    """Stop the lab's guests: SIGTERM the main processes (a clean UML exit takes its helpers
    with it), then SIGKILL whatever of the lab is still there after ``grace_s``.

    Returns the pids that survived even SIGKILL (should be empty; a process in
    uninterruptible I/O can linger briefly).
    """
    mains = [pid for pid in main_pids if process_alive(pid)]
    ours = {p.pid for p in find_lab_processes(netns, state_dir)}
    _signal([pid for pid in mains if pid in ours], signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not any(process_alive(p.pid) for p in find_lab_processes(netns, state_dir)):
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
        while time.monotonic() < end and any(process_alive(p.pid) for p in left):
            time.sleep(0.05)
    return [p.pid for p in find_lab_processes(netns, state_dir) if process_alive(p.pid)]
