"""Whether a process of this host still runs (:func:`process_alive`).

The lab asks it of its guests' processes, the cluster lock of the harness run that holds it.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["process_alive"]

_PROC = Path("/proc")


def process_alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie counts as gone (``/proc/<pid>`` still exists for it)."""
    # When this process started it (pytest boots the lab in-process), reap it so it does not
    # linger as our zombie.
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
