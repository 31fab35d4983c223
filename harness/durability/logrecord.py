"""Recording a dm-log-writes log on a node: a log-writes target over one scratch disk, logging
to another, the durable node writer (``dd oflag=direct,dsync``) writing a job through it, the
target removed (which writes the log's final super), and the log's used part fetched.

Both disks must be scratch devices the inventory names for the node; the data disk's and the
log disk's contents are overwritten.
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import gzip
import json
import shlex
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from harness.durability.logwrites import used_bytes
from harness.durability.nodewriter import job_stream, parse_acks, writer_script
from harness.durability.oracle import WriterSpec
from harness.errors import ConfigError, HarnessError, InfraError
from harness.inventory import load_inventory
from harness.remote.duplex import Duplex
from harness.remote.ssh import SshNode

__all__ = ["RECORDED_SPEC", "TARGET", "Recording", "main", "record_log", "setup_script", "teardown_script"]

#: the device-mapper name of the target while the log records
TARGET: Final = "harness-logw"
#: the log's head zeroed before the target starts, and the most of it fetched
LOG_WINDOW: Final = 4 << 20
#: the job the recordings in tests/data/durability were written with: 1,100 writes of 512 bytes
#: over 64 blocks from 1 MiB on (a log entry each, so over a thousand replay points), a log of
#: about 1.1 MiB
RECORDED_SPEC: Final = WriterSpec(trial=0x4C4F47, job=0, seed=31, bs=512, first_block=2048, blocks=64, count=1100)


@dataclass(frozen=True)
class Recording:
    acks: list[int]
    log_bytes: int


def setup_script(data_dev: str, log_dev: str) -> str:
    data, log = shlex.quote(data_dev), shlex.quote(log_dev)
    return (
        "set -e; modprobe dm-log-writes; "
        f"dd if=/dev/zero of={log} bs=1M count={LOG_WINDOW >> 20} oflag=direct status=none; "
        f'sz=$(blockdev --getsz {data}); dmsetup create {TARGET} --table "0 $sz log-writes {data} {log}"; '
        # a node without udev gets no /dev/mapper link of its own: make it, and check it is the device
        f"dmsetup mknodes {TARGET}; test -b /dev/mapper/{TARGET}"
    )


def teardown_script() -> str:
    return f"dmsetup remove {TARGET}"


def record_log(node: SshNode, spec: WriterSpec, data_dev: str, log_dev: str, out: Path) -> Recording:
    """Record ``spec`` written durably through a log-writes target on ``node``; the log's used
    part goes to ``out`` (gzipped when its name ends in .gz)."""
    node.run_script(setup_script(data_dev, log_dev), timeout=60)
    try:
        script = writer_script(spec, f"/dev/mapper/{TARGET}", durable=True)
        duplex = Duplex(node.channel(["sh", "-c", script], timeout=300))
        for chunk in job_stream(spec):
            duplex.send(chunk)
        duplex.close_input()
        status = duplex.finish(300)
        text = duplex.output().decode(errors="replace")
        if status != 0:
            raise InfraError(f"{node.name}: the writer ended with status {status}: {text[-200:]!r}")
    finally:
        node.run_script(teardown_script(), timeout=60)
    acks = parse_acks(text, spec)
    log = shlex.quote(log_dev)
    fetched = node.run_script(
        f"dd if={log} bs=64k count={LOG_WINDOW >> 16} iflag=direct status=none | base64 -w0", timeout=120
    )
    raw = base64.b64decode(fetched.stdout.strip())
    with tempfile.TemporaryDirectory() as where:
        whole = Path(where) / "log"
        whole.write_bytes(raw)
        used = used_bytes(whole)
    if used > len(raw):
        raise InfraError(f"{node.name}: the log takes {used} bytes, more than the {len(raw)} fetched")
    out.write_bytes(gzip.compress(raw[:used], mtime=0) if out.suffix == ".gz" else raw[:used])
    return Recording(acks, used)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m harness.durability.logrecord --inventory FILE --node N --out NAME.log.gz``:
    record :data:`RECORDED_SPEC` on the node's first two scratch disks; ``NAME.json`` keeps
    the job, the node's kernel and the date."""
    parser = argparse.ArgumentParser(prog="python -m harness.durability.logrecord")
    parser.add_argument("--inventory", type=Path, required=True)
    parser.add_argument("--node", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    args = parser.parse_args(argv)
    try:
        if args.out.exists() and not args.force:
            raise ConfigError(f"{args.out} exists; --force overwrites it")
        inv = load_inventory(args.inventory)
        if args.node not in inv.nodes:
            raise ConfigError(f"{args.inventory}: no node {args.node!r}")
        scratch = inv.nodes[args.node].scratch_devices
        if len(scratch) < 2:
            raise ConfigError(f"{args.node}: the inventory names {len(scratch)} scratch devices, the log needs 2")
        with SshNode(args.node, inv.ssh_specs()[args.node]) as node:
            kernel = node.run(["uname", "-r"], timeout=10, sudo=False).stdout.strip()
            done = record_log(node, RECORDED_SPEC, scratch[0], scratch[1], args.out)
    except (HarnessError, OSError) as exc:
        print(f"logrecord: {exc}", file=sys.stderr)
        return 2
    meta = {
        "spec": dataclasses.asdict(RECORDED_SPEC),
        "acked": len(done.acks),
        "log_bytes": done.log_bytes,
        "node": args.node,
        "kernel": kernel,
        "data_device": scratch[0],
        "log_device": scratch[1],
        "recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    sidecar = args.out.with_name(args.out.name.removesuffix(".gz").removesuffix(".log") + ".json")
    sidecar.write_text(json.dumps(meta, indent=2) + "\n")
    print(f"{args.out}: {done.log_bytes} bytes, {len(done.acks)} writes acknowledged")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
