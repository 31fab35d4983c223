"""Bring the embedded lab up and down: namespace, bridges, taps, disks, guests, SSH, DRBD.

``Lab(inventory).up()`` returns once every guest answers SSH with its pinned host key and
every DRBD resource is Connected, UpToDate/UpToDate, Primary/Secondary.  ``down()`` stops
only processes this lab started, deletes the namespace (taps and bridges go with it),
unmounts the disk tmpfs and removes the state directory; it is idempotent and also cleans a
half-started or crashed lab.  Any failure during ``up()`` runs ``down()`` before raising.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.errors import ConfigError, InfraError
from harness.inventory.models import AzLinkSpec, Inventory, LabSpec, SshSpec
from harness.lab import topology as topo_mod
from harness.lab.keys import generate_keypair, known_hosts_line, write_private_key
from harness.lab.processes import (
    find_lab_processes,
    find_orphan_guest_processes,
    kill_orphans,
    kill_session,
    process_alive,
    session_of,
    stop_processes,
)
from harness.lab.topology import ROUTER, Guest, LabTopology, build_topology, guest_dir
from harness.lab.xstate import XSTATE_SHIM, build_xstate_shim
from harness.netns import connect_in_netns, netns_exists
from harness.remote import SshNode

__all__ = ["REQUIRED_TOOLS", "Lab", "LabState", "check_host"]

GUEST_FILES = Path(__file__).with_name("guest")
_TRACE_LINE = re.compile(r"\s*(\[<[0-9a-f]+>\]|[0-9a-f]{8}( [0-9a-f]{8})+\s*$|Call Trace:|Stack:)")
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

Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


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


def _run(argv: list[str], *, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    res = subprocess.run(argv, input=stdin, capture_output=True, text=True, check=False)
    if check and res.returncode != 0:
        raise InfraError(f"`{' '.join(argv)}` failed ({res.returncode}): {res.stderr.strip()}")
    return res


def _mounted(path: Path) -> bool:
    target = str(path)
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return False
    return any(line.split()[1] == target for line in mounts if len(line.split()) > 1)


class Lab:
    """The embedded lab described by an inventory with a ``lab:`` section."""

    def __init__(self, inventory: Inventory, inventory_path: Path | None = None, progress: Progress = _quiet) -> None:
        if inventory.lab is None:
            raise ConfigError(f"inventory {inventory.name!r} has no `lab:` section")
        self.inventory = inventory
        self.inventory_path = inventory_path
        self.spec: LabSpec = inventory.lab
        self.topology: LabTopology = build_topology(inventory)
        self.progress = progress
        state_dir = self.spec.state_dir
        if len(state_dir.parts) < 3:
            raise ConfigError(
                f"lab.state_dir {state_dir} is too close to / to be removed safely; use e.g. /run/harness-lab"
            )
        self.state_dir = state_dir
        #: the guests this object started, for their exit status if one dies during boot
        self._guest_procs: dict[str, subprocess.Popen[bytes]] = {}
        host_cpus = sorted(os.sched_getaffinity(0))
        self.guest_cpus: dict[str, int] = (
            topo_mod.guest_cpus(inventory, self.topology, host_cpus) if self.spec.pin_pairs else {}
        )

    # -- paths ------------------------------------------------------------------------------
    @property
    def disks_dir(self) -> Path:
        return self.state_dir / "disks"

    @property
    def key_path(self) -> Path:
        return self.state_dir / "keys" / "lab_key"

    @property
    def known_hosts(self) -> Path:
        return self.state_dir / "known_hosts"

    def console_log(self, guest: Guest) -> Path:
        return guest_dir(self.state_dir, guest) / "console.log"

    def state(self) -> LabState | None:
        return LabState.load(self.state_dir)

    # -- up ---------------------------------------------------------------------------------
    def up(self, *, keep_on_failure: bool = False) -> LabState:
        """Start the lab; on failure clean everything up unless ``keep_on_failure`` (debugging)."""
        check_host()
        if self._anything_present():
            raise InfraError(
                f"a lab is already up or was left half-started in namespace {self.spec.netns!r} "
                f"(state {self.state_dir}); see `harness lab status`, or clean it with `harness lab down`"
            )
        start = time.monotonic()
        state = LabState(
            self.spec.netns, str(self.state_dir), str(self.inventory_path) if self.inventory_path else None
        )
        try:
            self._prepare_state_dir(state)
            self.progress(f"lab: network namespace {self.spec.netns} with {len(self.topology.bridges)} bridges")
            self._create_network()
            self._create_disks()
            t_boot = time.monotonic()
            self._hold_latency(state)
            self._start_guests(state)
            self._kick_timers(state)
            self._reboot_after_panic(state)
            self.progress(f"lab: {len(state.pids)} guests started, waiting for sshd")
            self._wait_for_sshd(state, deadline=t_boot + self.spec.boot_timeout)
            state.timings["boot_to_sshd_s"] = round(time.monotonic() - t_boot, 2)
            self.progress("lab: sshd answers on every guest; waiting for DRBD Connected/UpToDate")
            self._wait_until_ready(state, deadline=t_boot + self.spec.boot_timeout)
            state.timings["up_s"] = round(time.monotonic() - start, 2)
            state.phase = "up"
            state.save()
            self.progress(f"lab: up in {state.timings['up_s']:.1f} s")
            return state
        except BaseException:
            if keep_on_failure:
                self.progress(f"lab: start failed; kept for debugging (state in {self.state_dir})")
            else:
                self.progress("lab: start failed, cleaning up")
                self.down()
            raise

    def _anything_present(self) -> bool:
        return (
            (self.state_dir / MARKER).exists()
            or netns_exists(self.spec.netns)
            or bool(find_lab_processes(self.spec.netns, self.state_dir))
        )

    def _prepare_state_dir(self, state: LabState) -> None:
        if self.state_dir.exists() and any(self.state_dir.iterdir()) and not (self.state_dir / MARKER).exists():
            raise InfraError(
                f"{self.state_dir} exists, is not empty and is not a lab state directory; refusing to use it"
            )
        uid = self.spec.guest_uid
        self.state_dir.mkdir(mode=0o755, parents=True, exist_ok=True)
        os.chmod(self.state_dir, 0o755)  # guests read their files through hostfs as `uid` (P15)
        (self.state_dir / MARKER).write_text("embedded lab state directory; removed by `harness lab down`\n")
        state.save()
        for sub in ("keys", "guest", "guests"):
            (self.state_dir / sub).mkdir(mode=0o755, exist_ok=True)
        uml_dir = self.state_dir / "uml"
        uml_dir.mkdir(mode=0o700, exist_ok=True)
        os.chown(uml_dir, uid, uid)
        for name in ("init1.sh", "init2.sh", "sshd_config"):
            dst = self.state_dir / "guest" / name
            shutil.copyfile(GUEST_FILES / name, dst)
            os.chmod(dst, 0o755 if name.endswith(".sh") else 0o644)
        build_xstate_shim(self.state_dir / "guest" / XSTATE_SHIM)
        client = generate_keypair("harness-lab")
        write_private_key(self.key_path, client)
        (self.state_dir / "keys" / "lab_key.pub").write_text(client.public_openssh + "\n")
        (self.state_dir / "drbd.conf").write_text(topo_mod.render_drbd_conf(self.inventory))
        known: list[str] = []
        for guest in self.topology.guests:
            gdir = guest_dir(self.state_dir, guest)
            gdir.mkdir(mode=0o755, exist_ok=True)
            os.chown(gdir, uid, uid)  # the guest marks its first boot here (booted-once)
            host_key = generate_keypair(f"lab-{guest.name}")
            write_private_key(gdir / "ssh_host_ed25519_key", host_key, owner_uid=uid)
            (gdir / "boot.sh").write_text(topo_mod.render_boot_script(self.inventory, self.topology, guest))
            known.append(known_hosts_line(guest.mgmt_ip, host_key))
        self.known_hosts.write_text("\n".join(known) + "\n")
        os.chmod(self.known_hosts, 0o644)

    def _create_network(self) -> None:
        ns = self.spec.netns
        _run(["ip", "netns", "add", ns])
        batch = ["link set lo up"]
        for br in self.topology.bridges:
            batch.append(f"link add {br.name} type bridge")
            if br.address is not None:
                batch.append(f"addr add {br.address} dev {br.name}")
            batch.append(f"link set {br.name} up")
        for guest in self.topology.guests:
            for nic in guest.nics:
                batch.append(
                    f"tuntap add dev {nic.tap} mode tap user {self.spec.guest_uid} group {self.spec.guest_uid}"
                )
                batch.append(f"link set dev {nic.tap} master {nic.bridge} up")
        _run(["ip", "-n", ns, "-batch", "-"], stdin="\n".join(batch) + "\n")

    def _create_disks(self) -> None:
        uid = self.spec.guest_uid
        self.disks_dir.mkdir(mode=0o700, exist_ok=True)
        if os.environ.get("LAB_DISK_TMPFS", "1") != "0":
            # Disks on tmpfs: repeatable (no host-disk noise); costs host RAM per block written.
            _run(
                [
                    "mount",
                    "-t",
                    "tmpfs",
                    "-o",
                    f"size={self.spec.disk_tmpfs_size},mode=0700,uid={uid},gid={uid}",
                    f"harness-lab-disks-{self.spec.netns}",
                    str(self.disks_dir),
                ]
            )
        os.chown(self.disks_dir, uid, uid)
        for guest in self.topology.nodes:
            for disk in guest.disks:
                path = self.disks_dir / disk
                with open(path, "wb") as f:
                    f.truncate(self.spec.disk_size)
                os.chown(path, uid, uid)
                os.chmod(path, 0o600)

    def _hold_latency(self, state: LabState) -> None:
        """While the lab is up, ask the host kernel for zero CPU wake-up latency (PM QoS
        ``/dev/cpu_dma_latency``, what tuned's latency-performance profile does).

        Why: an idle vCPU halts, and waking it costs tens to hundreds of microseconds in the
        hypervisor; a replicated write wakes several guest processes on both nodes, so on a
        quiet host single-AZ QD1 writes measured 800 IOPS in one cell and 2,800 in the next,
        depending on whether another cell happened to keep the CPUs awake.  Held, the idle
        governor polls instead of halting.  The request lasts as long as the file stays open,
        so a small process holds it; it carries the lab's markers so ``down`` and the leftover
        checks find it like a guest.
        """
        if not self.spec.host_latency_hold or not Path(LATENCY_QOS_DEVICE).exists():
            return
        holder = (
            "import os, signal, sys; fd = os.open(sys.argv[1], os.O_WRONLY); "
            "os.write(fd, (0).to_bytes(4, sys.byteorder)); signal.pause()"
        )
        state.latency_hold_pid = self._start_helper(["-c", holder, LATENCY_QOS_DEVICE], "latency-hold")
        state.save()
        self.progress("lab: host CPUs held out of deep idle while the lab is up (cpu_dma_latency 0)")

    def _kick_timers(self, state: LabState) -> None:
        """Start the timer kick (:mod:`harness.lab.timerkick`): a guest that lost its timer
        would otherwise spin idle for good.  It follows restarted guests through the state
        file and ends when the state directory is removed."""
        if not self.spec.guest_timer_kick:
            return
        state_file, guest_marker = str(self.state_dir / "state.json"), f"labdir={self.state_dir}"
        state.timer_kick_pid = self._start_helper(
            ["-m", "harness.lab.timerkick", state_file, str(self.spec.guest_uid), guest_marker], "timer-kick"
        )
        state.save()

    def _reboot_after_panic(self, state: LabState) -> None:
        """Start the panic reboot (:mod:`harness.lab.panicreboot`): a guest whose kernel
        panicked boots again, as a cloud VM with ``kernel.panic`` set does."""
        state.panic_reboot_pid = self._start_helper(
            ["-m", "harness.lab.panicreboot", str(self.state_dir)], "panic-reboot"
        )
        state.save()

    def _start_helper(self, python_args: list[str], name: str) -> int:
        """Start a host-side helper of the lab (a Python process in its own session) carrying
        the lab's ``umid=``/``labdir=`` markers, so ``down`` and the leftover checks find it
        like a guest.  Returns its pid."""
        proc = subprocess.Popen(
            [sys.executable, *python_args, f"umid={self.spec.netns}-{name}", f"labdir={self.state_dir}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        return proc.pid

    def _start_guests(self, state: LabState) -> None:
        for guest in self.topology.guests:
            self._start_guest(state, guest, rejoin=False)

    def _start_guest(self, state: LabState, guest: Guest, *, rejoin: bool) -> None:
        argv = topo_mod.uml_argv(
            self.inventory, self.topology, guest, rejoin=rejoin, cpu=self.guest_cpus.get(guest.name)
        )
        with open(self.console_log(guest), "ab") as console:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self._guest_procs[guest.name] = proc
        state.pids[guest.name] = proc.pid
        state.save()  # record each pid at once: `down` must find it even if we die now

    # -- crash and recovery (the failover scenario) ---------------------------------------------
    def crash_guest(self, name: str) -> float:
        """SIGKILL every host process of one guest at once, like pulling its power cord.

        The main UML process alone is not enough: its I/O helpers would keep the disk and tap
        open (LAB-NOTES P4).  Returns the time (monotonic) of the kill."""
        state = self.state()
        if state is None or name not in state.pids:
            raise InfraError(f"lab guest {name} is not running")
        main = state.pids[name]
        killed_at = time.monotonic()
        # the whole session: kernel process, its helpers and the guest's own processes (P4)
        kill_session(main, self.spec.guest_uid)
        # a busy host can take many seconds to tear down a killed guest's memory
        deadline = time.monotonic() + 30
        while True:
            left = [p.pid for p in find_lab_processes(self.spec.netns, self.state_dir) if p.sid == main]
            left += [pid for pid in find_orphan_guest_processes(self.spec.guest_uid) if session_of(pid) == main]
            if not left:
                break
            if time.monotonic() > deadline:
                raise InfraError(f"lab guest {name} survived SIGKILL for 30 s (pids {', '.join(map(str, left))})")
            kill_session(main, self.spec.guest_uid)  # anything its helpers started since
            time.sleep(0.1)
        shutil.rmtree(self.state_dir / "uml" / self.topology.guest(name).umid(self.spec.netns), ignore_errors=True)
        return killed_at

    def restart_guest(self, name: str) -> None:
        """Boot a crashed guest again; it keeps its disks and DRBD metadata and rejoins."""
        state = self.state()
        if state is None:
            raise InfraError("the lab is not up")
        guest = self.topology.guest(name)
        self._start_guest(state, guest, rejoin=True)
        deadline = time.monotonic() + self.spec.boot_timeout
        sub_state = LabState(state.netns, state.state_dir, state.inventory, pids={name: state.pids[name]})
        self._wait_for_sshd_of([guest], sub_state, deadline)
        with self.connections((guest,)) as conns:
            while True:
                res = conns[name].run_script(
                    "cat /run/lab-ready 2>/dev/null || cat /run/lab-failed 2>/dev/null", timeout=10, check=False
                )
                if "ready" in res.stdout:
                    return
                if "failed" in res.stdout or time.monotonic() > deadline:
                    log = conns[name].run(["tail", "-n", "25", "/run/lab-boot.log"], timeout=10, check=False)
                    raise InfraError(f"lab guest {name} did not rejoin; its boot log:\n{log.stdout}")
                time.sleep(0.2)

    def _console_tail(self, guest: Guest, lines: int = 15) -> str:
        try:
            text = self.console_log(guest).read_text(errors="replace")
        except OSError:
            return "(no console log)"
        # a panic's call trace would fill the tail: keep the lines that say what happened
        said = [line for line in text.splitlines() if not _TRACE_LINE.match(line)]
        return "\n".join("    " + line for line in said[-lines:])

    def _guest_failed(self, guest: Guest, why: str) -> InfraError:
        return InfraError(f"lab guest {guest.name} {why}; last console lines:\n{self._console_tail(guest)}")

    def _wait_for_sshd(self, state: LabState, deadline: float) -> None:
        self._wait_for_sshd_of(list(self.topology.guests), state, deadline)

    def _boot_exit(self, name: str, pid: int) -> str | None:
        """How a booting guest ended (None while it runs).  A dead guest we started stays a
        zombie until reaped, and a zombie's /proc entry still exists, so only its status tells."""
        proc = self._guest_procs.get(name)
        rc = proc.poll() if proc is not None and proc.pid == pid else None
        if rc is None:
            return None if process_alive(pid) else "exit status unknown"
        if rc < 0:
            return f"killed by {signal.Signals(-rc).name}"
        return f"exit status {rc}"

    def _wait_for_sshd_of(self, guests: list[Guest], state: LabState, deadline: float) -> None:
        pending = list(guests)
        while pending:
            for guest in list(pending):
                pid = state.pids[guest.name]
                gone = self._boot_exit(guest.name, pid)
                if gone is not None:
                    raise self._guest_failed(guest, f"exited during boot (pid {pid}, {gone})")
                try:
                    sock = connect_in_netns(self.spec.netns, guest.mgmt_ip, 22, timeout=0.5)
                except OSError:
                    continue
                try:
                    sock.settimeout(2.0)
                    banner = sock.recv(64)
                except OSError:
                    banner = b""
                finally:
                    sock.close()
                if banner.startswith(b"SSH-"):
                    pending.remove(guest)
            if pending:
                if time.monotonic() > deadline:
                    raise self._guest_failed(pending[0], f"did not answer on ssh within {self.spec.boot_timeout:g} s")
                time.sleep(0.1)

    def ssh_spec(self, guest: Guest) -> SshSpec:
        return SshSpec(
            host=guest.mgmt_ip,
            key=self.key_path,
            known_hosts=self.known_hosts,
            netns=self.spec.netns,
            connect_timeout=10.0,
        )

    @contextmanager
    def connections(self, guests: tuple[Guest, ...] | None = None) -> Iterator[dict[str, SshNode]]:
        """Open SSH to guests in parallel (pinned host keys); closed on exit."""
        targets = guests if guests is not None else self.topology.guests
        nodes = {g.name: SshNode(g.name, self.ssh_spec(g)) for g in targets}
        try:
            with ThreadPoolExecutor(max_workers=len(nodes)) as pool:
                list(pool.map(lambda n: n.open(), nodes.values()))
            yield nodes
        finally:
            for node in nodes.values():
                node.close()

    def _wait_until_ready(self, state: LabState, deadline: float) -> None:
        with self.connections() as conns:
            pending = set(conns)
            while pending:
                for name in sorted(pending):
                    res = conns[name].run_script(
                        "cat /run/lab-ready 2>/dev/null || cat /run/lab-failed 2>/dev/null",
                        timeout=10,
                        check=False,
                    )
                    if "failed" in res.stdout:
                        log = conns[name].run(["tail", "-n", "25", "/run/lab-boot.log"], timeout=10, check=False)
                        raise InfraError(f"lab guest {name} failed its boot script; its boot log:\n{log.stdout}")
                    if "ready" in res.stdout:
                        pending.discard(name)
                if pending:
                    if time.monotonic() > deadline:
                        guest = self.topology.guest(sorted(pending)[0])
                        boot_log = conns[guest.name].run(
                            ["tail", "-n", "20", "/run/lab-boot.log"], timeout=10, check=False
                        )
                        raise InfraError(
                            f"lab guest {guest.name} did not finish booting; its boot log:\n{boot_log.stdout}"
                        )
                    time.sleep(0.2)
            state.timings["boot_scripts_s"] = round(time.monotonic() - (deadline - self.spec.boot_timeout), 2)
            while True:
                resources = self.resource_states(conns)
                bad = [r for r in resources if not r.healthy]
                if not bad:
                    return
                if time.monotonic() > deadline:
                    details = "; ".join(f"{r.name}: {r.connection} {r.disk} {r.role}" for r in bad)
                    raise InfraError(f"DRBD resources not healthy after {self.spec.boot_timeout:g} s: {details}")
                time.sleep(0.3)

    def set_az_link(self, link: AzLinkSpec) -> None:
        """Change the emulated AZ distance on the running lab (router netem), e.g. to test a
        baseline comparison against a slower network."""
        spec = self.spec.model_copy(update={"az_link": link})
        router = self.topology.guest(ROUTER)
        with self.connections((router,)) as conns:
            for cmd in topo_mod.router_link_commands(spec, self.topology):
                conns[ROUTER].run(cmd, timeout=15)

    # -- status helpers ---------------------------------------------------------------------
    def resource_states(self, conns: dict[str, SshNode]) -> list[ResourceState]:
        """DRBD's own words for each pair's state, read on the pair's primary."""
        out: list[ResourceState] = []
        for pname, pair in sorted(self.inventory.pairs.items()):
            res = pair.resource
            script = f"drbdadm cstate {res}; drbdadm dstate {res}; drbdadm role {res}"
            result = conns[pair.primary].run_script(script, timeout=20, check=False)
            words = result.stdout.split()
            conn, disk, role = (words + ["Unknown"] * 3)[:3]
            out.append(ResourceState(res, pname, pair.primary, pair.secondary, conn, disk, role))
        return out

    # -- down -------------------------------------------------------------------------------
    def down(self) -> list[str]:
        """Remove everything this lab created.  Returns a list of leftovers (empty = clean)."""
        state = LabState.load(self.state_dir)
        pids = list(state.pids.values()) if state else []
        if state is not None:
            pids += [pid for pid in (state.latency_hold_pid, state.timer_kick_pid, state.panic_reboot_pid) if pid]
        survivors = stop_processes(self.spec.netns, self.state_dir, pids)
        # after the kernels: their guests' stray processes, which would keep taps and the
        # namespace alive (see find_orphan_guest_processes)
        survivors += kill_orphans(self.spec.guest_uid)
        if netns_exists(self.spec.netns):
            _run(["ip", "netns", "del", self.spec.netns], check=False)
        if _mounted(self.disks_dir):
            _run(["umount", str(self.disks_dir)], check=False)
        if self.state_dir.exists() and (self.state_dir / MARKER).exists():
            shutil.rmtree(self.state_dir, ignore_errors=True)
        return self.leftovers() + [f"process {pid} survived SIGKILL" for pid in survivors]

    def leftovers(self) -> list[str]:
        """Anything of this lab still on the host."""
        found: list[str] = []
        procs = find_lab_processes(self.spec.netns, self.state_dir)
        found += [f"process {p.pid} (guest {p.guest})" for p in procs]
        found += [f"orphaned guest process {pid}" for pid in find_orphan_guest_processes(self.spec.guest_uid)]
        if netns_exists(self.spec.netns):
            found.append(f"network namespace {self.spec.netns}")
        if _mounted(self.disks_dir):
            found.append(f"tmpfs mounted at {self.disks_dir}")
        if self.state_dir.exists():
            found.append(f"state directory {self.state_dir}")
        return found


@dataclass(frozen=True)
class ResourceState:
    name: str
    pair: str
    primary: str
    secondary: str
    connection: str
    disk: str
    role: str

    @property
    def healthy(self) -> bool:
        return self.connection == "Connected" and self.disk == "UpToDate/UpToDate" and self.role == "Primary/Secondary"


__all__ += ["ROUTER", "ResourceState"]
