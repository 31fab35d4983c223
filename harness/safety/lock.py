"""The cluster lock: one harness run per cluster at a time.

Two runs against the same nodes would stack impairments, fight over DRBD roles and measure
each other.  Every node of a run holds ``/run/harness/lock`` (a directory, created with
``mkdir``, which is atomic) with an ``owner.json`` naming the run id, the user, the
controller host and pid.  Nodes are locked in sorted order, so two runs cannot deadlock; if
any node is held, the run releases what it took and fails at once, naming the holder.

Every lock has a lease: the run touches ``owner.json`` every few seconds (a heartbeat from
the controller), and a node-side watchdog started with the lock removes it once it has not
been touched for ``LEASE_S`` — so even a SIGKILLed run, or one whose host vanished, leaves
no lock behind for long.  Times are compared on the node's own clock (file mtime vs
``date``), so clock skew between harness and node does not matter.

A lock is *stale* when its owner is provably gone: it was taken from this very host (same
hostname and boot id) by a process that no longer exists.  Stale locks are reported, never
silently taken over; ``harness cleanup --break-lock`` removes them explicitly.  ``/run`` is
a tmpfs, so a node reboot clears its lock together with the tc state it protected.
"""

from __future__ import annotations

import contextlib
import functools
import getpass
import json
import os
import shlex
import socket
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from harness.errors import RefusedError
from harness.probes.process import process_alive
from harness.remote import DetachedJob, Runner
from harness.remote.nodefiles import NODE_ROOT
from harness.remote.pernode import each_node
from harness.runfiles.runid import validate_run_id
from harness.userfiles.jsonsafe import dumps

__all__ = [
    "LOCK_DIR",
    "ClusterLock",
    "LockHeld",
    "LockOwner",
    "is_stale",
    "local_owner",
    "read_lock",
]

LOCK_DIR = f"{NODE_ROOT}/lock"
_OWNER = f"{LOCK_DIR}/owner.json"
LEASE_S = 60
HEARTBEAT_S = 15.0


class LockHeld(RefusedError):
    """Another run holds the lock of a node of this run."""


@dataclass(frozen=True)
class LockOwner:
    run_id: str
    user: str
    host: str
    boot_id: str
    pid: int
    started: float
    inventory: str

    def to_json(self) -> str:
        return dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> LockOwner | None:
        try:
            data = json.loads(text)
            return cls(
                run_id=str(data["run_id"]),
                user=str(data["user"]),
                host=str(data["host"]),
                boot_id=str(data["boot_id"]),
                pid=int(data["pid"]),
                started=float(data["started"]),
                inventory=str(data["inventory"]),
            )
        except (ValueError, KeyError, TypeError):
            return None

    def describe(self) -> str:
        age = time.time() - self.started
        return f"run {self.run_id} by {self.user}@{self.host} pid {self.pid}, {age / 60:.0f} min ago ({self.inventory})"


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown"


def local_owner(run_id: str, inventory: str) -> LockOwner:
    """The owner record for a run started by this process."""
    return LockOwner(
        run_id=validate_run_id(run_id),
        user=getpass.getuser(),
        host=socket.gethostname(),
        boot_id=_boot_id(),
        pid=os.getpid(),
        started=round(time.time(), 1),
        inventory=inventory,
    )


def is_stale(owner: LockOwner, *, host: str, boot_id: str, pid_alive: Callable[[int], bool] = process_alive) -> bool:
    """True only when the owner is provably dead: same host, same boot, process gone."""
    return owner.host == host and owner.boot_id == boot_id and not pid_alive(owner.pid)


def read_lock(node: Runner) -> LockOwner | str | None:
    """The lock's owner, None when unlocked, or the raw text when it is unreadable."""
    res = node.run_script(
        f"cat {_OWNER} 2>/dev/null || {{ [ -d {LOCK_DIR} ] && echo '<no owner file>'; }}; true", timeout=20
    )
    text = res.stdout.strip()
    if not text:
        return None
    return LockOwner.from_json(text) or text


class ClusterLock:
    """Locks on all nodes of a run; release only removes locks this run holds."""

    def __init__(self, owner: LockOwner, *, lease_s: int = LEASE_S) -> None:
        self.owner = owner
        self.lease_s = lease_s
        self.held: list[Runner] = []
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    def _ours(self) -> str:
        return shlex.quote(f'"run_id": "{self.owner.run_id}"')

    def _watchdog(self) -> str:
        """Node-side: remove our lock once its owner file has not been touched for the lease.

        A detached job with no deadline of its own: it ends with the lock (gone, or no longer
        ours) or removes it when the lease runs out, so it lives exactly as long as the run
        keeps renewing it."""
        loop = (
            f"while sleep 10; do grep -qF {self._ours()} {_OWNER} 2>/dev/null || exit 0; "
            f"a=$(( $(date +%s) - $(stat -c %Y {_OWNER}) )); "
            f'if [ "$a" -gt {self.lease_s} ]; then rm -rf {LOCK_DIR}; exit 0; fi; done'
        )
        return DetachedJob.of_script(loop, deadline_s=None).start_script()

    def _try(self, node: Runner) -> str:
        record = shlex.quote(self.owner.to_json())
        script = (
            f"umask 077; mkdir -p {NODE_ROOT} && if mkdir {LOCK_DIR} 2>/dev/null; then "
            f"printf '%s\\n' {record} > {_OWNER} && {{ {self._watchdog()} }} && echo ACQUIRED; "
            f"else echo HELD; cat {_OWNER} 2>/dev/null; fi"
        )
        return node.run_script(script, timeout=20).stdout

    def renew(self) -> None:
        """Touch our owner files (the lease heartbeat)."""
        for node in list(self.held):
            with contextlib.suppress(Exception):  # a missed beat is fine; the lease is 4 beats
                node.run_script(f"grep -qF {self._ours()} {_OWNER} && touch {_OWNER}; true", timeout=10)

    def start_heartbeat(self, interval_s: float = HEARTBEAT_S) -> None:
        def beat() -> None:
            while not self._stop.wait(interval_s):
                self.renew()

        self._beat = threading.Thread(target=beat, name="harness-lock-heartbeat", daemon=True)
        self._beat.start()

    def acquire(self, nodes: Iterable[Runner]) -> None:
        for node in sorted(nodes, key=lambda n: n.name):
            # held before it is taken: an interrupt landing inside the round trip
            # must still release it; releasing checks the owner, so a lock of another run stays
            self.held.append(node)
            out = self._try(node)
            if out.startswith("ACQUIRED"):
                continue
            self.held.remove(node)
            holder_text = out.partition("\n")[2].strip()
            holder = LockOwner.from_json(holder_text)
            self.release()
            if holder is None:
                raise LockHeld(
                    f"{node.name}: {LOCK_DIR} exists with no readable owner ({holder_text!r}); "
                    "inspect it, then `harness cleanup --inventory FILE --break-lock`"
                )
            stale = is_stale(holder, host=self.owner.host, boot_id=self.owner.boot_id)
            hint = (
                "its owner process is gone (stale): remove it with `harness cleanup --inventory FILE --break-lock`"
                if stale
                else "wait for it to finish, or stop it"
            )
            raise LockHeld(f"{node.name} is locked by {holder.describe()}; {hint}")

    def release(self) -> list[str]:
        """Remove our locks (checking each is still ours).  Returns nodes where that failed."""
        self._stop.set()
        if self._beat is not None:
            self._beat.join(timeout=15)
            self._beat = None
        failed: list[str] = []
        script = f"grep -qF {self._ours()} {_OWNER} 2>/dev/null && rm -rf {LOCK_DIR}; true"

        def release_one(node: Runner) -> None:
            # two tries: a node that rebooted during the run (the failover) left this
            # connection dead, and the first command only finds that out; the next reconnects
            for attempt in (1, 2):
                try:
                    node.run_script(script, timeout=20)
                    return
                except Exception:  # the node may be gone; report, keep releasing the others
                    if attempt == 2:
                        failed.append(node.name)

        # every node at once: an interrupted run has 7 s in all to exit before CI's SIGKILL
        each_node([(node.name, functools.partial(release_one, node)) for node in reversed(self.held)])
        self.held = []
        return sorted(failed)


def break_lock(node: Runner, *, only_run: str | None = None) -> LockOwner | str | None:
    """Remove a node's lock (explicit operator action); returns what was removed."""
    owner = read_lock(node)
    if owner is None:
        return None
    if only_run is not None and (not isinstance(owner, LockOwner) or owner.run_id != only_run):
        return None
    node.run_script(f"rm -rf {LOCK_DIR}", timeout=20)
    return owner


def holders(nodes: Sequence[Runner]) -> dict[str, LockOwner | str]:
    out: dict[str, LockOwner | str] = {}
    for node in nodes:
        owner = read_lock(node)
        if owner is not None:
            out[node.name] = owner
    return out
