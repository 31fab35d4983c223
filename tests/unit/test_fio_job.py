"""One fio job (harness.fio.job, harness.fio.outcome, harness.fio.samples): one wait gives one
outcome, and the outcome becomes the samples every cell records.

The node replays a recorded run: fio 3.33's JSON of a 4k randwrite with a 1 s ramp and a 2 s
runtime (tests/data/fio/fio-3.33-randwrite-4k-libaio.json, its command in
tests/data/fio/README.md) and recorded per-second bandwidth logs (tests/data/fio/bwlog),
framed by this machine's /bin/sh running the same script a node runs.
"""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.fio.job import FioFailed
from harness.fio.outcome import FioOutcome
from harness.fio.report import parse_fio_json
from harness.fio.runner import FioRunner
from harness.fio.samples import fio_overhead, fio_values
from harness.fio.spec import WorkloadSpec
from harness.remote import Shell
from harness.runfiles.ledger import Ledger
from harness.runfiles.samples import METRICS
from harness.runfiles.series import bw_logs_script, read_bw_logs, series_from_framed_logs
from tests.doubles import Answer, FakeRunner, data

RUN_ID = "20261121-101500-ab12"
REPORT = data("fio/fio-3.33-randwrite-4k-libaio.json")
RESULT = parse_fio_json(REPORT)
#: the recorded job's shape: what its ramp and runtime were
WORKLOAD = WorkloadSpec(name="randwrite-4k", rw="randwrite", size=64 << 20, runtime_s=2, ramp_s=1, time_based=True)
#: fio's start and end stamps as the node's clock wrote them: 3.75 s apart
STAMPS = "1763718300.250000000\n1763718304.000000000\n"
BWLOG = Path(__file__).resolve().parent.parent / "data" / "fio" / "bwlog"


def _framed_logs() -> str:
    """What the exit round trip prints for the recorded four-job logs."""
    script = bw_logs_script(str(BWLOG / "randwrite-4k-nj4"))
    return subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True).stdout


def _node(rc: str, report: str, **more: Answer) -> FakeRunner:
    """A node where fio was started and exited with ``rc``, leaving ``report`` as its JSON."""
    return FakeRunner(
        "a1",
        scripts=[("setsid", Answer())],
        batch={"rc": Answer(rc), "now": Answer(), "fio": Answer(report), "times": Answer(STAMPS), **more},
    )


def test_one_wait_gives_the_report_the_timings_the_overhead_and_the_logs(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.ndjson", RUN_ID)
    framed = _framed_logs()
    node = _node("0\n", REPORT, events=Answer("captured\n"), bw=Answer(framed))
    job = FioRunner(RUN_ID, ledger).start(node, WORKLOAD, "/dev/drbd0", "c", bw_log=True)
    outcome = job.wait(after_exit={"events": Shell("echo captured")})
    assert outcome.result == RESULT and outcome.stats == RESULT.write
    assert outcome.wall_s == pytest.approx(3.75)
    # fio ran 2.001 s after its 1 s ramp: the rest of its 3.75 s is its own start-up and tear-down
    assert outcome.overhead_s == pytest.approx(3.75 - RESULT.write.runtime_ms / 1000 - 1)
    assert outcome.bw_logs is not None
    assert series_from_framed_logs(outcome.bw_logs.stdout) == read_bw_logs(BWLOG, "randwrite-4k-nj4")
    assert outcome.after_exit["events"].stdout == "captured\n"
    # the round trip that saw the exit read fio's JSON and stamps, then the caller's snippet,
    # then the logs, each guarded to run only once fio has ended
    reads = [c for c in node.calls if c.startswith("{ if [ -s /run/harness/")]
    assert len(reads) == 4
    assert "cat /run/harness/" in reads[0] and reads[0].endswith("/fio-c.json 2>/dev/null; fi\n}")
    assert "/fio-c.times" in reads[1] and "echo captured" in reads[2] and "_bw.*.log" in reads[3]
    assert job.exited
    assert [e["event"] for e in ledger.entries()] == ["fio-start", "fio-running", "fio-exit"]


def test_the_exit_hook_sees_the_round_trip_before_a_refused_report_is_judged(tmp_path: Path) -> None:
    """fio's ENOSPC report (recorded with /dev/full): the caller's hook runs first, then the
    log tail is read and the failure quotes it; the job has ended, so nothing is left to stop."""
    node = _node("1\n", data("fio/fio-3.33-error-devfull.json"))
    stderr = "fio: io_u error on file /dev/full: No space left on device: write offset=0, buflen=4096"
    node.scripts.insert(0, ("tail -n 8 ", Answer(f"{stderr}\n--- kernel log ---\n")))
    job = FioRunner(RUN_ID, Ledger(tmp_path / "ledger.ndjson", RUN_ID)).start(node, WORKLOAD, "/dev/drbd0", "c")
    seen: list[int] = []
    with pytest.raises(FioFailed, match=r"a1: fio for c failed \(exit 1, fio error 28\): fio: io_u error"):
        job.wait(on_exit=lambda out: seen.append(len(node.calls)) if "fio" in out else None)
    tail = next(i for i, c in enumerate(node.calls) if c.startswith("tail -n 8 "))
    assert seen and seen[0] <= tail
    assert job.exited and job.exit_outputs is not None and "times" in job.exit_outputs


@given(
    wall_s=st.none() | st.floats(0.0, 1e4),
    wall=st.floats(0.0, 1e4),
    ramp_s=st.integers(0, 60),
    rw=st.sampled_from(["randwrite", "randread", "randrw"]),
)
def test_the_samples_of_an_outcome(wall_s: float | None, wall: float, ramp_s: int, rw: str) -> None:
    workload = WorkloadSpec(name="w", rw=rw, size=1 << 20, runtime_s=5, ramp_s=ramp_s)  # type: ignore[arg-type]
    outcome = FioOutcome(RESULT, workload, wall_s=wall_s)
    values = fio_values(outcome, wall=wall)
    stats = RESULT.read if rw == "randread" else RESULT.write  # a job that writes is judged by its writes
    assert set(values) <= set(METRICS)
    assert values["bw"] == stats.bytes_per_s / 2**20 and values["iops"] == stats.iops
    assert values["runtime"] == stats.runtime_ms / 1000 and values["wall"] == wall
    if wall_s is None:
        assert math.isnan(values["overhead"]) and math.isnan(fio_overhead(outcome))
    else:
        assert values["overhead"] == wall - wall_s
        assert fio_overhead(outcome) == wall_s - stats.runtime_ms / 1000 - ramp_s
