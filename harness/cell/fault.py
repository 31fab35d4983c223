"""Step 2 of a cell, the fault: replication cut (the local-disk mode) and the impairment of the
replication path, each with its undo registered before the node is touched (an interrupt
between the change and its registration would leave the change behind).

An impairment is applied on the nodes its profile names, read back, and proven by the RTT: the
minimum RTT must move by what the profile adds, or the cell aborts (the fault did not take).
The proof (:class:`RttProof`) is a ping the measurement runs in the round trip that starts fio,
just before fio: a failed proof stops fio and fails the cell before anything is judged.
"""

from __future__ import annotations

import contextlib
import functools
import shlex
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Literal

from harness.cell.guard import Target
from harness.cell.reconnect import with_reconnect
from harness.cell.spec import CellSpec
from harness.errors import CommandFailed, InfraError, RefusedError
from harness.fio.runner import fio_deadline_s
from harness.impair.apply import UNDO_BUDGET_S, AppliedImpairment, Impairer, ImpairmentMismatch
from harness.impair.lint import lint_profile
from harness.inventory.models import Inventory
from harness.probes.rtt import RttStats, parse_ping, ping_argv
from harness.remote import CommandResult, Runner, Shell
from harness.remote.pernode import each_node
from harness.replication import Replication, SilenceTimeouts
from harness.runfiles.ledger import Ledger

__all__ = ["Faults", "ImpairedPath", "RttProof", "check_rtt", "probe_rtt"]

#: how long a reconnected pair may take to resync the writes made while it was cut
RESYNC_TIMEOUT_S = 300.0


def probe_rtt(node: Runner, dest: str, count: int = 20) -> RttStats:
    res = node.run(ping_argv(dest, count=count, interval_s=0.01), timeout=30, check=False)
    try:
        return parse_ping(res.stdout)
    except ValueError as exc:
        raise InfraError(f"{node.name}: RTT probe to {dest} failed: {exc}") from None


def check_rtt(spec: CellSpec, base: RttStats, measured: RttStats) -> None:
    """netem adds a constant delay, so the *minimum* RTT moves by exactly what the profile
    adds; medians also carry host scheduling noise (on a busy 2-core lab host about a
    millisecond), which is not the fault failing to take."""
    assert spec.impairment is not None
    added_ms = spec.impairment.added_rtt_s * 1e3
    expected = base.min_ms + added_ms
    jitter_ms = spec.impairment.jitter_s * 1e3 * spec.impairment.impaired_directions
    tolerance = 0.10 * expected + 0.3 + jitter_ms
    if abs(measured.min_ms - expected) > tolerance:
        raise ImpairmentMismatch(
            f"{spec.id}: minimum RTT {measured.min_ms:.2f} ms after applying {spec.impairment.describe()}, "
            f"expected {expected:.2f} ± {tolerance:.2f} ms (baseline minimum {base.min_ms:.2f} ms)"
        )


@dataclass(frozen=True)
class ImpairedPath:
    """An impairment in place for one cell: the RTT proof it still owes, and the primary's
    side of it, which the round trip that sees fio exit clears too (one round trip fewer);
    the cell's undo clears whatever that did not confirm."""

    proof: RttProof
    impairer: Impairer
    planned: list[tuple[Runner, AppliedImpairment]]
    primary: str

    def _primary_fault(self) -> AppliedImpairment | None:
        return next((fault for node, fault in self.planned if node.name == self.primary), None)

    def exit_batch(self) -> dict[str, Shell]:
        """The primary's clear as snippets for fio's exit round trip (run only once fio ended)."""
        fault = self._primary_fault()
        if fault is None:
            return {}
        return {
            f"{_EXIT_PREFIX}{name}": command if isinstance(command, Shell) else Shell(shlex.join(command))
            for name, command in self.impairer.clear_batch(fault).items()
        }

    def settle(self, out: Mapping[str, CommandResult]) -> None:
        """Judge the exit round trip's clear; a confirmed one leaves the undo (which still runs
        on every path) only the other node."""
        fault = self._primary_fault()
        ran = {name.removeprefix(_EXIT_PREFIX): result for name, result in out.items() if name.startswith(_EXIT_PREFIX)}
        if fault is None or not ran:
            return
        self.impairer.confirm_cleared(fault, ran)
        self.planned[:] = [(node, planned) for node, planned in self.planned if planned is not fault]


#: names of the primary's clear in fio's exit round trip (beside fio's own output)
_EXIT_PREFIX = "impair_"


@dataclass(frozen=True)
class RttProof:
    """What an impaired cell must show before its measurement counts: the minimum RTT to the
    peer under the impairment, against the path's unimpaired ``base``."""

    spec: CellSpec
    base: RttStats

    def judge(self, node: str, dest: str, ping_output: str) -> RttStats:
        """The RTT measured under the impairment; :class:`ImpairmentMismatch` if the fault did
        not take, :class:`InfraError` if the probe printed no RTT."""
        try:
            measured = parse_ping(ping_output)
        except ValueError as exc:
            raise InfraError(f"{node}: RTT probe to {dest} failed: {exc}") from None
        check_rtt(self.spec, self.base, measured)
        return measured


class Faults:
    """Injects the faults of the cells of one run (one per process)."""

    def __init__(
        self,
        inventory: Inventory,
        run_id: str,
        ledger: Ledger,
        *,
        deadman_grace_s: float,
        allow_disconnecting: bool = False,
    ) -> None:
        self.inventory = inventory
        self.ledger = ledger
        # An impairment that reaches the replication's own timeouts disconnects it: a
        # disruptive change, run only with the disruptive opt-in (or on the lab).
        self.allow_disconnecting = allow_disconnecting
        self._timeouts: dict[str, SilenceTimeouts] = {}
        # A fault removes itself this long after the cell's fio deadline, should the harness
        # die or lose SSH without clearing it.
        self.deadman_grace_s = deadman_grace_s
        self.impairer = Impairer(run_id, ledger)
        self._baseline_rtt: dict[tuple[str, str], RttStats] = {}

    def inject(self, spec: CellSpec, target: Target, undo: ExitStack) -> ImpairedPath | None:
        """Cut or impair as ``spec`` says; for an impairment, the path as impaired (with the RTT
        proof it still owes)."""
        if spec.mode == "disconnected":
            self._disconnect(target, undo)
        if spec.impairment is None:
            return None
        self.lint(spec, target)
        base = self.baseline_rtt(target.primary, target.peer_ip)
        planned = self._impair(spec, target, undo)
        return ImpairedPath(RttProof(spec, base), self.impairer, planned, target.primary.name)

    def baseline_rtt(self, primary: Runner, peer_ip: str) -> RttStats:
        """Unimpaired RTT of a path, measured once per process (it is a property of the path)."""
        key = (primary.name, peer_ip)
        if key not in self._baseline_rtt:
            self._baseline_rtt[key] = probe_rtt(primary, peer_ip)
        return self._baseline_rtt[key]

    def lint(self, spec: CellSpec, target: Target) -> None:
        """Hold the impairment against the resource's effective timeouts (read once per pair
        and process) before anything changes: a fault that outlasts them disconnects the
        replication instead of slowing it."""
        assert spec.impairment is not None
        if spec.pair not in self._timeouts:
            self._timeouts[spec.pair] = target.replication.timeouts()
        timeouts = self._timeouts[spec.pair]
        findings = lint_profile(
            spec.impairment, ping_timeout_s=timeouts.answer_timeout_s, timeout_s=timeouts.request_timeout_s
        )
        for finding in findings:
            self.ledger.record("impair-lint", {"cell": spec.id, "level": finding.level, "message": finding.message})
        errors = [f.message for f in findings if f.level == "error"]
        if errors and not self.allow_disconnecting:
            raise RefusedError(
                f"{spec.id}: {'; '.join(errors)} ({timeouts.describe()}); a fault that disconnects the "
                "replication is disruptive: run with --allow-disruptive"
            )

    # -- replication cut -------------------------------------------------------------------------
    def _disconnect(self, target: Target, undo: ExitStack) -> None:
        replication = target.replication
        self.ledger.record("drbd-disconnect", {"node": replication.node, "resource": replication.resource})
        undo.callback(self._reconnect, replication)
        replication.disconnect()

    def _reconnect(self, replication: Replication) -> None:
        self.ledger.record("drbd-connect", {"node": replication.node, "resource": replication.resource})
        with contextlib.suppress(CommandFailed):
            replication.connect()
        # Writes made while disconnected resync now; the next cell must start healthy.
        replication.wait_healthy(RESYNC_TIMEOUT_S)

    # -- impairment ------------------------------------------------------------------------------
    def _impair(self, spec: CellSpec, target: Target, undo: ExitStack) -> list[tuple[Runner, AppliedImpairment]]:
        assert spec.impairment is not None
        pair = target.pair
        # the fault is gone by the fio deadline + the grace, its undo included
        hold = fio_deadline_s(spec.workload) + self.deadman_grace_s - UNDO_BUDGET_S
        planned: list[tuple[Runner, AppliedImpairment]] = []
        # one undo for both nodes, registered before either is touched (an interrupt in between
        # leaves nothing behind); it clears them in parallel, so an interrupted cell's undo
        # costs one node's time and fits the few seconds an interrupted run has to end
        undo.callback(self._clear_all, planned)
        # both nodes at once, a thread each: one node's refusal or failure still lets the
        # other finish, and the undo above clears whatever either put in place
        each_node(
            [
                (
                    node.name,
                    functools.partial(
                        self.impairer.apply,
                        node,
                        iface=self.inventory.nodes[node.name].replication.iface,
                        peer_ip=self.inventory.nodes[other].replication.ip,
                        profile=spec.impairment,
                        hold_s=hold,
                        role=role,
                        port=pair.shaped_port(),
                        # the undo is registered before the node is touched: an interrupt
                        # during the apply still clears it
                        on_planned=functools.partial(_plan_clear, planned, node),
                        # the interface as the guard's round trips read it (None: read it now)
                        preread=(target.prereads or {}).get(node.name),
                    ),
                )
                for role, node, other in _sides(target)
            ]
        )
        return planned

    def _clear_all(self, planned: list[tuple[Runner, AppliedImpairment]]) -> None:
        # a connection lost mid-undo reconnects, bounded: clearing twice is harmless
        each_node(
            [
                (node.name, functools.partial(with_reconnect, functools.partial(self.impairer.clear, node, fault)))
                for node, fault in planned
            ]
        )


def _sides(target: Target) -> tuple[tuple[Literal["primary", "secondary"], Runner, str], ...]:
    """Each node of the pair with its role and the other node's name."""
    return (("primary", target.primary, target.pair.secondary), ("secondary", target.secondary, target.pair.primary))


def _plan_clear(planned: list[tuple[Runner, AppliedImpairment]], node: Runner, fault: AppliedImpairment) -> None:
    planned.append((node, fault))
