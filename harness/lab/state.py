"""The lab's host: the packages it needs, and the record of what ``up`` started.

:class:`LabState` is persisted in the state directory at every step of ``up``, so ``down``
works from any process, even after a crash.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.errors import InfraError

__all__ = ["LATENCY_QOS_DEVICE", "MARKER", "REQUIRED_TOOLS", "LabState", "check_host", "mounted", "run_host"]

#: the file that marks a directory as a lab state directory (``down`` removes only such)
MARKER = ".harness-lab"

# tool -> Debian package; guests run the host's binaries through hostfs, so all are host packages.
REQUIRED_TOOLS: dict[str, str] = {
    "/usr/bin/linux.uml": "user-mode-linux",
    "/usr/sbin/sshd": "openssh-server",
    "fio": "fio",
    "drbdadm": "drbd-utils",
    "ip": "iproute2",
    "tc": "iproute2",
    "modprobe": "kmod",
    "mdadm": "mdadm",
    "mkfs.xfs": "xfsprogs",
    "mkfs.ext4": "e2fsprogs",
    "ping": "iputils-ping",
    "setpriv": "util-linux",
}


def check_host() -> None:
    """Root and the needed packages; the error says exactly what to run."""
    if os.geteuid() != 0:
        raise InfraError("the embedded lab needs root (network namespaces, taps, tmpfs); run as root or with sudo")
    missing = sorted({pkg for tool, pkg in REQUIRED_TOOLS.items() if shutil.which(tool) is None})
    if missing:
        raise InfraError(
            f"missing Debian packages for the lab: {' '.join(missing)}; "
            f"install them with: apt-get install -y {' '.join(missing)}  (or run scripts/bootstrap)"
        )
    uml_modules = Path("/usr/lib/uml/modules")
    if not uml_modules.is_dir() or not any(uml_modules.iterdir()):
        raise InfraError("user-mode-linux modules missing under /usr/lib/uml/modules; reinstall user-mode-linux")


#: the kernel's PM QoS interface for CPU wake-up latency
LATENCY_QOS_DEVICE = "/dev/cpu_dma_latency"


@dataclass
class LabState:
    """What ``up`` started, persisted so ``down`` works from any process, even after a crash."""

    netns: str
    state_dir: str
    inventory: str | None
    phase: str = "starting"
    started_at: float = field(default_factory=time.time)
    pids: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    #: the process holding the host's CPU wake-up latency request (see Lab._hold_latency)
    latency_hold_pid: int | None = None
    #: the process that keeps the guests' timers going (see harness.lab.timerkick)
    timer_kick_pid: int | None = None
    #: the process that reboots a guest after a kernel panic (see harness.lab.panicreboot)
    panic_reboot_pid: int | None = None
    #: the DRBD 9 the guests load (harness.lab.drbd9); None: the UML kernel's own DRBD 8.4
    drbd: str | None = None

    @classmethod
    def load(cls, state_dir: Path) -> LabState | None:
        try:
            data = json.loads((state_dir / "state.json").read_text())
        except (OSError, ValueError):
            return None
        return cls(**data)

    def save(self) -> None:
        path = Path(self.state_dir) / "state.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2, sort_keys=True))
        tmp.replace(path)


def run_host(argv: list[str], *, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    res = subprocess.run(argv, input=stdin, capture_output=True, text=True, check=False)
    if check and res.returncode != 0:
        raise InfraError(f"`{' '.join(argv)}` failed ({res.returncode}): {res.stderr.strip()}")
    return res


def mounted(path: Path) -> bool:
    target = str(path)
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return False
    return any(line.split()[1] == target for line in mounts if len(line.split()) > 1)
