"""The lab's guests as host processes: start, boot, SSH, crash and restart.

A guest is one user-mode-linux kernel process (with its I/O helpers and the host processes of
its own address spaces), started in a session of its own as the lab's unprivileged uid.  It is
booted when its sshd answers with its pinned host key and its boot script reports ready.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from harness.errors import InfraError
from harness.inventory.models import Inventory, LabSpec
from harness.lab.processes import (
    find_lab_processes,
    find_orphan_guest_processes,
    kill_session,
    session_of,
)
from harness.lab.render import uml_argv
from harness.lab.state import LabState
from harness.lab.topology import Guest, LabTopology, guest_dir
from harness.probes.process import process_alive
from harness.remote import SshNode
from harness.remote.netns import connect_in_netns
from harness.remote.spec import SshSpec

__all__ = ["LabGuests"]

_TRACE_LINE = re.compile(r"\s*(\[<[0-9a-f]+>\]|[0-9a-f]{8}( [0-9a-f]{8})+\s*$|Call Trace:|Stack:)")
_READY = "cat /run/lab-ready 2>/dev/null || cat /run/lab-failed 2>/dev/null"


class LabGuests:
    """The guest processes of one lab (state in ``state_dir``)."""

    def __init__(
        self, inventory: Inventory, topology: LabTopology, state_dir: Path, guest_cpus: dict[str, int]
    ) -> None:
        assert inventory.lab is not None
        self.inventory = inventory
        self.spec: LabSpec = inventory.lab
        self.topology = topology
        self.state_dir = state_dir
        self.guest_cpus = guest_cpus
        #: the guests this object started, for their exit status if one dies during boot
        self._procs: dict[str, subprocess.Popen[bytes]] = {}

    @property
    def key_path(self) -> Path:
        return self.state_dir / "keys" / "lab_key"

    @property
    def known_hosts(self) -> Path:
        return self.state_dir / "known_hosts"

    def console_log(self, guest: Guest) -> Path:
        return guest_dir(self.state_dir, guest) / "console.log"

    # -- start and boot ---------------------------------------------------------------------
    def start(self, state: LabState, guest: Guest, *, rejoin: bool) -> None:
        argv = uml_argv(self.inventory, self.topology, guest, rejoin=rejoin, cpu=self.guest_cpus.get(guest.name))
        with open(self.console_log(guest), "ab") as console:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self._procs[guest.name] = proc
        state.pids[guest.name] = proc.pid
        state.save()  # record each pid at once: `down` must find it even if we die now

    def _console_tail(self, guest: Guest, lines: int = 15) -> str:
        try:
            text = self.console_log(guest).read_text(errors="replace")
        except OSError:
            return "(no console log)"
        # a panic's call trace would fill the tail: keep the lines that say what happened
        said = [line for line in text.splitlines() if not _TRACE_LINE.match(line)]
        return "\n".join("    " + line for line in said[-lines:])

    def failed(self, guest: Guest, why: str) -> InfraError:
        return InfraError(f"lab guest {guest.name} {why}; last console lines:\n{self._console_tail(guest)}")

    def _boot_exit(self, name: str, pid: int) -> str | None:
        """How a booting guest ended (None while it runs).  A dead guest we started stays a
        zombie until reaped, and a zombie's /proc entry still exists, so only its status tells."""
        proc = self._procs.get(name)
        rc = proc.poll() if proc is not None and proc.pid == pid else None
        if rc is None:
            return None if process_alive(pid) else "exit status unknown"
        if rc < 0:
            return f"killed by {signal.Signals(-rc).name}"
        return f"exit status {rc}"

    def wait_for_sshd(self, guests: list[Guest], state: LabState, deadline: float) -> None:
        pending = list(guests)
        last: dict[str, str] = {}
        while pending:
            for guest in list(pending):
                pid = state.pids[guest.name]
                gone = self._boot_exit(guest.name, pid)
                if gone is not None:
                    raise self.failed(guest, f"exited during boot (pid {pid}, {gone})")
                try:
                    sock = connect_in_netns(self.spec.netns, guest.mgmt_ip, 22, timeout=0.5)
                except OSError as exc:
                    last[guest.name] = f"connect: {exc}"
                    continue
                try:
                    sock.settimeout(2.0)
                    banner = sock.recv(64)
                except OSError as exc:
                    banner, last[guest.name] = b"", f"banner: {exc}"
                finally:
                    sock.close()
                if banner.startswith(b"SSH-"):
                    pending.remove(guest)
                else:
                    last[guest.name] = f"banner: {banner!r}"
            if pending:
                if time.monotonic() > deadline:
                    guest = pending[0]
                    raise self.failed(
                        guest,
                        f"did not answer on ssh within {self.spec.boot_timeout:g} s (last try: "
                        f"{last.get(guest.name, 'none')}; {self._mgmt_path(guest)})",
                    )
                time.sleep(0.1)

    def _mgmt_path(self, guest: Guest) -> str:
        """What the lab's namespace knows of the guest's management address and tap: whether a
        silent guest is unreachable or only its sshd is."""
        ns, tap = self.spec.netns, guest.nics[0].tap
        facts = []
        for argv in (
            ["ip", "-n", ns, "neigh", "show", "to", str(guest.mgmt_ip)],
            ["ip", "-n", ns, "-br", "link", "show", tap],
        ):
            res = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
            facts.append(" ".join((res.stdout or res.stderr).split()) or "(nothing)")
        return f"neighbour: {facts[0]}; tap: {facts[1]}"

    def wait_booted(self, conns: dict[str, SshNode], deadline: float, *, rejoin: bool = False) -> None:
        """Until every guest of ``conns`` reports its boot script done; its boot log otherwise."""
        pending = set(conns)
        while pending:
            for name in sorted(pending):
                res = conns[name].run_script(_READY, timeout=10, check=False)
                if "ready" in res.stdout:
                    pending.discard(name)
                elif "failed" in res.stdout or (rejoin and time.monotonic() > deadline):
                    log = conns[name].run(["tail", "-n", "25", "/run/lab-boot.log"], timeout=10, check=False)
                    why = "did not rejoin" if rejoin else "failed its boot script"
                    raise InfraError(f"lab guest {name} {why}; its boot log:\n{log.stdout}")
            if pending:
                if time.monotonic() > deadline:
                    name = sorted(pending)[0]
                    log = conns[name].run(["tail", "-n", "20", "/run/lab-boot.log"], timeout=10, check=False)
                    raise InfraError(f"lab guest {name} did not finish booting; its boot log:\n{log.stdout}")
                time.sleep(0.2)

    # -- SSH --------------------------------------------------------------------------------
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

    @contextmanager
    def open_each(self, guests: tuple[Guest, ...] | None = None) -> Iterator[tuple[dict[str, SshNode], dict[str, str]]]:
        """Open SSH to guests in parallel, each on its own: the connections that opened and, per
        guest that did not, why (a look at the lab reports a silent guest, it does not stop).
        Closed on exit."""
        targets = guests if guests is not None else self.topology.guests
        nodes = {g.name: SshNode(g.name, self.ssh_spec(g)) for g in targets}

        def why_not(node: SshNode) -> str | None:
            try:
                node.open()
            except Exception as exc:  # any failure is that guest's finding
                return str(exc)
            return None

        try:
            with ThreadPoolExecutor(max_workers=max(1, len(nodes))) as pool:
                errors = dict(zip(nodes, pool.map(why_not, nodes.values()), strict=True))
            yield (
                {name: node for name, node in nodes.items() if errors[name] is None},
                {name: why for name, why in errors.items() if why is not None},
            )
        finally:
            for node in nodes.values():
                node.close()

    # -- crash and recovery (the failover scenario) -------------------------------------------
    def crash(self, name: str) -> float:
        """SIGKILL every host process of one guest at once, like pulling its power cord.

        The main UML process alone is not enough: its I/O helpers would keep the disk and tap
        open (they are re-parented to pid 1).  Returns the time (monotonic) of the kill."""
        state = LabState.load(self.state_dir)
        if state is None or name not in state.pids:
            raise InfraError(f"lab guest {name} is not running")
        main = state.pids[name]
        killed_at = time.monotonic()
        # the whole session: kernel process, its helpers and the guest's own processes
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

    def restart(self, name: str) -> None:
        """Boot a crashed guest again; it keeps its disks and DRBD metadata and rejoins."""
        state = LabState.load(self.state_dir)
        if state is None:
            raise InfraError("the lab is not up")
        guest = self.topology.guest(name)
        if name in state.pids and process_alive(state.pids[name]):
            # an earlier boot that never answered: two instances would share its disks and taps
            self.crash(name)
        self.start(state, guest, rejoin=True)
        deadline = time.monotonic() + self.spec.boot_timeout
        sub_state = LabState(state.netns, state.state_dir, state.inventory, pids={name: state.pids[name]})
        try:
            self.wait_for_sshd([guest], sub_state, deadline)
            with self.connections((guest,)) as conns:
                self.wait_booted(conns, deadline, rejoin=True)
        except BaseException:
            # a guest that did not come up is stopped, not left running beside the next attempt
            self.crash(name)
            raise
