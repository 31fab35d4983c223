"""fio failing, hanging, or reporting lost writes is an error or a failed verify, never a pass.

Each test is a case of the fault and bad-input map in tests/RELIABILITY_CASES.md: marked
``reliability_row(N)`` and named ``test_case_NN_*``; select one with ``-k rowNN``.
"""

from __future__ import annotations

import re
import time
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

import pytest

from harness.cell import CellRunner
from harness.cell.ackverify import verify_written
from harness.cell.failover import FailoverResult, verify_workload
from harness.cell.fault import ImpairedPath, RttProof
from harness.cell.guard import Target
from harness.cell.measure import Measurer
from harness.cell.spec import CellSpec
from harness.fio.job import KERNEL_MARK, FioFailed
from harness.fio.options import VerifySpec
from harness.fio.report import parse_fio_json
from harness.fio.runner import FioRunner, fio_deadline_s
from harness.fio.spec import WorkloadSpec
from harness.impair.apply import AppliedImpairment, Impairer, ImpairmentMismatch
from harness.impair.profile import NetemProfile
from harness.inventory import Inventory
from harness.probes.rtt import RttStats
from harness.remote import Runner
from harness.remote.pool import ConnectionPool
from harness.runfiles.ledger import Ledger
from harness.runfiles.samples import SampleStore
from tests.doubles import (
    LAB,
    Answer,
    FakeRunner,
    data,
    recorded_replication,
)
from tests.unit.reliability.support import (
    PEER,
    QDISC_T,
    RUN_ID,
    tc_node,
)


def cell_runner(tmp: Path, inv: Inventory = LAB) -> CellRunner:
    return CellRunner(
        inv,
        run_id=RUN_ID,
        run_dir=tmp,
        pool=ConnectionPool(inv.ssh_specs()),  # opens nothing until asked
        store=SampleStore(tmp / "samples.ndjson"),
        ledger=Ledger(tmp / "ledger.ndjson", RUN_ID),
        lock_dir=tmp / "locks",
    )


def fio_run_node(output: str, rc: str) -> FakeRunner:
    """A node where fio was started, exited with ``rc`` and left ``output`` as its JSON file."""
    # the wait is one batch: `rc` blocks until fio exits, `fio` then prints the JSON file and
    # `times` fio's start and end stamps (none here: the job has no wall time)
    return FakeRunner(
        "a1", scripts=[("setsid", Answer())], batch={"rc": Answer(rc), "fio": Answer(output), "times": Answer()}
    )


def _tail_answers(node: FakeRunner, log: str, text: str) -> None:
    """fio's log tail and the kernel's (a lab guest's recorded `dmesg | tail -n 5`), as one
    round trip prints them."""
    kernel = data("fio/dmesg-tail-lab-a2.txt")
    node.scripts.insert(0, (f"tail -n 8 {log}", Answer(f"{text}{KERNEL_MARK}\n{kernel}")))


#: a recorded print of the pressure snippet without PSI, as the lab's guest kernel has none
#: (tests/data/pressure/README.md): what closes a cell's validity window on a node
QUIET_END = {"pressure": Answer(data("pressure/no-psi/quiet-after.txt"))}

# Recorded stderr of the runs that made the JSON files (tests/data/fio/README.md).
DEVFULL_STDERR = "fio: io_u error on file /dev/full: No space left on device: write offset=0, buflen=4096"


LOST_WRITES_STDERR = (
    "verify: bad magic header 0, wanted acca at file /work/tmp-fio/scratch.img offset 1011712, length 4096 "
    "(requested block: offset=1011712, length=4096)"
)


@pytest.mark.reliability_row(23)
@pytest.mark.parametrize(
    ("rc", "output", "message"),
    [
        (1, "fio/fio-3.33-error-devfull.json", r"failed \(exit 1, fio error 28\): " + re.escape(DEVFULL_STDERR)),
        (0, "fio/fio-3.33-error-devfull.json", r"failed \(exit 0, fio error 28\)"),
        (1, None, r"exited 1 without usable JSON \(fio JSON output is truncated"),
        (0, "", r"exited 0 without usable JSON \(no JSON document"),
        (137, "fio/fio-3.33-randwrite-4k-libaio.json", r"hit its node-side deadline of 600 s"),
    ],
    ids=["enospc", "error-in-json-exit-0", "truncated", "no-output", "killed-at-deadline"],
)
def test_case_23_fio_failing_mid_run_is_an_error(tmp_path: Path, rc: int, output: str | None, message: str) -> None:
    if output is None:
        full = data("fio/fio-3.33-randwrite-4k-libaio.json")
        text = full[: len(full) // 2]  # fio killed while writing its JSON
    else:
        text = data(output) if output else ""
    fio = FioRunner(RUN_ID, Ledger(tmp_path / "ledger.ndjson", RUN_ID))
    # the round trip that sees fio exit brings back its exit code and its JSON file
    node = FakeRunner("a1", scripts=[("", Answer())], batch={"rc": Answer(f"{rc}\n"), "fio": Answer(text)})
    job = fio.start(node, WorkloadSpec(name="w", rw="write", size=1 << 20), "/dev/drbd0", "cell-1")
    _tail_answers(node, job.log, DEVFULL_STDERR + "\n" if output and "devfull" in output else "")
    with pytest.raises(FioFailed, match=rf"a1: fio for cell-1 .*{message}") as info:
        job.wait()
    assert job.exited  # fio ended: nothing is left for the undo to stop
    assert info.value.exit_code == 5  # an error, never a throughput verdict
    if "usable JSON" in str(info.value) or "fio error" in str(info.value):
        # the kernel's last lines come with fio's (recorded on a lab guest)
        assert "kernel log: [  486.570000] block drbd0: conn( Connected -> VerifyT )" in str(info.value)


@pytest.mark.reliability_row(24)
def test_case_24_hung_fio_is_bounded_and_stopped(tmp_path: Path) -> None:
    fio = FioRunner(RUN_ID, Ledger(tmp_path / "ledger.ndjson", RUN_ID))
    spec = WorkloadSpec(name="w", rw="randwrite", size=1 << 20, runtime_s=30, ramp_s=2, time_based=True)
    # the blocking wait (a batch whose `rc` part waits on `tail --pid`) never sees an exit code
    node = FakeRunner("a1", scripts=[("", Answer())], batch={"rc": Answer()})
    job = fio.start(node, spec, "/dev/drbd0", "cell-1")
    deadline = fio_deadline_s(spec)
    assert deadline == 62.0
    assert f"timeout --kill-after=10 {deadline:.0f} fio --name=w" in node.calls[0]  # bounded on the node
    stale = replace(job, started=time.monotonic() - deadline - 60)  # the harness-side limit has passed
    with pytest.raises(FioFailed, match="a1: fio for cell-1 did not finish within 62 s"):
        stale.wait()
    assert not stale.exited
    stop = node.calls[-1]
    assert "pkill -TERM -s" in stop and "pkill -KILL -s" in stop
    assert not any("resume-io" in c or "drbdadm" in c for c in node.calls)


@pytest.mark.reliability_row(33)
def test_case_33_lost_acknowledged_writes_fail_verification(tmp_path: Path) -> None:
    result = parse_fio_json(data("fio/fio-3.33-verify-only-lost-writes.json"))
    assert result.error == 84 and not result.ok  # EILSEQ
    runner = cell_runner(tmp_path)
    spec = verify_workload(16 << 20, seed=4321, iodepth=4).replace(
        verify=VerifySpec(alg="crc32c", verify_only=True, state_save=False), number_ios=2000
    )
    node = fio_run_node(data("fio/fio-3.33-verify-only-lost-writes.json"), "1\n")
    notes: list[str] = []
    run_log = f"/run/harness/{RUN_ID}/fio-failover-verify-4321.log"
    _tail_answers(node, run_log, LOST_WRITES_STDERR + "\n")
    # fio logs one `verify:` line per bad block; the recorded stderr of that run has one
    node.argv[("grep", "-c", "^verify: ", run_log)] = [Answer(f"{LOST_WRITES_STDERR.count('verify: ')}\n")]
    # fio dumped the bad block (verify_dump): the listing of a recorded run of the same failure
    dump_dir = run_log.rsplit("/", 1)[0]
    listing = f"ls -1 {dump_dir}/*.received {dump_dir}/*.hdr_fail 2>/dev/null | head -20"
    node.argv[("sh", "-c", listing)] = [Answer(data("fio/fio-3.33-verify-dump-listing.txt"))]
    verified = verify_written(runner, node, spec, device="/dev/drbd0", cell="failover-verify-4321", notes=notes)
    assert verified == (False, 1)
    assert len(notes) == 2 and "fio error 84" in notes[0] and "offset 1011712" in notes[0]
    assert notes[1] == "a1: fio kept the bad blocks' contents in /tmp/vd/scratch.img.9027584.hdr_fail"
    assert any("--verify_dump=1" in c for c in node.calls)
    assert not any(re.search(r"\bdrbdadm (?:invalidate|connect|primary)", c) for c in node.calls)
    outcome = FailoverResult("single-az", "C", 2000, 1996, False, 1, True, 1.0, 0.1, 10.0, True, 3, notes=notes)
    assert outcome.lost_writes == 1  # never reported as zero


@pytest.mark.reliability_row(33)
def test_case_33_clean_verify_passes(tmp_path: Path) -> None:
    runner = cell_runner(tmp_path)
    spec = verify_workload(16 << 20, seed=4321, iodepth=4).replace(
        verify=VerifySpec(alg="crc32c", verify_only=True, state_save=False), number_ios=2000
    )
    node = fio_run_node(data("fio/fio-3.33-verify-only-phase.json"), "0\n")
    notes: list[str] = []
    assert verify_written(runner, node, spec, device="/dev/drbd0", cell="failover-verify-4321", notes=notes) == (
        True,
        0,
    )
    assert notes == []


@pytest.mark.reliability_row(23)
def test_case_23_a_failed_fio_names_the_replication_events_and_the_cell_still_cleans_up(tmp_path: Path) -> None:
    """The cell's own steps (an impairment whose undo is registered first, then the measurement)
    over a node replaying recorded outputs: fio fails with ENOSPC while DRBD disconnects."""
    ledger = Ledger(tmp_path / "ledger.ndjson", RUN_ID)
    # the path's qdiscs: default before the fault, the harness's after it, default after the undo
    a1 = tc_node(
        ["lab/default-root.json", "lab/harness-t-qdisc.json", "lab/default-root.json"],
        ["lab/harness-t-filter.json"],
    )
    a1.batch.update(
        {
            "rc": Answer("1\n"),
            "now": Answer(),
            "fio": Answer(data("fio/fio-3.33-error-devfull.json")),
            "times": Answer(),
            # the watch's capture as its stop script prints it: alive, then the recorded stream
            "events": Answer("harness-watch alive=1\n" + data("drbd/84-events2-stream-primary-disconnect-resync.txt")),
            "bw": Answer(),
            **QUIET_END,
        }
    )
    pair = LAB.pairs["single-az"]
    target = Target(pair, a1, FakeRunner("a2"), recorded_replication(a1), PEER, "boot")
    spec = CellSpec("c", "single-az", WorkloadSpec(name="w", rw="randwrite", size=1 << 20, runtime_s=5))
    impairer = Impairer(RUN_ID, ledger)
    measurer = Measurer(FioRunner(RUN_ID, ledger), RUN_ID, ledger=ledger, deadman_grace_s=30, progress=lambda _m: None)
    log = f"/run/harness/{RUN_ID}/fio-{spec.id}.log"
    _tail_answers(a1, log, DEVFULL_STDERR + "\n")
    with pytest.raises(FioFailed) as info, ExitStack() as undo:

        def register_clear(fault: AppliedImpairment) -> None:  # as Faults does: before the change
            undo.callback(impairer.clear, a1, fault)

        impairer.apply(
            a1, iface="vec1", peer_ip=PEER, profile=QDISC_T, hold_s=60, role="primary", on_planned=register_clear
        )
        measurer.measure(spec, target, undo, None)
    message = str(info.value)
    # fio's words, the kernel's and the replication's, in one message
    assert DEVFULL_STDERR in message and "kernel log: " in message
    assert "replication events on a1: DRBD state changed during the run: " in message
    assert "StandAlone" in message or "Disconnecting" in message
    # and the undo ran after the failure: the fault was removed and verified gone
    events = [e["event"] for e in ledger.entries()]
    assert events.index("fio-exit") < events.index("impair-cleared")
    assert [e["problems"] for e in ledger.entries() if e["event"] == "impair-cleared"] == [[]]
    tail = next(i for i, c in enumerate(a1.calls) if c.startswith(f"tail -n 8 {log}"))
    assert any("tc qdisc del dev vec1 root handle 4842:" in c for c in a1.calls[tail:])


@pytest.mark.reliability_row(20)
def test_case_20_a_fault_that_did_not_take_stops_fio_and_is_removed(tmp_path: Path) -> None:
    """The RTT proof rides fio's start round trip: a ping that did not move (the lab's
    unimpaired a1 -> a2 path, recorded) against a profile adding 2 ms fails the cell as soon as fio
    runs, and the undo stops fio and clears the fault."""
    ledger = Ledger(tmp_path / "ledger.ndjson", RUN_ID)
    a1 = tc_node(
        ["lab/default-root.json", "lab/harness-t-qdisc.json", "lab/default-root.json"],
        ["lab/harness-t-filter.json"],
    )
    # fio's start script prints what its preamble printed: the ping
    a1.scripts.insert(0, ("ping -n -c 10", Answer(data("ping/iputils-20221126-reply.txt"))))
    pair = LAB.pairs["single-az"]
    target = Target(pair, a1, FakeRunner("a2"), recorded_replication(a1), PEER, "boot")
    profile = QDISC_T  # what the recorded read-back shows
    spec = CellSpec(
        "c", "single-az", WorkloadSpec(name="w", rw="randwrite", size=1 << 20, runtime_s=5), impairment=profile
    )
    impairer = Impairer(RUN_ID, ledger)
    measurer = Measurer(FioRunner(RUN_ID, ledger), RUN_ID, ledger=ledger, deadman_grace_s=30, progress=lambda _m: None)
    planned: list[tuple[Runner, AppliedImpairment]] = []
    impaired = ImpairedPath(RttProof(spec, RttStats((0.06,) * 20, 20, 20)), impairer, planned, "a1")
    with (
        pytest.raises(ImpairmentMismatch, match=r"minimum RTT 0\.\d+ ms after applying .*expected 2\.06"),
        ExitStack() as undo,
    ):

        def register_clear(fault: AppliedImpairment) -> None:  # as Faults does: before the change
            planned.append((a1, fault))
            undo.callback(impairer.clear, a1, fault)

        impairer.apply(
            a1, iface="vec1", peer_ip=PEER, profile=profile, hold_s=60, role="primary", on_planned=register_clear
        )
        measurer.measure(spec, target, undo, impaired)
    events = [e["event"] for e in ledger.entries()]
    # fio was started (the probe is in its round trip), then stopped, then the fault cleared
    assert events.index("fio-running") < events.index("fio-stopped") < events.index("impair-cleared")
    assert "fio-exit" not in events  # nothing was measured or judged
    start = next(c for c in a1.calls if "ping -n -c 10" in c)
    assert start.index("ping -n -c 10") < start.index(" fio ")


@pytest.mark.reliability_row(20)
def test_the_primarys_clear_rides_fios_exit_round_trip(tmp_path: Path) -> None:
    """Once fio has exited, the round trip that brings back its output also clears the primary's
    fault and reads the interface back; the undo, which still runs, then clears only what that
    did not confirm (here: nothing), so the fault is removed once."""
    ledger = Ledger(tmp_path / "ledger.ndjson", RUN_ID)
    a1 = tc_node(["lab/default-root.json", "lab/harness-t-qdisc.json"], ["lab/harness-t-filter.json"])
    a1.scripts.insert(0, ("ping -n -c 10", Answer(data("ping/iputils-20221126-reply.txt"))))
    a1.batch.update(
        {
            "rc": Answer("0\n"),
            "now": Answer(),
            "fio": Answer(data("fio/fio-3.33-randwrite-4k-libaio.json")),
            "times": Answer(),
            "events": Answer("harness-watch alive=1\n"),
            "bw": Answer(),
            "impair_clear": Answer(),
            "impair_qdiscs": Answer(data("tc/lab/default-root.json")),
            # the validity window closes in the same round trip: the path's ping while the fault is
            # still in place (a recorded reply), then the node's pressure snapshot
            "ping_after": Answer(data("ping/iputils-20221126-reply.txt")),
            **QUIET_END,
        }
    )
    pair = LAB.pairs["single-az"]
    a2 = FakeRunner("a2", batch=dict(QUIET_END))  # the secondary's snapshot, on its own connection
    target = Target(pair, a1, a2, recorded_replication(a1), PEER, "boot")
    # the proof's profile: 0.2 ms more RTT, which the recorded ping's minimum passes; the fault
    # applied is QDISC_T, what the recorded read-back shows
    profile = NetemProfile("t", delay_s=0.0001)
    spec = CellSpec(
        "c", "single-az", WorkloadSpec(name="w", rw="randwrite", size=1 << 20, runtime_s=5), impairment=profile
    )
    impairer = Impairer(RUN_ID, ledger)
    measurer = Measurer(FioRunner(RUN_ID, ledger), RUN_ID, ledger=ledger, deadman_grace_s=30, progress=lambda _m: None)
    base = RttStats((0.06,) * 20, 20, 20)
    planned: list[tuple[Runner, AppliedImpairment]] = []
    impaired = ImpairedPath(RttProof(spec, base), impairer, planned, "a1")
    with ExitStack() as undo:

        def clear_planned() -> None:  # as Faults does: whatever is still planned when the cell ends
            for node, fault in list(planned):
                impairer.clear(node, fault)

        undo.callback(clear_planned)
        applied = impairer.apply(
            a1,
            iface="vec1",
            peer_ip=PEER,
            profile=QDISC_T,
            hold_s=60,
            role="primary",
            on_planned=lambda fault: planned.append((a1, fault)),
        )
        assert applied is not None
        measurement = measurer.measure(spec, target, undo, impaired)
        assert planned == []  # confirmed cleared: nothing left for the undo
    assert measurement.fio.result.write.iops > 0
    events = [e["event"] for e in ledger.entries()]
    assert events.count("impair-cleared") == 1
    assert events.index("fio-exit") < events.index("impair-cleared")
    # the clear ran once, guarded to run only once fio has ended, in fio's exit round trip
    clears = [c for c in a1.calls if "tc qdisc del dev vec1 root handle 4842:" in c and "HARNESS_TC_BATCH" not in c]
    assert len(clears) == 1
    assert clears[0].startswith("{ if [ -s ") and f"{applied.token}.deadman" in clears[0]
    # the ping after fio ran before the clear, in the same round trip; both nodes' windows closed
    after_ping = next(i for i, c in enumerate(a1.calls) if "ping -n -c 10" in c and c.startswith("{ if"))
    assert after_ping < a1.calls.index(clears[0])
    assert measurement.rtt_after is not None and measurement.rtt_after.median_ms > 0
    assert measurement.window_end is not None and set(measurement.window_end.nodes) == {"a1", "a2"}
    assert measurement.window_end.problems == ()
