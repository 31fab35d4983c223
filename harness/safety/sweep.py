"""Preflight's view of a crashed run's leftovers, and their removal when asked.

Without ``--clean-leftovers`` leftovers are a BLOCK: the run does not start on a node where an
earlier run's fault may still be shaping the path.  With it, preflight removes them itself,
through :func:`harness.safety.leftovers.remove_leftovers` (only provably harness-owned objects:
the reserved qdisc handle, recorded process sessions; never the lock, which a live run may
hold), then restores and checks the interface's pre-state: each fault record holds the root
qdisc the interface had before the fault (``pre_root``, written by
:class:`harness.impair.apply.Impairer`), and deleting the harness root gives the kernel's
default back, which is compared with it.  What was removed and restored is a *warning*, so
the run goes on and the JUnit report says so; anything still there stays a BLOCK.
"""

from __future__ import annotations

import json
from typing import Literal

from harness.errors import HarnessError
from harness.impair.commands import qdisc_show_command
from harness.impair.qdiscs import parse_qdiscs
from harness.impair.readback import RootClass, classify_root, explain_root
from harness.remote import Runner
from harness.safety.leftovers import Leftover, find_leftovers, remove_leftovers

__all__ = ["CLEAN_OPTION", "leftover_check"]

Status = Literal["ok", "warn", "BLOCK"]
CLEAN_OPTION = "--clean-leftovers"


def _fault_record(node: Runner, item: Leftover) -> dict[str, object]:
    """The fault record a leftover fault points at (empty when unreadable: no pre-state)."""
    result = node.run(["cat", item.detail], timeout=20, check=False)
    try:
        record = json.loads(result.stdout) if result.ok else {}
    except ValueError:
        return {}
    return record if isinstance(record, dict) else {}


def _restored(node: Runner, iface: str, before: str | None) -> tuple[bool, str]:
    """Is ``iface`` back to its pre-state (the root recorded before the fault, else the kernel's
    default)?  And the sentence that says so."""
    try:
        qdiscs = parse_qdiscs(node.run(qdisc_show_command(iface), timeout=20).stdout)
    except HarnessError as exc:
        return False, f"{iface}: cannot read its qdiscs back: {exc}"
    now = explain_root(qdiscs)
    if classify_root(qdiscs) is not RootClass.DEFAULT:
        return False, f"{iface} not restored: {now}"
    if before is None:
        return True, f"{iface} back to the kernel's {now} (no pre-state was recorded)"
    if now != before:
        return True, f"{iface} back to the kernel's {now}, not the {before} recorded before the fault"
    return True, f"{iface} restored to the {now} recorded before the fault"


def _clean(node: Runner, items: list[Leftover]) -> tuple[Status, str]:
    before: dict[str, str | None] = {}
    for item in items:
        if item.kind == "fault":
            record = _fault_record(node, item)
            iface, pre = record.get("iface"), record.get("pre_root")
            if isinstance(iface, str):
                before[iface] = pre if isinstance(pre, str) else before.get(iface)
        elif item.kind == "qdisc":
            before.setdefault(item.detail, None)
    remove_leftovers(node, items)
    notes = [_restored(node, iface, pre) for iface, pre in sorted(before.items())]
    still = [x for x in find_leftovers(node) if x.kind != "lock"]
    removed = "removed " + "; ".join(x.describe() for x in items)
    if still or not all(ok for ok, _ in notes):
        left = "; ".join([*(x.describe() for x in still), *(text for ok, text in notes if not ok)])
        return "BLOCK", f"{removed}; STILL THERE: {left}"
    return "warn", "; ".join([removed, *(text for _, text in notes)])


def leftover_check(node: Runner, *, clean: bool) -> tuple[Status, str]:
    """Preflight's ``leftovers`` finding for ``node``: ``ok``; ``BLOCK`` naming them (without
    ``clean``); or, with ``clean``, ``warn`` saying what was removed and restored (``BLOCK``
    if anything is still there).  The lock is the lock check's, never removed here."""
    left = [x for x in find_leftovers(node) if x.kind != "lock"]
    if not left:
        return "ok", "none"
    if clean:
        return _clean(node, left)
    return "BLOCK", (
        "; ".join(x.describe() for x in left)[:160]
        + f" — run `harness cleanup --inventory FILE`, or preflight with {CLEAN_OPTION}"
    )
