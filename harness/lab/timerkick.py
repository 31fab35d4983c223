"""Timer kick: a small process that sends each lab guest's kernel a SIGALRM every few tens of
milliseconds while the lab is up.

Why: a user-mode-linux guest keeps time with one host POSIX timer that raises SIGALRM.  Now
and then the guest loses an expiry and is left with no timer armed; its idle loop then spins
(``rt_sigprocmask``, ``timer_gettime``, ``getpid`` at 100 % of a host CPU) and nothing that
waits for a timer ever runs again: sshd stops answering and every cell on that guest fails.
Seen on the lab with a pair's guests on one host CPU; a single ``kill -ALRM`` brought the
stuck guest back at once.  An extra SIGALRM is a spurious timer interrupt, which the guest's
clock-event code handles by checking what is due and re-arming, so kicking a healthy guest
costs a few microseconds and changes nothing.

A guest is only kicked while it has its SIGALRM handler installed: in the first milliseconds
of ``linux.uml`` (and right after a guest reboot re-execs it) SIGALRM still has its default
action and would kill the guest, so a kick right after a guest starts could catch it before
its timer setup.

Signals go through pidfds opened after checking the process's uid and command line, so a
guest's reused pid never receives one.  The pid list is re-read from the lab's state file
(a crashed and restarted guest has a new pid).  The process ends when the state file is gone.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path

from harness.lab.processes import catches_signal, cmdline_of, uid_of

__all__ = ["DEFAULT_INTERVAL_S", "kick_forever", "main"]

#: a stuck guest waits at most this long; 20 signals/s per guest cost nothing measurable
DEFAULT_INTERVAL_S = 0.05
#: how often the state file is re-read for restarted guests
_REFRESH_S = 1.0


def _is_guest(pid: int, uid: int, marker: str) -> bool:
    return uid_of(pid) == uid and marker in cmdline_of(pid)


def _open_guests(state_file: Path, uid: int, marker: str, open_fds: dict[int, int]) -> bool:
    """Refresh ``open_fds`` (pid -> pidfd) from the state file; False once it is gone."""
    try:
        pids = set(json.loads(state_file.read_text()).get("pids", {}).values())
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return True  # mid-rewrite: keep the current set
    for pid in [p for p in open_fds if p not in pids]:
        os.close(open_fds.pop(pid))
    for pid in pids:
        if pid not in open_fds and _is_guest(pid, uid, marker):
            with contextlib.suppress(OSError):
                open_fds[pid] = os.pidfd_open(pid)
    return True


def kick_forever(state_file: Path, uid: int, marker: str, interval_s: float = DEFAULT_INTERVAL_S) -> None:
    fds: dict[int, int] = {}
    next_refresh = 0.0
    while True:
        now = time.monotonic()
        if now >= next_refresh:
            if not _open_guests(state_file, uid, marker, fds):
                return
            next_refresh = now + _REFRESH_S
        for pid, fd in list(fds.items()):
            if not catches_signal(pid, signal.SIGALRM):
                continue  # still booting (or re-exec'd by a reboot): SIGALRM would kill it
            try:
                signal.pidfd_send_signal(fd, signal.SIGALRM)
            except ProcessLookupError:  # exited; the next refresh drops it
                os.close(fds.pop(pid))
        time.sleep(interval_s)


def main(argv: list[str]) -> int:
    """``python -m harness.lab.timerkick STATE_FILE UID MARKER [INTERVAL_S] [marker args...]``;
    trailing ``umid=``/``labdir=`` words only mark the process for the lab's leftover checks."""
    state_file, uid, marker = Path(argv[0]), int(argv[1]), argv[2]
    interval = float(argv[3]) if len(argv) > 3 and "=" not in argv[3] else DEFAULT_INTERVAL_S
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    kick_forever(state_file, uid, marker, interval)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
