"""How busy a node was over a window: CPU, I/O and memory pressure, CPU steal, swapping.

One read-only shell snippet (:func:`pressure_script`) prints, in one round trip and with shell
builtins only (on a UML guest every fork+exec costs ~22 ms), the lines that matter of

* ``/proc/uptime``: the node's own clock, so a window's length is the node's, not ours;
* ``/proc/stat``: the ``cpu`` lines (user nice system idle iowait irq softirq steal … in
  jiffies; ``steal`` is time a hypervisor gave this guest's CPU to someone else) and
  ``procs_running``/``procs_blocked``;
* ``/proc/loadavg``;
* ``/proc/vmstat``: ``pswpin``/``pswpout``, pages swapped in and out since boot;
* ``/proc/pressure/{cpu,io,memory}`` (PSI): ``some`` is the share of time at least one task
  waited for the resource, ``full`` the share all non-idle tasks did; ``total=`` is that
  time in microseconds since boot.

:func:`parse_snapshot` reads one such print into a :class:`NodeSnapshot`; two of them, taken
before and after a measurement, give a :class:`NodeWindow` (:func:`pressure_window`): each
counter as a share of the window (PSI ``Δtotal / Δt``, steal ``Δsteal / Δ all jiffies``).  A
kernel without PSI (``CONFIG_PSI`` off: the files are absent; ``psi=0``: they cannot be
read) leaves the PSI figures ``None``; the window then still has the run queue and the load
per CPU to say the CPU was oversubscribed.  Pure apart from the snippet it writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from harness.errors import InfraError
from harness.remote.batch import Shell

__all__ = [
    "PSI_RESOURCES",
    "CpuTimes",
    "NodeSnapshot",
    "NodeWindow",
    "PsiTotals",
    "parse_snapshot",
    "pressure_script",
    "pressure_window",
]

#: The PSI files read, in ``/proc/pressure/``.
PSI_RESOURCES: Final = ("cpu", "io", "memory")
_FILES: Final = (
    "/proc/uptime",
    "/proc/loadavg",
    "/proc/stat",
    "/proc/vmstat",
    *(f"/proc/pressure/{r}" for r in PSI_RESOURCES),
)
#: ``cpu`` fields summed for all CPU time: user … steal.  ``guest`` and ``guest_nice`` that
#: follow are already inside ``user`` and ``nice``; adding them would count them twice.
_CPU_FIELDS: Final = 8
_IDLE, _IOWAIT, _STEAL = 3, 4, 7


def pressure_script() -> Shell:
    """The snippet that prints every readable file of the set under a ``==> path <==`` line,
    keeping only the lines parsed (not ``/proc/stat``'s long ``intr`` line, not the rest of
    ``/proc/vmstat``).  A file that is absent or cannot be read (PSI off) prints nothing at
    all, so its header never stands alone.  Read-only; fits in a ``run_batch`` round trip."""
    files = " ".join(_FILES)
    return Shell(
        f"for hp_f in {files}; do\n"
        '  [ -r "$hp_f" ] || continue\n'
        "  hp_head=1\n"
        "  while IFS= read -r hp_l; do\n"
        '    case "$hp_l" in\n'
        "      cpu*|procs_*|pswp*|some\\ *|full\\ *|[0-9]*)\n"
        '        [ -n "$hp_head" ] && printf \'==> %s <==\\n\' "$hp_f" && hp_head=\n'
        "        printf '%s\\n' \"$hp_l\";;\n"
        "    esac\n"
        '  done 2>/dev/null < "$hp_f"\n'
        "done"
    )


@dataclass(frozen=True)
class PsiTotals:
    """One ``/proc/pressure`` file: microseconds stalled since boot, and the kernel's own
    10-second average (percent) at the moment it was read."""

    some_us: int
    some_avg10: float
    #: ``None`` where the kernel prints no ``full`` line (``cpu`` before Linux 5.13).
    full_us: int | None = None
    full_avg10: float | None = None


@dataclass(frozen=True)
class CpuTimes:
    """The ``cpu`` line of ``/proc/stat`` (all CPUs added), in jiffies."""

    jiffies: tuple[int, ...]

    @property
    def total(self) -> int:
        return sum(self.jiffies[:_CPU_FIELDS])

    @property
    def idle(self) -> int:
        """Idle and waiting for I/O: time no task wanted the CPU."""
        return sum(self.jiffies[_IDLE : _IOWAIT + 1])

    @property
    def steal(self) -> int:
        """0 on a kernel that predates the field."""
        return self.jiffies[_STEAL] if len(self.jiffies) > _STEAL else 0


@dataclass(frozen=True)
class NodeSnapshot:
    """One print of :func:`pressure_script`."""

    uptime_s: float
    cpu: CpuTimes
    ncpu: int
    procs_running: int
    procs_blocked: int
    load1: float
    #: PSI per resource; empty on a kernel without PSI.
    psi: Mapping[str, PsiTotals]
    #: ``None`` when ``/proc/vmstat`` did not say (a kernel without swap support).
    pswpin: int | None = None
    pswpout: int | None = None


def _sections(text: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("==> ") and line.endswith(" <=="):
            current = sections.setdefault(line[4:-4], [])
        elif current is not None and line.strip():
            current.append(line.strip())
    return sections


def _psi(lines: list[str], where: str) -> PsiTotals:
    values: dict[str, tuple[float, int]] = {}
    for line in lines:
        kind, _, rest = line.partition(" ")
        fields = dict(item.split("=", 1) for item in rest.split() if "=" in item)
        try:
            values[kind] = (float(fields["avg10"]), int(fields["total"]))
        except (KeyError, ValueError):
            raise InfraError(f"{where}: {line[:80]!r} is not a PSI line (some|full avg10=… total=…)") from None
    if "some" not in values:
        raise InfraError(f"{where}: no 'some' line")
    avg10, total = values["some"]
    if "full" not in values:
        return PsiTotals(total, avg10)
    return PsiTotals(total, avg10, values["full"][1], values["full"][0])


def _stat(lines: list[str], where: str) -> tuple[CpuTimes, int, int, int]:
    fields = {line.split()[0]: line.split()[1:] for line in lines}
    try:
        cpu = CpuTimes(tuple(int(v) for v in fields["cpu"]))
        running, blocked = int(fields["procs_running"][0]), int(fields["procs_blocked"][0])
    except (KeyError, ValueError, IndexError):
        raise InfraError(f"{where}: needs the 'cpu', 'procs_running' and 'procs_blocked' lines") from None
    ncpu = sum(1 for name in fields if name.startswith("cpu") and name[3:].isdigit())
    return cpu, max(ncpu, 1), running, blocked


def _first_number(lines: list[str], where: str) -> float:
    try:
        return float(lines[0].split()[0])
    except (IndexError, ValueError):
        raise InfraError(f"{where}: printed {' '.join(lines)[:60]!r}, not a number first") from None


def _vmstat(lines: list[str]) -> dict[str, int]:
    pairs = (line.split() for line in lines)
    return {p[0]: int(p[1]) for p in pairs if len(p) == 2 and p[1].isdigit()}


def parse_snapshot(text: str, node: str = "node") -> NodeSnapshot:
    """A :class:`NodeSnapshot` from :func:`pressure_script`'s print; :class:`InfraError`
    naming the node and the file when a file the window needs is missing or garbled."""
    sections = _sections(text)
    for needed in ("/proc/uptime", "/proc/stat", "/proc/loadavg"):
        if needed not in sections:
            raise InfraError(f"{node}: {needed} missing from the pressure probe's output")
    cpu, ncpu, running, blocked = _stat(sections["/proc/stat"], f"{node}: /proc/stat")
    psi = {
        resource: _psi(sections[path], f"{node}: {path}")
        for resource in PSI_RESOURCES
        if (path := f"/proc/pressure/{resource}") in sections
    }
    vmstat = _vmstat(sections.get("/proc/vmstat", []))
    return NodeSnapshot(
        uptime_s=_first_number(sections["/proc/uptime"], f"{node}: /proc/uptime"),
        cpu=cpu,
        ncpu=ncpu,
        procs_running=running,
        procs_blocked=blocked,
        load1=_first_number(sections["/proc/loadavg"], f"{node}: /proc/loadavg"),
        psi=psi,
        pswpin=vmstat.get("pswpin"),
        pswpout=vmstat.get("pswpout"),
    )


@dataclass(frozen=True)
class NodeWindow:
    """What a node went through between two snapshots; every share is a fraction 0–1."""

    node: str
    seconds: float
    ncpu: int
    #: CPU time stolen by the hypervisor, of all CPU time.
    steal: float
    #: CPU time not idle, of all CPU time.
    busy: float
    #: Runnable tasks per CPU, the mean of both ends (the probe itself left out).
    runnable_per_cpu: float
    #: One-minute load average per CPU at the end of the window.
    load_per_cpu: float
    #: PSI ``some`` shares (and ``full`` for I/O and memory); ``None`` without PSI.
    cpu_some: float | None = None
    io_some: float | None = None
    io_full: float | None = None
    memory_some: float | None = None
    memory_full: float | None = None
    #: Pages swapped in / out per second; ``None`` when the kernel did not say.
    swapin_per_s: float | None = None
    swapout_per_s: float | None = None

    @property
    def has_psi(self) -> bool:
        return self.cpu_some is not None


def _backwards(what: str, before: int, after: int) -> InfraError:
    return InfraError(f"{what} went backwards ({before} → {after}): the node rebooted between the snapshots")


def _share(before: int, after: int, whole: float, what: str) -> float:
    if after < before:
        raise _backwards(what, before, after)
    return min(1.0, (after - before) / whole) if whole > 0 else 0.0


def _psi_shares(before: NodeSnapshot, after: NodeSnapshot, node: str, seconds: float) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    micro = seconds * 1e6
    for resource in PSI_RESOURCES:
        old, new = before.psi.get(resource), after.psi.get(resource)
        if old is None or new is None:
            continue
        what = f"{node}: /proc/pressure/{resource}"
        out[f"{resource}_some"] = _share(old.some_us, new.some_us, micro, what)
        if old.full_us is not None and new.full_us is not None and resource != "cpu":
            out[f"{resource}_full"] = _share(old.full_us, new.full_us, micro, what)
    return out


def _per_second(before: int | None, after: int | None, seconds: float, what: str) -> float | None:
    if before is None or after is None:
        return None
    if after < before:
        raise _backwards(what, before, after)
    return (after - before) / seconds


def pressure_window(before: NodeSnapshot, after: NodeSnapshot, node: str = "node") -> NodeWindow:
    """The window between two snapshots of one node; :class:`InfraError` when time or a
    counter went backwards (the node rebooted) or no time passed."""
    seconds = after.uptime_s - before.uptime_s
    if seconds <= 0:
        raise InfraError(f"{node}: uptime {before.uptime_s:g} → {after.uptime_s:g} s: no window (rebooted?)")
    jiffies = after.cpu.total - before.cpu.total
    where = f"{node}: /proc/stat"
    steal = _share(before.cpu.steal, after.cpu.steal, jiffies, f"{where} steal")
    idle = _share(before.cpu.idle, after.cpu.idle, jiffies, f"{where} idle")
    # procs_running counts the reading shell itself; without it a quiet node reads 0.
    runnable = (max(before.procs_running - 1, 0) + max(after.procs_running - 1, 0)) / 2
    psi = _psi_shares(before, after, node, seconds)
    return NodeWindow(
        node=node,
        seconds=seconds,
        ncpu=after.ncpu,
        steal=steal,
        busy=max(0.0, 1.0 - idle),
        runnable_per_cpu=runnable / after.ncpu,
        load_per_cpu=after.load1 / after.ncpu,
        cpu_some=psi.get("cpu_some"),
        io_some=psi.get("io_some"),
        io_full=psi.get("io_full"),
        memory_some=psi.get("memory_some"),
        memory_full=psi.get("memory_full"),
        swapin_per_s=_per_second(before.pswpin, after.pswpin, seconds, f"{node}: /proc/vmstat pswpin"),
        swapout_per_s=_per_second(before.pswpout, after.pswpout, seconds, f"{node}: /proc/vmstat pswpout"),
    )
