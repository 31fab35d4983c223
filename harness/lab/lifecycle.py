"""Bring the embedded lab up and down: namespace, bridges, taps, disks, guests, SSH, DRBD.

``Lab(inventory).up()`` returns once every guest answers SSH with its pinned host key and
every replicated pair is Connected, UpToDate/UpToDate, Primary/Secondary.  ``down()`` stops
only processes this lab started, deletes the namespace (taps and bridges go with it),
unmounts the disk tmpfs and removes the state directory; it is idempotent and also cleans a
half-started or crashed lab.  Any failure during ``up()`` runs ``down()`` before raising.

The guests themselves (start, boot, SSH, crash, restart) are :mod:`harness.lab.guests`; what
``up`` started is recorded in :mod:`harness.lab.state`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from contextlib import AbstractContextManager
from pathlib import Path

from harness.drbd.provision import render_conf
from harness.errors import ConfigError, InfraError
from harness.fio.spec import LABEL_ZONE_BYTES
from harness.inventory.models import AzLinkSpec, Inventory, LabSpec
from harness.lab.drbd9 import GUEST_MODULES, DrbdModules, check_modules, lab_inventory, modules_dir
from harness.lab.guests import LabGuests
from harness.lab.keys import generate_keypair, known_hosts_line, write_private_key
from harness.lab.processes import find_lab_processes, find_orphan_guest_processes, kill_orphans, stop_processes
from harness.lab.render import render_boot_script, router_link_commands
from harness.lab.resources import PairRow, pair_rows
from harness.lab.roots import ensure_roots
from harness.lab.state import LATENCY_QOS_DEVICE, MARKER, LabState, check_host, mounted, run_host
from harness.lab.topology import ROUTER, Guest, LabTopology, build_topology, drbd_disks, guest_cpus, guest_dir
from harness.lab.xstate import XSTATE_SHIM, build_xstate_shim
from harness.progress import Progress, quiet
from harness.remote import SshNode
from harness.remote.netns import netns_exists
from harness.remote.spec import SshSpec

__all__ = ["Lab"]

GUEST_FILES = Path(__file__).with_name("guest")


class Lab:
    """The embedded lab described by an inventory with a ``lab:`` section."""

    def __init__(self, inventory: Inventory, inventory_path: Path | None = None, progress: Progress = quiet) -> None:
        if inventory.lab is None:
            raise ConfigError(f"inventory {inventory.name!r} has no `lab:` section")
        self.spec: LabSpec = inventory.lab
        # on DRBD 9 (supplied modules) with the pairs only DRBD 9 runs
        inventory = lab_inventory(inventory)
        self.inventory = inventory
        self.inventory_path = inventory_path
        self.topology: LabTopology = build_topology(inventory)
        self.progress = progress
        state_dir = self.spec.state_dir
        if len(state_dir.parts) < 3:
            raise ConfigError(
                f"lab.state_dir {state_dir} is too close to / to be removed safely; use e.g. /run/harness-lab"
            )
        self.state_dir = state_dir
        host_cpus = sorted(os.sched_getaffinity(0))
        self.guest_cpus: dict[str, int] = guest_cpus(inventory, self.topology, host_cpus) if self.spec.pin_pairs else {}
        self.guests = LabGuests(inventory, self.topology, state_dir, self.guest_cpus)

    # -- paths ------------------------------------------------------------------------------
    @property
    def disks_dir(self) -> Path:
        return self.state_dir / "disks"

    @property
    def key_path(self) -> Path:
        return self.guests.key_path

    @property
    def known_hosts(self) -> Path:
        return self.guests.known_hosts

    def state(self) -> LabState | None:
        return LabState.load(self.state_dir)

    def drbd_modules(self) -> DrbdModules | None:
        """The DRBD 9 modules the lab runs, checked (None: its kernel's DRBD 8.4); a directory
        that does not hold modules this kernel loads is a :class:`ConfigError` naming the file."""
        named = modules_dir(self.spec)
        return None if named is None else check_modules(named[0], source=named[1])

    # -- up ---------------------------------------------------------------------------------
    def up(self, *, keep_on_failure: bool = False) -> LabState:
        """Start the lab; on failure clean everything up unless ``keep_on_failure`` (debugging)."""
        modules = self.drbd_modules()  # before anything: a module the kernel would refuse is said now
        check_host()
        if self._anything_present():
            raise InfraError(
                f"a lab is already up or was left half-started in namespace {self.spec.netns!r} "
                f"(state {self.state_dir}); see `harness lab status`, or clean it with `harness lab down`"
            )
        start = time.monotonic()
        # before anything is created: a missing debootstrap or mirror is said now, not mid-boot
        roots = ensure_roots(self.spec, sorted(self.inventory.nodes), self.progress)
        state = LabState(
            self.spec.netns,
            str(self.state_dir),
            str(self.inventory_path) if self.inventory_path else None,
            drbd=modules.describe() if modules is not None else None,
        )
        try:
            if roots:
                state.timings["roots_s"] = round(time.monotonic() - start, 2)
            self._prepare_state_dir(state, modules)
            if modules is not None:
                self.progress(f"lab: {modules.describe()}")
            self.progress(f"lab: network namespace {self.spec.netns} with {len(self.topology.bridges)} bridges")
            self._create_network()
            self._create_disks()
            t_boot = time.monotonic()
            self._hold_latency(state)
            self._start_guests(state)
            self._kick_timers(state)
            self._reboot_after_panic(state)
            self.progress(f"lab: {len(state.pids)} guests started, waiting for sshd")
            self.guests.wait_for_sshd(list(self.topology.guests), state, deadline=t_boot + self.spec.boot_timeout)
            state.timings["boot_to_sshd_s"] = round(time.monotonic() - t_boot, 2)
            self.progress("lab: sshd answers on every guest; waiting for every pair to replicate")
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

    def _prepare_state_dir(self, state: LabState, modules: DrbdModules | None) -> None:
        if self.state_dir.exists() and any(self.state_dir.iterdir()) and not (self.state_dir / MARKER).exists():
            raise InfraError(
                f"{self.state_dir} exists, is not empty and is not a lab state directory; refusing to use it"
            )
        uid = self.spec.guest_uid
        self.state_dir.mkdir(mode=0o755, parents=True, exist_ok=True)
        os.chmod(self.state_dir, 0o755)  # guests read their files through hostfs as `uid`
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
        self._copy_modules(modules)
        conf = render_conf(self.inventory, drbd9=modules is not None, disks=drbd_disks(self.inventory))
        (self.state_dir / "drbd.conf").write_text(conf)
        known: list[str] = []
        for guest in self.topology.guests:
            gdir = guest_dir(self.state_dir, guest)
            gdir.mkdir(mode=0o755, exist_ok=True)
            os.chown(gdir, uid, uid)  # the guest marks its first boot here (booted-once)
            host_key = generate_keypair(f"lab-{guest.name}")
            write_private_key(gdir / "ssh_host_ed25519_key", host_key, owner_uid=uid)
            (gdir / "boot.sh").write_text(render_boot_script(self.inventory, self.topology, guest, modules))
            known.append(known_hosts_line(guest.mgmt_ip, host_key))
        self.known_hosts.write_text("\n".join(known) + "\n")
        os.chmod(self.known_hosts, 0o644)

    def _copy_modules(self, modules: DrbdModules | None) -> None:
        """The supplied DRBD 9 modules where every guest reads them, whichever root it boots."""
        if modules is None:
            return
        target = self.state_dir / GUEST_MODULES
        target.mkdir(mode=0o755, exist_ok=True)
        for load in modules.supplied:
            assert load.file is not None
            dst = target / load.file.name
            shutil.copyfile(load.file, dst)
            os.chmod(dst, 0o644)

    def _create_network(self) -> None:
        ns = self.spec.netns
        run_host(["ip", "netns", "add", ns])
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
        run_host(["ip", "-n", ns, "-batch", "-"], stdin="\n".join(batch) + "\n")

    def _create_disks(self) -> None:
        uid = self.spec.guest_uid
        self.disks_dir.mkdir(mode=0o700, exist_ok=True)
        if os.environ.get("LAB_DISK_TMPFS", "1") != "0":
            # Disks on tmpfs: repeatable (no host-disk noise); costs host RAM per block written.
            run_host(
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
            for index, disk in enumerate(guest.disks):
                path = self.disks_dir / disk
                # scratch disks (1..extra_disks) hold a layout of disk_size past the label zone
                # no fio job writes (the numjobs sweep's 32 x 64 MiB fills 2 GiB exactly)
                scratch = 1 <= index <= self.spec.extra_disks
                with open(path, "wb") as f:
                    f.truncate(self.spec.disk_size + (LABEL_ZONE_BYTES if scratch else 0))
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

    # -- the guests (harness.lab.guests) -------------------------------------------------------
    def _start_guests(self, state: LabState) -> None:
        for guest in self.topology.guests:
            self.guests.start(state, guest, rejoin=False)

    def crash_guest(self, name: str) -> float:
        """SIGKILL every host process of one guest at once (see :meth:`LabGuests.crash`)."""
        return self.guests.crash(name)

    def restart_guest(self, name: str) -> None:
        """Boot a crashed guest again; it keeps its disks and DRBD metadata and rejoins."""
        self.guests.restart(name)

    def ssh_spec(self, guest: Guest) -> SshSpec:
        return self.guests.ssh_spec(guest)

    def connections(self, guests: tuple[Guest, ...] | None = None) -> AbstractContextManager[dict[str, SshNode]]:
        """Open SSH to guests in parallel (pinned host keys); closed on exit."""
        return self.guests.connections(guests)

    def _wait_until_ready(self, state: LabState, deadline: float) -> None:
        with self.connections() as conns:
            self.guests.wait_booted(conns, deadline)
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
            for cmd in router_link_commands(spec, self.topology):
                conns[ROUTER].run(cmd, timeout=15)

    # -- status helpers ---------------------------------------------------------------------
    def resource_states(self, conns: dict[str, SshNode]) -> list[PairRow]:
        """Each pair's state in the product's own words, read on the pair's primary."""
        return pair_rows(self.inventory, conns)

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
            run_host(["ip", "netns", "del", self.spec.netns], check=False)
        if mounted(self.disks_dir):
            run_host(["umount", str(self.disks_dir)], check=False)
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
        if mounted(self.disks_dir):
            found.append(f"tmpfs mounted at {self.disks_dir}")
        if self.state_dir.exists():
            found.append(f"state directory {self.state_dir}")
        return found
