"""Reboot a lab guest whose kernel panicked, as a cloud VM with ``kernel.panic`` set does.

A UML guest never reboots after a panic: UML's panic notifier dumps core and the process
ends, whatever ``kernel.panic`` says.  A real node crashed with sysrq (the failover scenario
on a cluster that is not the lab, :mod:`harness.cell.sysrq`) comes back by itself a few seconds
later.  So that the lab can pose as such a cluster, this host-side helper watches the guests
of the lab's state file and boots again one that is gone with a panic as the last thing its
console said, keeping its disks (a rejoin).  A guest the lab itself killed (SIGKILL, the
lab's own crash) ends without a panic and is left alone.  The helper ends with the lab.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from harness.inventory import load_inventory
from harness.lab.lifecycle import Lab
from harness.lab.state import LabState
from harness.probes.process import process_alive

__all__ = ["PANIC_REBOOT_DELAY_S", "main", "panicked", "reboot_forever"]

#: what `kernel.panic = 2` (set in every guest) means on a real node: reboot 2 s after the panic
PANIC_REBOOT_DELAY_S = 2.0
_POLL_S = 0.5
_BOOT_BANNER = "Linux version "
_PANIC = "Kernel panic - not syncing"


def panicked(console: str) -> bool:
    """True when the console's last boot ended in a kernel panic."""
    last_boot = console.rfind(_BOOT_BANNER)
    return console.find(_PANIC, max(last_boot, 0)) >= 0


def _console_tail(path: Path, size: int = 64 * 1024) -> str:
    try:
        with path.open("rb") as f:
            f.seek(max(0, path.stat().st_size - size))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def reboot_forever(state_dir: Path) -> None:
    handled: set[int] = set()
    while (state_dir / "state.json").exists():
        state = LabState.load(state_dir)
        if state is not None and state.phase == "up" and state.inventory:
            for name, pid in sorted(state.pids.items()):
                if pid in handled or process_alive(pid):
                    continue
                if not panicked(_console_tail(state_dir / "guests" / name / "console.log")):
                    continue
                handled.add(pid)
                time.sleep(PANIC_REBOOT_DELAY_S)
                lab = Lab(load_inventory(Path(state.inventory)), Path(state.inventory))
                lab.crash_guest(name)  # reaps what is left of the dead guest's session
                lab.restart_guest(name)
        time.sleep(_POLL_S)


def main(argv: list[str]) -> int:
    reboot_forever(Path(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
