"""Run one undo step on several nodes at once (the interrupt path's time budget).

A CI runner gives a cancelled job about 7 s between SIGTERM and SIGKILL;
undoing node after node spends a round trip per node in series.  :func:`each_node` runs the
steps in threads, one per node (each node has its own SSH connection), waits for all of them
and raises what failed, every failure named, after all have run: one node's failure never
stops another node's undo.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from harness.errors import InfraError

__all__ = ["each_node"]


def each_node(steps: Sequence[tuple[str, Callable[[], object]]]) -> None:
    """Run ``(node, step)`` pairs in parallel; one failure is raised as it is, several as one
    :class:`InfraError` naming each."""
    if len(steps) <= 1:
        for _, step in steps:
            step()
        return
    failures: list[Exception] = []
    with ThreadPoolExecutor(max_workers=len(steps), thread_name_prefix="undo") as pool:
        futures = [pool.submit(step) for _, step in steps]
        for future in futures:
            error = future.exception()
            if isinstance(error, Exception):
                failures.append(error)
            elif error is not None:
                raise error
    if len(failures) == 1:
        raise failures[0]
    if failures:
        raise InfraError("; ".join(str(f) for f in failures))
