"""Preflight's look at a resource's other peers: each with its disk and role, and the quorum.

A pair whose resource has more nodes (an inventory's ``peers``) is judged by its own
connection like any pair; this check says what the rest of the resource is: every peer with
its connection, role and disk, the quorum setting and state, and how many peers the primary
can lose before its writes stop.  No quorum blocks (writes would fail from the first I/O); a
peer away or without the disk it should have warns (the margin is smaller than designed).
"""

from __future__ import annotations

from typing import Literal

from harness.replication.answers import PeerView

__all__ = ["peers_check"]


def peers_check(view: PeerView | None) -> tuple[Literal["ok", "warn", "BLOCK"], str] | None:
    """(status, detail) of the peers finding; None when there is no view (the resource is not
    configured on the primary, which its own finding says)."""
    if view is None:
        return None
    problems, described = view.problems(), view.describe()
    # what the description does not say already goes first
    detail = "; ".join([*(p for p in problems if p not in described), described])
    if not view.holds_quorum:
        return "BLOCK", detail
    return ("warn" if problems else "ok"), detail
