"""Recording a dm-log-writes log on a node: a log-writes target over one scratch disk, logging
to another, the durable node writer (``dd oflag=direct,dsync``) writing a job through it, the
target removed (which writes the log's final super), and the log's used part fetched.

Both disks must be scratch devices the inventory names for the node; the data disk's and the
log disk's contents are overwritten.
"""

from __future__ import annotations

import base64
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from harness.durability.logwrites import used_bytes
from harness.durability.nodewriter import job_stream, parse_acks, writer_script
from harness.durability.oracle import WriterSpec
from harness.errors import InfraError
from harness.remote.duplex import Duplex
from harness.remote.ssh import SshNode

__all__ = ["TARGET", "Recording", "record_log", "setup_script", "teardown_script"]

#: the device-mapper name of the target while the log records
TARGET: Final = "harness-logw"
#: the log's head zeroed before the target starts, and the most of it fetched
LOG_WINDOW: Final = 4 << 20


@dataclass(frozen=True)
class Recording:
    acks: list[int]
    log_bytes: int


def setup_script(data_dev: str, log_dev: str) -> str:
    data, log = shlex.quote(data_dev), shlex.quote(log_dev)
    return (
        "set -e; modprobe dm-log-writes; "
        f"dd if=/dev/zero of={log} bs=1M count={LOG_WINDOW >> 20} oflag=direct status=none; "
        f'sz=$(blockdev --getsz {data}); dmsetup create {TARGET} --table "0 $sz log-writes {data} {log}"'
    )


def teardown_script() -> str:
    return f"dmsetup remove {TARGET}"


def record_log(node: SshNode, spec: WriterSpec, data_dev: str, log_dev: str, out: Path) -> Recording:
    """Record ``spec`` written durably through a log-writes target on ``node``; the log's used
    part goes to ``out``."""
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
    out.write_bytes(raw[:used])
    return Recording(acks, used)
