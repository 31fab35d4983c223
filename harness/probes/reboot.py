"""Telling that a node rebooted: its ``boot_id`` changed.

The kernel draws ``/proc/sys/kernel/random/boot_id`` once per boot, so a different value means
a different boot, however short the outage was.  Uptime and ``who -b`` do not tell reliably
(Ansible's ``reboot`` module moved to boot_id for that reason).

What a reboot means depends on the scenario:

* in a measurement cell it is an error: the node's tc impairment, its fio and its DRBD events
  watcher are gone, so nothing the cell would report is true ("node X rebooted during the
  cell (boot_id A → B): tc state and fio are gone");
* in a crash test the crashed node *must* come back with a new boot_id (otherwise the crash
  did not happen), and every other node must not.

The checks here are pure; :func:`read_boot_ids` and :func:`watch_reboots` are the thin I/O
around them.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Collection, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Final

from harness.errors import HarnessError, InfraError
from harness.remote import Runner

__all__ = [
    "BOOT_ID_PATH",
    "NodeRebooted",
    "boot_id_argv",
    "parse_boot_id",
    "read_boot_ids",
    "reboot_error",
    "watch_reboots",
]

BOOT_ID_PATH: Final = "/proc/sys/kernel/random/boot_id"
#: after a failure, how often (and how far apart) the nodes' boot ids are tried: a rebooting
#: node answers SSH again a few seconds after it comes back
_BEHIND_ATTEMPTS: Final = 4
_BEHIND_PAUSE_S: Final = 3.0


class NodeRebooted(InfraError):
    """A node rebooted when it should not have (or did not when it was crashed)."""


def boot_id_argv() -> list[str]:
    """Read-only; fits in any ``run_batch`` round trip."""
    return ["cat", BOOT_ID_PATH]


def parse_boot_id(text: str, node: str = "node") -> str:
    """The boot_id in ``cat``'s output, normalised; :class:`InfraError` if it is not a UUID."""
    value = text.strip()
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise InfraError(f"{node}: {BOOT_ID_PATH} printed {value[:60]!r}, not a boot id") from None


def reboot_error(before: Mapping[str, str], after: Mapping[str, str], *, crashed: Collection[str] = ()) -> str | None:
    """What went wrong between two readings of the nodes' boot ids, or None.

    ``crashed``: nodes the scenario crashed on purpose; each must have a new boot id.  Every
    other node must keep its own.  A node missing from ``after`` is reported, not skipped.
    """
    problems: list[str] = []
    for node in sorted(before):
        old, new = before[node], after.get(node)
        if new is None:
            problems.append(f"node {node}: no boot_id read after the cell")
        elif node in crashed and new == old:
            problems.append(f"node {node} was crashed but did not reboot (boot_id {old} unchanged)")
        elif node not in crashed and new != old:
            problems.append(f"node {node} rebooted during the cell (boot_id {old} → {new}): tc state and fio are gone")
    return "; ".join(problems) or None


def read_boot_ids(nodes: Sequence[Runner], *, timeout: float = 15.0) -> dict[str, str]:
    """Each node's boot id, one short read-only command per node, the nodes at once (a thread
    each: every cell reads both nodes twice, and a round trip is 0.1-0.2 s on a lab guest)."""

    def read(node: Runner) -> str:
        return parse_boot_id(node.run(boot_id_argv(), timeout=timeout).stdout, node.name)

    if len(nodes) <= 1:
        return {n.name: read(n) for n in nodes}
    with ThreadPoolExecutor(max_workers=len(nodes), thread_name_prefix="boot-id") as pool:
        futures = {n.name: pool.submit(read, n) for n in nodes}
    # the first node's failure is raised as it is, as when the nodes were read in turn
    return {name: future.result() for name, future in futures.items()}


def _reboot_behind(before: Mapping[str, str], nodes: Sequence[Runner]) -> str | None:
    """After a failure: a reboot that explains it, or None (also when the nodes cannot be
    read yet — then the failure itself is the best there is)."""
    # a node that rebooted may still be booting: a few bounded tries before giving up
    for attempt in range(1, _BEHIND_ATTEMPTS + 1):
        try:
            return reboot_error(before, read_boot_ids(nodes))
        except HarnessError:
            if attempt == _BEHIND_ATTEMPTS:
                return None
            time.sleep(_BEHIND_PAUSE_S)
    return None


@contextmanager
def watch_reboots(nodes: Sequence[Runner], *, known: Mapping[str, str] | None = None) -> Iterator[None]:
    """Fail the enclosed block with :class:`NodeRebooted` if any node rebooted during it.

    ``known``: boot ids already read (raw ``cat`` output is fine), e.g. by a batch the caller
    runs anyway; the others are read on entry.  On the way out the ids are read again.  When
    the block failed, a reboot is the better explanation (a lost connection or a missing qdisc
    is its symptom), so :class:`NodeRebooted` replaces the failure and chains it; if the nodes
    cannot be read then (still booting), the original failure stands.
    """
    given = {name: parse_boot_id(text, name) for name, text in (known or {}).items()}
    before = {**read_boot_ids([n for n in nodes if n.name not in given]), **given}
    try:
        yield
    except Exception as failure:
        problem = _reboot_behind(before, nodes)
        if problem:
            raise NodeRebooted(problem) from failure
        raise
    problem = reboot_error(before, read_boot_ids(nodes))
    if problem:
        raise NodeRebooted(problem)
