"""A lost SSH connection inside a cell: bounded reconnects, and the node's faults held
against the ledger once it answers again.

The transport discards a broken connection (:class:`~harness.errors.ConnectionLost`) and the
next command connects anew; :func:`with_reconnect` gives an idempotent step (an undo, a stop,
a read) that chance a bounded number of times.  Losing the connection while fio runs loses the
measurement (fio's output and the window's events may be incomplete), so the cell fails; but
first it reconnects and compares what the node carries with what the ledger says is active
(:func:`check_faults`): a fault the ledger lists and the node lost (its dead-man switch fired,
the node rebooted), or one the node has and the ledger does not, is named in the error.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, TypeVar

from harness.errors import ConnectionLost, HarnessError
from harness.remote import Runner, polling
from harness.safety.leftovers import Leftover, find_leftovers

__all__ = ["RECONNECT_ATTEMPTS", "check_faults", "compare_faults", "recheck_after_reboot", "with_reconnect"]

#: how many times a step is tried in all when its connection drops (each try may itself make
#: the transport's bounded connect attempts)
RECONNECT_ATTEMPTS: Final = 3
#: pause before the second try; the third waits twice as long
RECONNECT_PAUSE_S: Final = 1.0

T = TypeVar("T")


def with_reconnect(
    step: Callable[[], T],
    *,
    attempts: int = RECONNECT_ATTEMPTS,
    pause_s: float = RECONNECT_PAUSE_S,
    sleep: Callable[[float], None] = polling.sleep,
) -> T:
    """``step()``, tried again after a pause when its connection drops, ``attempts`` times in
    all; the last :class:`ConnectionLost` is raised.  Only for steps that may run twice."""
    for attempt in range(1, attempts + 1):
        try:
            return step()
        except ConnectionLost:
            if attempt == attempts:
                raise
            sleep(pause_s * attempt)
    raise AssertionError("unreachable")


def _token(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".json")


def compare_faults(node: str, active: Iterable[Mapping[str, Any]], found: Iterable[Leftover]) -> list[str]:
    """What differs between the faults the ledger says are active on ``node`` and what the
    node carries (its fault records and the harness's qdiscs); empty when they agree."""
    expected = {str(f["token"]): str(f.get("iface", "")) for f in active if f.get("node") == node}
    items = list(found)
    records = {_token(i.detail) for i in items if i.kind == "fault"}
    qdiscs = {i.detail for i in items if i.kind == "qdisc"}
    problems = [
        f"{node}: fault {token} on {iface} is active by the ledger but gone from the node "
        "(its dead-man switch fired, or the node rebooted)"
        for token, iface in sorted(expected.items())
        if token not in records
    ]
    problems += [
        f"{node}: fault {token} on {iface} has its record but no harness qdisc on {iface}"
        for token, iface in sorted(expected.items())
        if token in records and iface not in qdiscs
    ]
    unlisted = sorted(records - set(expected))
    problems += [f"{node}: fault record {token} that the ledger does not list" for token in unlisted]
    covered = set(expected.values())
    problems += [
        f"{node}: a harness qdisc on {iface} that no active fault explains" for iface in sorted(qdiscs - covered)
    ]
    return problems


def check_faults(node: Runner, run_id: str, active: Iterable[Mapping[str, Any]]) -> str:
    """Reconnect (bounded) and compare the node's faults with the ledger: one sentence."""
    try:
        found = with_reconnect(lambda: find_leftovers(node, run_id=run_id))
    except HarnessError as exc:
        return f"could not reconnect to check its faults against the ledger ({exc}); its dead-man switches remain"
    problems = compare_faults(node.name, active, found)
    if problems:
        return "after reconnecting, its faults differ from the ledger: " + "; ".join(problems)
    count = sum(1 for f in active if f.get("node") == node.name)
    return f"after reconnecting, its faults are as the ledger says ({count} active)"


def recheck_after_reboot(nodes: Iterable[Runner], run_id: str) -> str:
    """After a node rebooted mid-cell (and the cell's undo ran): what of this run is left on
    each node, one sentence.  A rebooted node lost its tc state and its /run (tmpfs);
    the other kept everything the undo did not remove."""
    parts: list[str] = []
    for node in nodes:
        try:
            found = with_reconnect(functools.partial(find_leftovers, node, run_id=run_id))
        except HarnessError as exc:
            parts.append(f"{node.name} could not be checked ({exc})")
            continue
        own = [item.describe() for item in found if item.kind != "lock"]  # the run's lock stays until its end
        parts.append("; ".join(own) if own else f"{node.name}: nothing of this run left")
    left = any(not p.endswith(": nothing of this run left") for p in parts)
    hint = f" (remove with `harness cleanup --run-id {run_id}`)" if left else ""
    return "rechecked after the reboot: " + " / ".join(parts) + hint
