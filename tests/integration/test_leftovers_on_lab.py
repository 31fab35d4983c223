"""On the lab: a fault left by a SIGKILLed run blocks the next run; with
``--clean-leftovers`` preflight removes it, checks the interface is back to the root recorded
before the fault, and the run goes on with the removal in its JUnit report."""

from __future__ import annotations

import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.bench.killtrial import node_leftovers
from harness.cli import main
from harness.inventory import Inventory
from harness.plugin.leftovers import LEFTOVERS_PROPERTY
from harness.remote.pool import ConnectionPool
from harness.runfiles.runid import new_run_id

from .conftest import LAB_INVENTORY, ROOT

pytestmark = [pytest.mark.lab]

# a run that applies a fault on a1's replication path toward a2 (5 minutes' dead-man), says
# so, and waits to be killed
_KILLED_RUN = """
import sys, time
from pathlib import Path
from harness.cli import main
from harness.remote.pool import ConnectionPool
from harness.impair.apply import Impairer
from harness.impair.profile import NetemProfile
from harness.inventory import load_inventory
from harness.runfiles.ledger import Ledger

inv = load_inventory(Path(sys.argv[1]))
pool = ConnectionPool(inv.ssh_specs())
impairer = Impairer(sys.argv[2], Ledger(Path(sys.argv[3]), sys.argv[2]))
impairer.apply(pool.get("a1"), iface=inv.nodes["a1"].replication.iface, peer_ip=str(inv.nodes["a2"].replication.ip),
               profile=NetemProfile.from_text("left", delay="5ms"), hold_s=300, role="primary",
               port=inv.pairs["single-az"].shaped_port())
print("applied", flush=True)
time.sleep(600)
"""


def _scenario(reports: Path, log: Path, *extra: str) -> int:
    argv = [
        sys.executable, "-m", "pytest", "scenarios/test_replicated_write.py", "-k", "single-az-write-4k-nj1-qd1",
        "--inventory", str(LAB_INVENTORY), "--reports", str(reports), "--run-id", new_run_id(), "--no-predict",
        "--profile", "quick", "-p", "no:cacheprovider", "-q", *extra,
    ]  # fmt: skip
    with log.open("wb") as out:
        return subprocess.run(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, timeout=300, check=False).returncode


def test_a_killed_runs_fault_blocks_the_next_run_until_cleaned(lab_inventory: Inventory, tmp_path: Path) -> None:
    killed_id = new_run_id()
    killed = subprocess.Popen(
        [sys.executable, "-c", _KILLED_RUN, str(LAB_INVENTORY), killed_id, str(tmp_path / "ledger.ndjson")],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    assert killed.stdout is not None
    line = killed.stdout.readline()
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=30)
    assert line.strip() == b"applied", line + killed.stdout.read()
    pool = ConnectionPool(lab_inventory.ssh_specs())
    try:
        left = node_leftovers(lab_inventory, pool, ["a1"])
        assert any(f"fault (run {killed_id})" in x for x in left), left

        # a run without the flag is refused by preflight, and leaves the fault as it was
        refused_log = tmp_path / "refused.log"
        assert _scenario(tmp_path / "r1", refused_log) == 3, refused_log.read_text()
        said = refused_log.read_text()
        assert "preflight refused the run" in said and f"fault (run {killed_id})" in said, said
        assert "--clean-leftovers" in said
        assert node_leftovers(lab_inventory, pool, ["a1"]) == left

        # with the flag: removed, the pre-state checked, the run goes on and its JUnit says so
        junit = tmp_path / "junit.xml"
        cleaned_log = tmp_path / "cleaned.log"
        rc = _scenario(tmp_path / "r2", cleaned_log, "--clean-leftovers", "--junitxml", str(junit))
        assert rc == 0, cleaned_log.read_text()
        properties = {p.get("name"): p.get("value", "") for p in ET.parse(junit).getroot().iter("property")}
        removed = properties.get(LEFTOVERS_PROPERTY, "")
        print(f"\n{LEFTOVERS_PROPERTY} = {removed}")
        assert f"removed a1: fault (run {killed_id})" in removed
        assert "vec1 restored to the default root pfifo_fast 0: root recorded before the fault" in removed
        assert "preflight found and removed" in cleaned_log.read_text()
        assert node_leftovers(lab_inventory, pool, sorted(lab_inventory.nodes)) == []
    finally:
        # whatever happened above, the fault must not outlive the test
        main(["cleanup", "--inventory", str(LAB_INVENTORY), "--run-id", killed_id])
        pool.close_all()
