"""fio on a frozen device: the test suspends I/O on the lab's scratch
resource once fio runs (what fencing or lost quorum do to a real one).  The cell must end at
its deadline with an error that names the suspended I/O, and the harness must never resume it:
only the test does, afterwards."""

from __future__ import annotations

import re
import threading
import time

import pytest

from harness.cell import CellRunner, CellSpec
from harness.fio.job import FioFailed
from harness.fio.spec import WorkloadSpec
from harness.runfiles.ledger import Ledger

pytestmark = [pytest.mark.lab]

SHORT = WorkloadSpec(name="frozen", rw="randwrite", bs=4096, size=16 << 20, runtime_s=2, time_based=True)


def test_a_cell_on_a_suspended_device_ends_at_its_deadline_naming_it(cell_runner: CellRunner) -> None:
    a1 = cell_runner.pool.get("a1")
    outcome: dict[str, BaseException] = {}

    def run() -> None:
        try:
            cell_runner.run(CellSpec("itest", "single-az", SHORT))
        except BaseException as exc:  # the test inspects whatever ended the cell
            outcome["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    ledger = Ledger(cell_runner.ledger.path, "x")
    try:
        deadline = time.monotonic() + 60
        while "fio-start" not in [e["event"] for e in ledger.entries()]:
            assert time.monotonic() < deadline, "fio never started"
            time.sleep(0.05)
        a1.run(["drbdadm", "suspend-io", "single-az"], timeout=30)
        worker.join(timeout=180)
        assert not worker.is_alive(), "the cell did not end at its deadline"
        error = outcome.get("error")
        assert isinstance(error, FioFailed), error
        assert "I/O suspended" in str(error) and "a1 then:" in str(error), error
        # the harness resumed nothing: the device is still frozen until the test says so
        now = a1.run(["drbdsetup", "events2", "--now", "single-az"], timeout=30).stdout
        assert re.search(r"^exists resource .* suspended:(?!no\b)\S+", now, re.MULTILINE), now
    finally:
        a1.run(["drbdadm", "resume-io", "single-az"], timeout=30, check=False)
        worker.join(timeout=60)
        cell_runner.replication("single-az", "a1").wait_healthy(120)
