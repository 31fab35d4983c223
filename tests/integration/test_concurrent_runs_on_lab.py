"""Two runs against one cluster: the second is refused at once naming the first, changes
nothing, and the first finishes undisturbed."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.bench.killtrial import node_leftovers
from harness.inventory import Inventory
from harness.remote.pool import ConnectionPool
from harness.runfiles.rundir import RunDir
from harness.runfiles.runid import new_run_id

from .conftest import LAB_INVENTORY, ROOT

pytestmark = [pytest.mark.lab]


def _scenario(run_id: str, reports: Path, log: Path) -> subprocess.Popen[bytes]:
    argv = [
        sys.executable, "-m", "pytest", "scenarios/test_replicated_write.py", "-k", "single-az-write-4k-nj1-qd1",
        "--inventory", str(LAB_INVENTORY), "--reports", str(reports), "--run-id", run_id, "--no-predict",
        "--profile", "quick", "-p", "no:cacheprovider", "-q",
    ]  # fmt: skip
    return subprocess.Popen(argv, cwd=ROOT, stdout=log.open("wb"), stderr=subprocess.STDOUT)


def test_a_second_run_is_refused_naming_the_first(lab_inventory: Inventory, tmp_path: Path) -> None:
    first_id, second_id = new_run_id(), new_run_id()
    first = _scenario(first_id, tmp_path / "a", tmp_path / "a.log")
    try:
        ledger = RunDir.of(tmp_path / "a", first_id).ledger_ndjson
        deadline = time.monotonic() + 120
        while not (ledger.exists() and "fio-start" in ledger.read_text()):
            assert first.poll() is None, (tmp_path / "a.log").read_text()
            assert time.monotonic() < deadline, "the first run never started fio"
            time.sleep(0.1)
        second = _scenario(second_id, tmp_path / "b", tmp_path / "b.log")
        assert second.wait(timeout=120) != 0
        said = (tmp_path / "b.log").read_text()
        # preflight sees the first run's lock on every node and refuses before any change
        assert f"held: run {first_id}" in said and "nothing was changed" in said, said
        # the refused run changed nothing: it started no fio and applied no fault
        second_ledger = RunDir.of(tmp_path / "b", second_id).ledger_ndjson
        events = second_ledger.read_text() if second_ledger.exists() else ""
        assert "fio-start" not in events and "impair-intent" not in events
        assert first.wait(timeout=180) == 0, (tmp_path / "a.log").read_text()
    finally:
        if first.poll() is None:
            first.send_signal(signal.SIGINT)  # its teardown releases the lock
            try:
                first.wait(timeout=60)
            except subprocess.TimeoutExpired:
                first.kill()
    pool = ConnectionPool(lab_inventory.ssh_specs())
    try:
        assert node_leftovers(lab_inventory, pool, sorted(lab_inventory.nodes)) == []
    finally:
        pool.close_all()
