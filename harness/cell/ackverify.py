"""The acknowledged-writes oracle shared by the failover and the partition cells: replay a
write job's first N writes with fio ``verify_only`` on a node and count the blocks that are
missing or wrong (a write the primary acknowledged must be on the surviving replica).

Each cell writes with a seed of its own (:func:`cell_seed`): the blocks an earlier cell left on
the device carry another seed in their verify headers, so they can never pass for this cell's."""

from __future__ import annotations

import hashlib
import shlex
from dataclasses import replace

from harness.cell.runner import CellRunner
from harness.fio.job import FioFailed
from harness.fio.spec import WorkloadSpec
from harness.remote import Runner

__all__ = ["cell_seed", "verify_written"]


def cell_seed(*cell: str | int) -> int:
    """The write pattern's seed of one cell of a run, named by its parts (run id, pair, ...):
    the same for the same cell, and different cells almost never share one."""
    digest = hashlib.sha256("/".join(str(part) for part in cell).encode()).digest()
    return 4242 + int.from_bytes(digest[:4], "big") % 1_000_000


def verify_written(
    runner: CellRunner, node: Runner, spec: WorkloadSpec, *, device: str, cell: str, notes: list[str]
) -> tuple[bool, int]:
    """Run a ``verify_only`` job; return (passed, bad blocks).  fio checks every block unless
    ``verify_fatal`` is set and logs one ``verify:`` line per bad block, which is the count;
    the bad blocks' contents stay on the node (``verify_dump``) and their paths go in ``notes``."""
    assert spec.verify is not None
    spec = spec.replace(verify=replace(spec.verify, dump=True))
    job = runner.fio.start(node, spec, device, cell)
    try:
        job.wait()
    except FioFailed as exc:
        notes.append(str(exc))
        res = node.run(["grep", "-c", "^verify: ", job.log], timeout=30, check=False)
        count = res.stdout.strip()
        where = job.log.rsplit("/", 1)[0]
        # a block never written is dumped as <file>.<offset>.hdr_fail, a wrong one as .received
        listing = f"ls -1 {shlex.quote(where)}/*.received {shlex.quote(where)}/*.hdr_fail 2>/dev/null | head -20"
        dumps = node.run(["sh", "-c", listing], timeout=30, check=False)
        if dumps.stdout.strip():
            notes.append(f"{node.name}: fio kept the bad blocks' contents in " + ", ".join(dumps.stdout.split()))
        return False, int(count) if count.isdigit() else 0
    return True, 0
