"""Measurement cells on the real lab: impairment, fio, DRBD, guards, bad input, cleanup.

Every test ends with the nodes as they started: default root qdisc on the replication
interface, no fio, no dead-man switch left, DRBD Connected/UpToDate.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.cell import CellRunner, CellSpec
from harness.drbd.errors import DrbdNotReady
from harness.errors import ConfigError, ConnectionLost, RefusedError
from harness.fio.job import FioFailed
from harness.fio.profiles import PROFILES
from harness.fio.workloads import for_profile, write_job
from harness.impair.apply import Impairer
from harness.impair.profile import NetemProfile
from harness.impair.qdiscs import parse_qdiscs
from harness.impair.readback import RootClass, classify_root
from harness.inventory import Inventory, parse_inventory
from harness.probes.rtt import parse_ping, ping_argv
from harness.remote import Runner
from harness.runfiles.ledger import Ledger
from harness.safety.device import evaluate_drbd_target, probe_device

from .conftest import LAB_INVENTORY, ROOT, make_runner

pytestmark = [pytest.mark.lab]

QUICK_4K = for_profile(PROFILES["quick"], write_job("randwrite", 4096))


def root_class(node: Runner) -> RootClass:
    return classify_root(parse_qdiscs(node.run(["tc", "-j", "qdisc", "show", "dev", "vec1"], timeout=10).stdout))


def leftovers(node: Runner) -> dict[str, str]:
    """What a harness run could leave on a node."""
    res = node.run_script(
        "pgrep -x fio; echo ---; pgrep -f 'sleep [0-9]+; if \\[ -e /run/harness' ; echo ---; "
        "ls /run/harness/*/faults/ 2>/dev/null | grep -c json; true",
        timeout=15,
        check=False,
    )
    fio, deadman, faults = (part.strip() for part in res.stdout.split("---"))
    return {"root": str(root_class(node)), "fio": fio, "deadman": deadman, "faults": faults}


CLEAN = {"root": "default", "fio": "", "deadman": "", "faults": "0"}


def assert_pair_clean(runner: CellRunner, pair: str) -> None:
    p = runner.inventory.pairs[pair]
    for name in (p.primary, p.secondary):
        assert leftovers(runner.pool.get(name)) == CLEAN, name


def test_impaired_cell_measures_the_model_and_leaves_nothing(cell_runner: CellRunner, tmp_path: Path) -> None:
    spec = CellSpec("itest", "single-az", QUICK_4K, impairment=NetemProfile.from_rtt("rtt4ms", 0.004))
    result = cell_runner.run(spec)
    assert result.validity.verdict == "pass", result.validity.reason
    # 2 ms added on each node's egress: the path RTT grew by about 4 ms
    assert 3.6 <= result.rtt.median_ms <= 5.5
    # QD1 protocol C: one round trip plus a write per I/O
    assert 0.5 <= result.iops * result.rtt.median_ms / 1000 <= 1.1
    samples = [json.loads(line) for line in (tmp_path / "samples.ndjson").read_text().splitlines()]
    assert {s["metric"] for s in samples} >= {"bw", "iops", "clat_p99", "rtt", "overhead"}
    meta = samples[0]["metadata"]
    assert meta["impairment_detail"]["delay_s"] == pytest.approx(0.002)
    assert meta["fio_version"].startswith("fio-3") and meta["drbd_version"] == "8.4.11"
    events = [e["event"] for e in Ledger(tmp_path / "ledger.ndjson", "x").entries()]
    assert events.index("impair-intent") < events.index("impair-applied") < events.index("fio-start")
    assert events.count("impair-cleared") == 2
    assert_pair_clean(cell_runner, "single-az")


def test_impairment_touches_only_the_replication_path_to_the_peer(cell_runner: CellRunner) -> None:
    a1 = cell_runner.pool.get("a1")
    inv = cell_runner.inventory
    impairer = Impairer(cell_runner.run_id, cell_runner.ledger)
    profile = NetemProfile.from_text("slow", delay="20ms", direction="primary")
    applied = impairer.apply(
        a1, iface="vec1", peer_ip=inv.nodes["a2"].replication.ip, profile=profile, hold_s=60, role="primary"
    )
    assert applied is not None
    try:
        to_peer = parse_ping(a1.run(ping_argv(inv.nodes["a2"].replication.ip, count=5), timeout=20).stdout)
        to_other = parse_ping(a1.run(ping_argv(inv.nodes["a3"].replication.ip, count=5), timeout=20).stdout)
        to_peer_ssh = parse_ping(a1.run(ping_argv(inv.nodes["a2"].ssh.host, count=5), timeout=20).stdout)
        start = time.monotonic()
        a1.run(["true"], timeout=10)
        ssh_round_trip = time.monotonic() - start
    finally:
        impairer.clear(a1, applied)
    assert to_peer.min_ms >= 20
    assert to_other.median_ms < 5 and to_peer_ssh.median_ms < 5
    assert ssh_round_trip < 2
    assert leftovers(a1) == CLEAN


def test_dead_man_switch_removes_a_fault_the_harness_forgot(cell_runner: CellRunner) -> None:
    a2 = cell_runner.pool.get("a2")
    impairer = Impairer(cell_runner.run_id, cell_runner.ledger)
    profile = NetemProfile.from_text("forgotten", delay="1ms")
    impairer.apply(a2, iface="vec1", peer_ip="10.213.1.11", profile=profile, hold_s=3, role="secondary")
    assert root_class(a2) is RootClass.HARNESS_OWNED
    deadline = time.monotonic() + 15
    while root_class(a2) is not RootClass.DEFAULT and time.monotonic() < deadline:
        time.sleep(0.5)
    assert leftovers(a2) == CLEAN


def test_foreign_root_qdisc_is_refused_and_left_alone(cell_runner: CellRunner) -> None:
    a2 = cell_runner.pool.get("a2")
    a2.run(["tc", "qdisc", "add", "dev", "vec1", "root", "handle", "1:", "htb", "default", "1"], timeout=10)
    try:
        with pytest.raises(RefusedError, match="did not create"):
            cell_runner.run(CellSpec("itest", "single-az", QUICK_4K, impairment=NetemProfile.from_rtt("r", 0.002)))
        assert root_class(a2) is RootClass.FOREIGN
    finally:
        a2.run(["tc", "qdisc", "del", "dev", "vec1", "root"], timeout=10)
    assert_pair_clean(cell_runner, "single-az")


def test_unreachable_node_fails_clearly_before_any_change(lab_inventory: Inventory, tmp_path: Path) -> None:
    text = LAB_INVENTORY.read_text().replace("host: 10.213.0.21}", "host: 10.213.0.99, connect_timeout: 3s}")
    inventory = parse_inventory(text)
    runner = make_runner(inventory, tmp_path)
    try:
        with pytest.raises(ConnectionLost, match=r"b1: SSH connection lost or refused"):
            runner.run(CellSpec("itest", "multi-az", QUICK_4K, impairment=NetemProfile.from_rtt("r", 0.002)))
        assert not (tmp_path / "ledger.ndjson").exists()  # nothing was changed anywhere
        assert leftovers(runner.pool.get("a3")) == CLEAN
    finally:
        runner.pool.close_all()


def test_resource_not_connected_is_refused(cell_runner: CellRunner) -> None:
    replication = cell_runner.replication("single-az", "a1")
    replication.disconnect()
    try:
        with pytest.raises(DrbdNotReady, match=r"a1: DRBD resource single-az not healthy .*StandAlone"):
            cell_runner.run(CellSpec("itest", "single-az", QUICK_4K))
    finally:
        replication.connect()
        replication.wait_healthy(60)
    assert_pair_clean(cell_runner, "single-az")


def test_missing_fio_is_a_clear_error_and_the_impairment_is_removed(cell_runner: CellRunner) -> None:
    a1 = cell_runner.pool.get("a1")
    a1.run(["mount", "--bind", "/bin/false", "/usr/bin/fio"], timeout=10)
    try:
        with pytest.raises(FioFailed, match=r"a1: fio for single-az-randwrite-4k-nj1-qd1-rtt2ms .*exited 1"):
            cell_runner.run(CellSpec("itest", "single-az", QUICK_4K, impairment=NetemProfile.from_rtt("rtt2ms", 0.002)))
    finally:
        a1.run(["umount", "/usr/bin/fio"], timeout=10)
    assert_pair_clean(cell_runner, "single-az")


def test_device_guard_refuses_backing_disk_and_filesystems(cell_runner: CellRunner) -> None:
    a1 = cell_runner.pool.get("a1")
    replication = cell_runner.replication("single-az", "a1")
    backing = probe_device(a1, "/dev/ubda", replication)
    problems = evaluate_drbd_target(backing, expected_device="/dev/drbd0", needed_bytes=1)
    assert any("backing device" in p for p in problems) and any("held by drbd0" in p for p in problems)
    # a scratch disk with a mounted filesystem: everything about it is refused
    a1.run(["mkfs.ext4", "-q", "-F", "/dev/ubdc"], timeout=120)
    a1.run_script("mkdir -p /mnt/itest && mount /dev/ubdc /mnt/itest", timeout=60)
    try:
        facts = probe_device(a1, "/dev/ubdc", replication)
        problems = evaluate_drbd_target(facts, expected_device="/dev/drbd0", needed_bytes=1)
        assert any("mounted at /mnt/itest" in p for p in problems)
        assert any("TYPE=ext4" in p for p in problems)
        assert any("not the DRBD device" in p for p in problems)
    finally:
        # the test's own filesystem on the lab's own scratch disk
        a1.run_script("umount /mnt/itest; wipefs -q -a /dev/ubdc", timeout=60)
    good = probe_device(a1, "/dev/drbd0", replication)
    assert evaluate_drbd_target(good, expected_device="/dev/drbd0", needed_bytes=64 << 20) == []
    assert evaluate_drbd_target(good, expected_device="/dev/drbd0", needed_bytes=8 << 30)[0].startswith("is 2147")


def test_pytest_scenarios_write_junit_properties_and_comparison(default_lab: object, tmp_path: Path) -> None:
    """The user's command, as a subprocess: JUnit with metrics, tables with ratios, latest link."""
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "scenarios/test_replicated_write.py",
            "-k",
            "randwrite-4k-nj1",
            # the pairs' calibrations run side by side, as in `./run scenarios`
            "-n",
            "2",
            "--reports",
            str(tmp_path),
            "-p",
            "no:cacheprovider",
            "-q",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert "harness: files (tables, bounds, report)" in res.stdout
    run = (tmp_path / "latest").resolve()
    junit = ET.parse(run / "junit.xml")
    cases = {  # the same names as without xdist: no "@<group>" (harness.report.junitcases)
        tc.get("name", ""): {p.get("name", ""): p.get("value", "") for p in tc.iter("property")}
        for tc in junit.iter("testcase")
    }
    pairs = {"single-az", "multi-az", "single-az-md-nbd", "multi-az-md-nbd"}  # DRBD and md-nbd
    assert set(cases) == {f"test_replicated_write[{pair}-randwrite-4k-nj1-qd1]" for pair in pairs}
    disturbed: dict[str, str] = {}
    for name, props in cases.items():
        assert float(props["iops"]) > 0 and float(props["bw_mib_s"]) > 0 and props["verdict"] == "pass"
        assert props["kernel"] and props["drbd_version"] == "8.4.11"
        # the unimpaired cell's RTT comes from the probe in fio's start round trip
        assert float(props["rtt_ms"]) > 0
        # every cell is predicted from its pair's calibration, so its model ratio is recorded
        assert float(props["predicted_bw_mib_s"]) > 0 and float(props["model_ratio"]) > 0 and props["bottleneck"]
        # and certified: both nodes (no PSI in the guests: the run queue), the path, the lab host
        primary = "a1" if "single-az" in props["pair"] else "a3"
        # a busy host makes a cell disturbed, never failed; the reason names the figure over its bound
        assert props["validity"] in {"clean", "disturbed"}, props.get("validity_reason")
        if props["validity"] == "disturbed":
            assert " > " in props["validity_reason"], props["validity_reason"]
            disturbed[name] = props["validity_reason"]
        assert f"validity.{primary}.runnable_per_cpu" in props and "validity.host.cpu_pressure_pct" in props
        assert props.get("validity_unread") is None
    series = [json.loads(line) for line in (run / "series.ndjson").read_text().splitlines()]
    measured = [s for s in series if s["scenario"] == "replicated_write"]
    assert {s["pair"] for s in measured} == pairs
    assert all(len(s["bw_mib_s"]) >= 3 and max(s["bw_mib_s"]) > 0 for s in measured)
    comparison = (run / "comparison.md").read_text()
    assert "multi-az/single-az" in comparison and "randwrite-4k-nj1-qd1" in comparison
    assert "| single-az-md-nbd | md-nbd" in comparison  # the Pairs table names the product
    counts = f"{len(pairs) - len(disturbed)} certified clean, {len(disturbed)} disturbed"
    assert f"- **validity**: {counts}" in comparison, disturbed
    assert (run / "comparison.csv").exists() and (run / "report.html").exists()


@pytest.mark.parametrize("pair_name", ["single-az", "single-az-md-nbd"])
def test_local_disk_cells_in_a_series_share_one_disconnection(cell_runner: CellRunner, pair_name: str) -> None:
    pair = pair_name
    small = CellSpec("itest", pair, QUICK_4K, mode="disconnected")
    big = CellSpec(
        "itest", pair, for_profile(PROFILES["quick"], write_job("write", 1 << 20, iodepth=16)), "disconnected"
    )
    results = cell_runner.run_series([small, big])
    assert [r.spec for r in results] == [small, big]
    assert all(r.validity.verdict == "pass" for r in results), [r.validity.reason for r in results]
    # the local disk alone: far faster than one replicated round trip would allow at QD1
    assert results[0].iops > 2000 and results[1].bw_mib_s > 0
    events = [e["event"] for e in cell_runner.ledger.entries()]
    cuts = [e for e in events if e.endswith(("-disconnect", "-connect"))]
    assert len(cuts) == 2 and cuts[0].endswith("-disconnect"), events
    # the second cell's fio started after the first's ended, both inside the one cut
    fio = [i for i, e in enumerate(events) if e in ("fio-start", "fio-exit")]
    assert len(fio) == 4 and events.index(cuts[0]) < fio[0] and fio[-1] < events.index(cuts[1])
    # and the pair is healthy and clean again
    assert cell_runner.replication(pair, cell_runner.inventory.pairs[pair].primary).state().healthy
    assert_pair_clean(cell_runner, pair)


def test_a_series_mixing_modes_or_with_an_impairment_is_refused_before_any_change(cell_runner: CellRunner) -> None:
    local = CellSpec("itest", "single-az", QUICK_4K, mode="disconnected")
    with pytest.raises(ConfigError, match="one pair and one mode"):
        cell_runner.run_series([local, CellSpec("itest", "single-az", QUICK_4K)])
    impaired = CellSpec("itest", "single-az", QUICK_4K, impairment=NetemProfile.from_rtt("rtt4ms", 0.004))
    with pytest.raises(ConfigError, match="no impairment"):
        cell_runner.run_series([impaired, impaired])
    assert cell_runner.ledger.entries() == []
