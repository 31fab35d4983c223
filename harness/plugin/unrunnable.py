"""Parametrisations that can never run here are left out at collection, their reason said once.

A scenario's grid multiplies pairs by replication protocols, and some combinations can never
run against this inventory: an md-nbd pair has no protocol B, a real cluster runs only the
protocol its inventory gives the pair (the harness never edits its configuration).  Collected
and skipped, each would be a JUnit skip like an inconclusive cell's, and hide the real ones
among them.  They are deselected instead, the same way in every process (xdist's workers must
collect alike), and the terminal summary counts them under each reason: under xdist the
controller collects nothing, so each worker hands its counts back in its ``workeroutput``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from harness.plugin.session import SESSION_KEY

__all__: list[str] = []

_LEFT_OUT = pytest.StashKey[Counter[str]]()
_WORKER_KEY = "harness_never_runnable"


def _never_runs(item: pytest.Item) -> str | None:
    """Why ``item`` can never run against this inventory (None: it may)."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    pair, protocol = params.get("pair"), params.get("protocol")
    if not isinstance(pair, str) or not isinstance(protocol, str):
        return None
    session = item.config.stash[SESSION_KEY]
    if pair not in session.inventory.pairs:
        return None
    return session.protocol_switch(pair).refusal(protocol)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if SESSION_KEY not in config.stash:
        return
    kept, left_out = [], []
    reasons: Counter[str] = Counter()
    for item in items:
        why = _never_runs(item)
        if why is None:
            kept.append(item)
        else:
            left_out.append(item)
            reasons[why] += 1
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept
    config.stash[_LEFT_OUT] = reasons


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller prints them
        counts: Counter[str] = session.config.stash.get(_LEFT_OUT, Counter())
        workeroutput[_WORKER_KEY] = dict(counts)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """xdist's controller: a worker's counts (every worker collected alike: the first is kept)."""
    config = node.config
    counts = getattr(node, "workeroutput", {}).get(_WORKER_KEY)
    if counts and not config.stash.get(_LEFT_OUT, None):
        config.stash[_LEFT_OUT] = Counter(counts)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    reasons = config.stash.get(_LEFT_OUT, Counter())
    if not reasons:
        return
    total = sum(reasons.values())
    terminalreporter.write_line(
        f"harness: {total} parametrisation{'s' if total > 1 else ''} not collected, never runnable here:"
    )
    for why, n in sorted(reasons.items()):
        terminalreporter.write_line(f"  {n} × {why}")
