"""Putting an impairment on a node, proving it took, and taking it off again — safely.

The order matters: a crash at any step leaves nothing that the ledger or the dead-man switch
does not know of:

1. read the interface's qdiscs; a foreign root or a harness leftover refuses (fail closed);
2. write the intent to the ledger (harness side) *before* touching anything;
3. in one node-side script: write the fault record under ``/run/harness/<run>/faults``, arm a
   dead-man switch that removes exactly this fault after ``hold_s`` even if the harness dies
   or loses SSH (``systemd-run --on-active`` where systemd runs, else ``setsid sleep``), then
   run the tc commands; a failing command rolls back at once;
4. read back with ``tc -j`` and compare with the profile; a mismatch removes it and aborts;
5. :meth:`Impairer.clear` disarms the switch, deletes only the reserved root handle, and
   verifies the interface is back to its default root.
"""

from __future__ import annotations

import shlex
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from harness.errors import CommandFailed, InfraError, RefusedError
from harness.impair.commands import (
    apply_commands,
    batch_input,
    readback_commands,
    teardown_commands,
    validate_ifname,
)
from harness.impair.filters import parse_filters
from harness.impair.profile import NetemProfile
from harness.impair.qdiscs import parse_qdiscs
from harness.impair.readback import RootClass, classify_root, explain_root, verify_applied, verify_cleared
from harness.remote import CommandResult, DetachedJob, Runner, Shell, run_batch
from harness.remote.detached import stop_script
from harness.remote.nodefiles import node_run_dir, safe_token
from harness.runfiles.ledger import Ledger
from harness.userfiles.jsonsafe import dumps

__all__ = [
    "DEFAULT_DEADMAN_GRACE_S",
    "UNDO_BUDGET_S",
    "AppliedImpairment",
    "Impairer",
    "ImpairmentMismatch",
    "deadman_script",
    "readback_probes",
    "root_probe",
]

#: How long after a cell's fio deadline its fault removes itself should the harness die or
#: lose SSH.  fio's deadline already holds 30 s of slack over ramp + runtime, so a killed run's
#: fault lasts at most ramp + runtime + 60 s from its start.
DEFAULT_DEADMAN_GRACE_S = 30.0
#: A switch is armed this much before the deadline it promises: the time its undo (`tc qdisc
#: del`, about 0.1-0.3 s on a lab guest) needs to run.
UNDO_BUDGET_S = 2.0
#: ends the here-document that feeds ``tc -batch`` (no tc line can be this word)
_TC_EOF = "HARNESS_TC_BATCH"


class ImpairmentMismatch(InfraError):
    """The qdiscs read back differ from the profile: the fault did not take as asked."""


@dataclass(frozen=True)
class AppliedImpairment:
    """A fault that is live on one node (until cleared or its dead-man switch fires)."""

    node: str
    iface: str
    peer_ip: str
    profile: NetemProfile
    token: str
    deadline_epoch: float
    readback: str
    #: the resource's TCP port the fault is limited to; None: the whole path to the peer
    port: int | None = None
    #: more peers the fault shapes alike (a resource's other nodes)
    also_to: tuple[str, ...] = ()


def deadman_script(fault_file: str, pid_file: str, undo: list[list[str]], hold_s: float) -> str:
    """Shell that arms a node-side switch running ``undo`` after ``hold_s`` seconds unless
    the fault file is gone by then (the harness removed the fault itself)."""
    ff = shlex.quote(fault_file)
    fire = f"if [ -e {ff} ]; then {'; '.join(shlex.join(cmd) for cmd in undo)}; rm -f {ff}; fi"
    unit = "harness-deadman-" + fault_file.rsplit("/", 1)[-1].removesuffix(".json").replace(".", "-")
    # systemd-run gives a unit with the service manager as parent, immune to our session
    # ending; without systemd (lab guests, containers) a detached job does the same: its
    # `sleep` is its deadline.
    # Millisecond precision: a partition is a fault whose switch may be the heal itself.
    switch = DetachedJob.of_script(f"sleep {hold_s:.3f}; {fire}", deadline_s=None, pid_file=pid_file)
    return (
        f"if [ -d /run/systemd/system ] && command -v systemd-run >/dev/null; then "
        # A transient timer's AccuracySec defaults to 1 min: without it the switch of a 30 s
        # hold may fire 90 s after it was armed.
        f"systemd-run --quiet --collect --unit={shlex.quote(unit)} --on-active={round(hold_s * 1000)}ms "
        f"--timer-property=AccuracySec=100ms "
        f"/bin/sh -c {shlex.quote(fire)} && echo systemd:{unit} > {shlex.quote(pid_file)}; "
        f"else {switch.start_script()} fi"
    )


def disarm_script(fault_file: str, pid_file: str) -> str:
    """Shell that removes the fault record and stops its dead-man switch (a bare job: one
    process group, stopped by the shell's own ``kill``)."""
    ff, pf = shlex.quote(fault_file), shlex.quote(pid_file)
    return (
        f"rm -f {ff}; if [ -e {pf} ]; then read -r p < {pf}; case $p in "
        f"systemd:*) systemctl stop ${{p#systemd:}}.timer ${{p#systemd:}}.service 2>/dev/null; rm -f {pf} ;; "
        f"*) {stop_script(pid_file, grace_s=None, one_group=True)} ;; esac; fi; true"
    )


def readback_probes(iface: str) -> dict[str, Sequence[str] | Shell]:
    """The interface's qdiscs and filters as batch commands (``qdiscs``, ``filters``): the
    read-back of an applied fault."""
    qcmd, fcmd = readback_commands(iface, tc="tc")
    return {"qdiscs": qcmd, "filters": fcmd}


def root_probe(iface: str) -> dict[str, Sequence[str] | Shell]:
    """What :meth:`Impairer.apply` reads before it touches the interface, as a batch command
    (``qdiscs``) to ride the round trip of whatever precedes it (its result is a ``preread``):
    whose root the interface has.  Filters live under a root; the harness's own are read back
    after the apply."""
    qcmd, _ = readback_commands(iface, tc="tc")
    return {"qdiscs": qcmd}


def _readback_text(out: Mapping[str, CommandResult]) -> tuple[str, str]:
    """The qdisc and filter JSON of a batch that ran :func:`readback_probes` (no filter dump: none)."""
    if out["qdiscs"].exit_code != 0:
        raise CommandFailed(out["qdiscs"])
    filters = out["filters"].stdout if "filters" in out else ""
    return out["qdiscs"].stdout, filters or "[]"


class Impairer:
    """Applies and clears impairments for one run, recording every step in the ledger.

    Each node costs two round trips to impair (read, unless the caller's own round trip carried
    it as ``preread``; then apply + read back) and one to clear (clear + read back): on a lab
    guest a round trip is 0.1-0.2 s of channel and process setup.
    One impairer serves both nodes of a pair at once (a thread per node).
    """

    def __init__(self, run_id: str, ledger: Ledger, *, link_rate_bits: float = 10e9) -> None:
        self.run_id = run_id
        self.ledger = ledger
        self.link_rate_bits = link_rate_bits
        # counted per node: the nodes of a pair are impaired by a thread each, and a count shared
        # between them would number each node's faults in whichever order the threads ran
        self._seq: dict[str, int] = {}
        self._seq_lock = threading.Lock()

    def _read(self, node: Runner, iface: str) -> tuple[str, str]:
        return _readback_text(run_batch(node, root_probe(iface), timeout=20))

    def apply(
        self,
        node: Runner,
        *,
        iface: str,
        peer_ip: str,
        profile: NetemProfile,
        hold_s: float,
        role: Literal["primary", "secondary"],
        on_planned: Callable[[AppliedImpairment], None] | None = None,
        port: int | None = None,
        preread: Mapping[str, CommandResult] | None = None,
        also_to: Sequence[str] = (),
    ) -> AppliedImpairment | None:
        """Impair ``node``'s egress towards ``peer_ip`` if the profile applies to ``role``:
        only the resource's TCP ``port`` (either direction) and ICMP, or with ``port=None``
        everything to the peer (:mod:`harness.impair.steering`).

        ``on_planned`` is called with the fault's identity *before* anything is changed on the
        node, so the caller can register the undo first: a Ctrl-C or SIGTERM landing in the
        middle of this call must still find the fault (clearing an unapplied fault is a no-op).

        ``preread``: the interface as :func:`root_probe` read it earlier in this cell, under
        the cell's node locks (a round trip it rode); without it the interface is read first.
        ``also_to``: more peer addresses shaped alike (one fault toward several of a
        resource's nodes: a node cut off from all of them).
        """
        if not profile.applies_to(role):
            return None
        validate_ifname(iface)
        qdiscs_text, _ = _readback_text(preread) if preread is not None else self._read(node, iface)
        qdiscs = parse_qdiscs(qdiscs_text)
        root = classify_root(qdiscs)
        if root is RootClass.HARNESS_OWNED:
            raise RefusedError(
                f"{node.name}: {iface} already carries a harness qdisc (a leftover of a crashed run?); "
                "run `harness cleanup --inventory FILE` first"
            )
        if root is RootClass.FOREIGN:
            raise RefusedError(
                f"{node.name}: {iface} has a qdisc the harness did not create ({explain_root(qdiscs)}); "
                "refusing to touch it"
            )
        with self._seq_lock:
            seq = self._seq[node.name] = self._seq.get(node.name, 0) + 1
        token = safe_token(f"{node.name}-{iface}-{seq}-{int(time.time())}")
        base = node_run_dir(self.run_id)
        fault_file = f"{base}/faults/{token}.json"
        pid_file = f"{base}/faults/{token}.deadman"
        undo = teardown_commands(iface)
        deadline = time.time() + hold_s
        record = {
            "node": node.name,
            "iface": iface,
            "peer_ip": peer_ip,
            **({"also_to": list(also_to)} if also_to else {}),
            "port": port,
            # the interface's root before the fault: a later cleanup checks it is back
            "pre_root": explain_root(qdiscs),
            "profile": profile.as_metadata(),
            "token": token,
            "deadline_epoch": round(deadline, 1),
            "undo": [shlex.join(c) for c in undo],
        }
        self.ledger.record("impair-intent", record)
        if on_planned is not None:
            on_planned(AppliedImpairment(node.name, iface, peer_ip, profile, token, deadline, "", port, tuple(also_to)))
        # one tc for the whole tree (each exec is 10-50 ms on a slow node); it stops at the
        # first failing line, and the partial tree is torn down
        tc_argv, tc_lines = batch_input(
            apply_commands(profile, iface, peer_ip, link_rate_bits=self.link_rate_bits, port=port, also_to=also_to)
        )
        undo_sh = "; ".join(shlex.join(cmd) for cmd in undo)
        faults = shlex.quote(f"{base}/faults")
        script = (
            f"set -u; umask 077; {{ [ -d {faults} ] || mkdir -p {faults}; }} && "
            f"printf '%s\\n' {shlex.quote(dumps(record, sort_keys=True))} > {shlex.quote(fault_file)} && "
            f"{deadman_script(fault_file, pid_file, undo, hold_s)} && "
            f"{{ {shlex.join(tc_argv)} <<'{_TC_EOF}' || "
            f"{{ rc=$?; {undo_sh} 2>/dev/null; rm -f {shlex.quote(fault_file)}; exit $rc; }}; }}\n"
            f"{tc_lines}{_TC_EOF}\n"
        )
        try:
            # the read-back rides the same round trip; it is judged only if the apply succeeded
            out = run_batch(node, {"apply": ["sh", "-c", script], **readback_probes(iface)}, timeout=30)
            if out["apply"].exit_code != 0:
                raise CommandFailed(out["apply"])
        except Exception:
            self.ledger.record("impair-failed", {"node": node.name, "token": token})
            raise
        applied = AppliedImpairment(node.name, iface, peer_ip, profile, token, deadline, "", port, tuple(also_to))
        self.ledger.record("impair-applied", {"node": node.name, "token": token})
        qtext, ftext = _readback_text(out)
        problems = verify_applied(
            profile,
            parse_qdiscs(qtext),
            parse_filters(ftext),
            peer_ip,
            link_rate_bits=self.link_rate_bits,
            port=port,
            also_to=also_to,
        )
        if problems:
            self.clear(node, applied)
            raise ImpairmentMismatch(f"{node.name}: impairment read back differs: " + "; ".join(problems))
        return AppliedImpairment(node.name, iface, peer_ip, profile, token, deadline, qtext, port, tuple(also_to))

    def clear(self, node: Runner, applied: AppliedImpairment) -> None:
        """Remove the fault and disarm its switch; verify the interface is default again."""
        self.confirm_cleared(applied, run_batch(node, self.clear_batch(applied), timeout=30))

    def clear_batch(self, applied: AppliedImpairment) -> dict[str, Sequence[str] | Shell]:
        """The clear as batch commands (``clear``, then the read-back ``qdiscs``), to run alone
        or to ride a round trip the caller makes anyway; :meth:`confirm_cleared` judges them."""
        base = node_run_dir(self.run_id)
        fault_file = f"{base}/faults/{applied.token}.json"
        pid_file = f"{base}/faults/{applied.token}.deadman"
        undo = "; ".join(shlex.join(c) + " 2>/dev/null" for c in teardown_commands(applied.iface))
        qcmd, _ = readback_commands(applied.iface, tc="tc")
        # inline in the batch's shell: no `sh` of its own to start (about 20 ms on a UML guest)
        return {"clear": Shell(f"{disarm_script(fault_file, pid_file)}; {undo}; true"), "qdiscs": qcmd}

    def confirm_cleared(self, applied: AppliedImpairment, out: Mapping[str, CommandResult]) -> None:
        """Judge a :meth:`clear_batch`'s results: the clear ran and the interface reads default."""
        if out["clear"].exit_code != 0:
            raise CommandFailed(out["clear"])
        qtext, _ = _readback_text(out)
        problems = verify_cleared(parse_qdiscs(qtext))
        self.ledger.record("impair-cleared", {"node": applied.node, "token": applied.token, "problems": problems})
        if problems:
            raise InfraError(f"{applied.node}: impairment on {applied.iface} not removed: " + "; ".join(problems))
