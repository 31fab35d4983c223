"""One randomized crash trial on a DRBD pair, fast: the fault is a cut of the replication path
at the drawn moment, not a guest's SIGKILL and reboot.

What the fault leaves to be read is what the survivor holds once the path is cut:

``primary-crash``
    the peer's disk, once it has written out all it received before the cut (its counters of
    data received and written stop moving): what a promoted peer would serve after the
    primary died at that moment.  The primary's sends after the cut never arrive, as its
    dead kernel's would not.
``peer-crash``
    the primary's own disk, once the writes it had been sent ended (the fault healed): the
    peer's loss is the primary's view of a link gone silent, and the primary never stopped.

The cut is the harness's impairer dropping every packet of the resource from the primary to
the peer (``netem loss 100%`` on its replication interface, the resource's port only, never
the SSH path; its dead-man switch takes it away should the harness die), taken away again
once the survivor's copy is read: the pair reconnects (or never noticed, when the cut was
shorter than DRBD's timeout) and resyncs what the primary wrote meanwhile, in a second or two
rather than a guest's minute-long reboot.

Each job of the trial is the node writer (``dd oflag=direct``, one write at a time) on the
pair's DRBD device, fed by the controller at most :data:`WINDOW` writes ahead of its
acknowledgements, which stream back over SSH.  The acknowledgement log is taken *before* the
cut is sent, so nothing the node acknowledged after the cut counts.  The negative control
claims, besides, the writes the controller never sent (an acknowledgement before the write
reached any device): the oracle must find them lost in every trial.
"""

from __future__ import annotations

import base64
import io
import re
import shlex
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, runtime_checkable

import paramiko

from harness.durability.bounds import LossBound, PathFigures, ResourceConfig, loss_bound
from harness.durability.durmap import TrialOutcome
from harness.durability.nodewriter import job_stream, parse_acks, writer_script
from harness.durability.oracle import OracleReport, WriterSpec, classify
from harness.durability.plan import Trial
from harness.errors import InfraError
from harness.remote.command import Runner
from harness.remote.duplex import Duplex
from harness.units import MIB

__all__ = [
    "REGION_START",
    "WINDOW",
    "ChannelNode",
    "RegionImage",
    "Site",
    "TrialRun",
    "crash_target",
    "drbd_counters",
    "footprint",
    "job_specs",
    "run_trial",
]

#: writes the controller sends ahead of the acknowledgements, per job
WINDOW: Final = 4
#: where on the device the trials write (past what other scenarios' fio jobs write first)
REGION_START: Final = 64 * MIB
#: each job's region
REGION_BYTES: Final = 4 * MIB
MAX_WRITES: Final = 160
_SETTLE_POLLS: Final = 3
_POLL_S: Final = 0.15


@runtime_checkable
class ChannelNode(Runner, Protocol):
    """A node that opens a session whose stdin we write (a live SSH node)."""

    name: str

    def channel(self, argv: Sequence[str], *, timeout: float, sudo: bool = True) -> paramiko.Channel: ...


@dataclass(frozen=True)
class Site:
    """Where a trial runs: the pair's two nodes, its device and backing disk, how the path is
    cut and healed, and what the bound needs."""

    pair: str
    primary: ChannelNode
    peer: ChannelNode
    device: str
    backing: str
    minor: int
    #: strikes the trial's fault (the fast cut, or the lab's SIGKILL of the node it names)
    cut: Callable[[Trial], None]
    #: undoes it and returns once the pair is healthy again, with its primary
    heal: Callable[[Trial], None]
    path: PathFigures


@dataclass(frozen=True)
class TrialRun:
    outcome: TrialOutcome
    control_caught: bool
    write_s: float
    total_s: float


def job_specs(trial: Trial) -> list[WriterSpec]:
    """The trial's jobs: adjacent regions from :data:`REGION_START`, at most
    :data:`MAX_WRITES` writes each (the writer is one write at a time: iodepth is not drawn)."""
    bs = trial.workload.bs
    blocks = REGION_BYTES // bs
    first = REGION_START // bs
    count = min(MAX_WRITES, 4 * blocks)
    return [
        WriterSpec(
            trial=trial.seed, job=j, seed=trial.seed, bs=bs, first_block=first + j * blocks, blocks=blocks, count=count
        )
        for j in range(trial.workload.numjobs)
    ]


def crash_target(spec: WriterSpec, crash_at: float) -> int:
    """The acknowledgements of the job at which the trial's fault strikes: ``crash_at`` of its
    writes, leaving more than :data:`WINDOW` never sent for the negative control to claim."""
    return max(1, min(int(crash_at * spec.count), spec.count - WINDOW - 1))


def footprint(trial: Trial) -> int:
    return REGION_START + trial.workload.numjobs * REGION_BYTES


class _Job:
    def __init__(self, node: ChannelNode, spec: WriterSpec, device: str) -> None:
        self.spec = spec
        self.sent = 0
        self.stop = threading.Event()
        self.duplex = Duplex(node.channel(["sh", "-c", writer_script(spec, device)], timeout=300))
        self.feeder = threading.Thread(target=self._feed, daemon=True)
        self.feeder.start()

    def acks(self) -> int:
        return self.duplex.output().count(b"\n")

    def _feed(self) -> None:
        for seq, chunk in enumerate(job_stream(self.spec)):
            while not self.stop.is_set() and seq - self.acks() >= WINDOW:
                time.sleep(0.002)
            if self.stop.is_set() or not self.duplex.send(chunk):
                break
            self.sent = seq + 1
        self.duplex.close_input()


def drbd_counters(text: str, minor: int) -> dict[str, int]:
    """Device ``minor``'s counters in DRBD 8.4's /proc/drbd of data received (``nr``), written
    (``dw``), and requests in flight (``lo``, ``pe``, ``ua``); empty when it shows none (DRBD 9)."""
    block = re.search(rf"^ *{minor}: .*?\n(.*?)(?=^ *\d+: |\Z)", text, re.M | re.S)
    if block is None:
        return {}
    return {key: int(value) for key, value in re.findall(r"\b(nr|dw|lo|pe|ua):(\d+)", block.group(1))}


def _counters(node: Runner, minor: int) -> dict[str, int]:
    return drbd_counters(node.run(["cat", "/proc/drbd"], timeout=10, sudo=False).stdout, minor)


def _settle(node: Runner, minor: int, limit_s: float = 10.0) -> None:
    """Until the survivor has written out all it received: its counters still for a while."""
    last: dict[str, int] = {}
    still = 0
    deadline = time.monotonic() + limit_s
    while still < _SETTLE_POLLS and time.monotonic() < deadline:
        now = _counters(node, minor)
        if not now:
            time.sleep(2.0)  # no counters to watch: a fixed grace
            return
        busy = now.get("lo", 0) or now.get("ua", 0)
        still = still + 1 if now == last and not busy else 0
        last = now
        time.sleep(_POLL_S)


def _read(node: Runner, device: str, spec: WriterSpec) -> bytes:
    dev = shlex.quote(device)
    skip, count = spec.first_block, spec.blocks
    got = node.run_script(
        f"dd if={dev} bs={spec.bs} skip={skip} count={count} iflag=direct status=none | base64 -w0", timeout=120
    )
    data = base64.b64decode(got.stdout.strip())
    if len(data) != spec.bs * spec.blocks:
        raise InfraError(f"{node.name}: read {len(data)} bytes of the trial's region, not {spec.bs * spec.blocks}")
    return data


class RegionImage(io.BytesIO):
    """A job's region as read back, addressed by device offset."""

    def __init__(self, spec: WriterSpec, data: bytes) -> None:
        super().__init__(data)
        self.base = spec.first_block * spec.bs

    def seek(self, offset: int, whence: int = 0) -> int:
        return super().seek(offset - self.base if whence == 0 else offset, whence) + self.base


def run_trial(site: Site, trial: Trial, config: ResourceConfig) -> TrialRun:
    """Write, strike the fault at the drawn moment, read the survivor's copy, heal, classify."""
    if trial.product != "drbd" or trial.fault not in ("primary-crash", "peer-crash"):
        raise InfraError(f"trial {trial.trial_id}: the fast runner does drbd primary and peer crashes only")
    start = time.monotonic()
    specs = job_specs(trial)
    jobs = [_Job(site.primary, spec, site.device) for spec in specs]
    target = sum(crash_target(j.spec, trial.crash_at) for j in jobs)
    deadline = time.monotonic() + 120
    while sum(j.acks() for j in jobs) < target and time.monotonic() < deadline:
        if any(j.duplex.broken for j in jobs):
            break
        time.sleep(0.005)
    logs = [parse_acks(j.duplex.output().decode(errors="replace"), j.spec) for j in jobs]
    sent = [j.sent for j in jobs]
    for j in jobs:
        j.stop.set()
    if sum(len(log) for log in logs) < target:
        for j in jobs:
            j.duplex.finish(30)
        got = ", ".join(str(len(log)) for log in logs)
        raise InfraError(f"{site.primary.name}: trial {trial.trial_id}'s writers acknowledged {got} of {target} writes")
    written = time.monotonic() - start
    site.cut(trial)
    regions: list[RegionImage] = []
    try:
        if trial.fault == "primary-crash":
            _settle(site.peer, site.minor)
            regions = [RegionImage(spec, _read(site.peer, site.backing, spec)) for spec in specs]
    finally:
        healing = time.monotonic()
        site.heal(trial)
    recovery = time.monotonic() - healing
    for j in jobs:
        j.feeder.join(30)
        j.duplex.finish(30)
    if not regions:
        # the primary survived and went on with the writes already sent: read it once they
        # ended (a read beside a write in progress would show a block half old, half new)
        regions = [RegionImage(spec, _read(site.primary, site.backing, spec)) for spec in specs]
    report = OracleReport(0)
    caught = False
    for spec, log, region, upto in zip(specs, logs, regions, sent, strict=True):
        report = report.merged(classify(spec, log, region))
        claimed = [*log, *range(upto, min(spec.count, upto + WINDOW))]
        caught = caught or classify(spec, claimed, region).lost_acked > 0
    bound: LossBound = loss_bound(config, site.path, trial.fault, trial.workload.bs)
    outcome = TrialOutcome(trial, report.acked_writes, report.lost_acked, report.counts["torn"], bound, recovery)
    return TrialRun(outcome, caught, written, time.monotonic() - start)
