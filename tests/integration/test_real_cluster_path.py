"""The scenario matrix on the lab posing as a cloud cluster.

The lab's own inventory (root, a ``lab:`` section, scratch disks everywhere, both placements)
hides every path a real cluster takes.  Here the running lab is reached through the
inventories ``harness lab inventory`` writes: a non-root user with ``sudo -n``, the key from
``HARNESS_SSH_KEY``, a pinned ``known_hosts``, AWS instance and volume types, no ``lab:``
section, and the shapes the examples have.  ``pytest scenarios/`` runs as a user runs it,
inside the lab's namespace (as a CI runner sits in the cluster's network), and must pass with
every cell either measured or skipped for a reason that belongs to the inventory's shape.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.cell.roles import restore_pair_roles
from harness.cli import main as harness_main
from harness.lab.lifecycle import Lab
from harness.lab.posing import KEY_ENV
from harness.remote.pool import ConnectionPool
from harness.replication import replication_for

ROOT = Path(__file__).resolve().parents[2]
LAB_INVENTORY = ROOT / "inventories" / "lab.yaml"

# Why a cell of a cloud-shaped inventory may be skipped: the shape has no such part, or the
# harness does not change a real cluster's DRBD configuration.
EXPECTED_SKIPS = re.compile(
    r"no node lists scratch_devices|has no same-az pair|has no cross-az pair"
    r"|a real cluster's configuration is not changed"
    # the quorum scenarios need a DRBD 9 resource of more nodes, which these posed inventories lack
    r"|has no pair whose DRBD 9 resource has"
    # the durability trials cut links and switch protocols, which a real cluster is never asked
    r"|the durability trials cut links and switch protocols: the embedded lab only"
)


@dataclass(frozen=True)
class Outcome:
    passed: list[str]
    failed: list[str]
    skipped: dict[str, str]
    output: str
    failures: dict[str, str]

    def report(self) -> str:
        """Every failed cell's own message first: the run's tail alone is cut before them."""
        why = "\n".join(f"{name}: {text[:1500]}" for name, text in self.failures.items())
        return f"{why}\n--- run output (tail) ---\n{self.output}"


def _posing_inventory(lab: Lab, shape: str, tmp_path: Path) -> Path:
    path = tmp_path / f"{shape}.yaml"
    assert harness_main(["lab", "inventory", "--inventory", str(LAB_INVENTORY), "--shape", shape, "-o", str(path)]) == 0
    return path


def _run_scenarios(lab: Lab, inventory: Path, reports: Path, *args: str, timeout: float = 2400) -> Outcome:
    junit = reports.parent / f"{reports.name}-junit.xml"
    argv = ["ip", "netns", "exec", lab.spec.netns, sys.executable, "-m", "pytest", "scenarios/"]
    argv += ["--inventory", str(inventory), "--reports", str(reports), "--junitxml", str(junit)]
    argv += ["--profile", "quick", "-p", "no:cacheprovider", "-q", "-rs", *args]
    env = {**os.environ, KEY_ENV: str(lab.key_path)}
    res = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=timeout)
    output = res.stdout[-6000:] + res.stderr[-3000:]
    assert junit.exists(), output
    passed, failed, skipped, failures = [], [], {}, {}
    for case in ET.parse(junit).iter("testcase"):
        name = case.get("name", "")  # the same under xdist: the harness drops its "@<group>"
        skip = case.find("skipped")
        problem = case.find("failure") if case.find("failure") is not None else case.find("error")
        if problem is not None:
            failed.append(name)
            failures[name] = f"{problem.get('message', '')}\n{problem.text or ''}"
        elif skip is not None:
            skipped[name] = skip.get("message", "")
        else:
            passed.append(name)
    assert res.returncode == 0 or failed, f"exit {res.returncode} without a failed cell:\n{output}"
    return Outcome(passed, failed, skipped, output, failures)


def _restore_lab_roles(lab: Lab) -> None:
    """A posed inventory that leaves out some of the lab's pairs cannot restore them after its
    failover crashed their node (a real cluster's resources outside the inventory are in the
    same place): the lab's own inventory puts every pair back before the next test."""
    pool = ConnectionPool(lab.inventory.ssh_specs())
    try:
        for pair in lab.inventory.pairs.values():
            sides = [
                replication_for(pair, pool.get(n), nodes=lab.inventory.nodes) for n in (pair.primary, pair.secondary)
            ]
            for side in sides:
                side.ensure_up()
            restore_pair_roles(*sides)
    finally:
        pool.close_all()


def _unexpected_skips(outcome: Outcome) -> dict[str, str]:
    return {name: why for name, why in outcome.skipped.items() if not EXPECTED_SKIPS.search(why)}


@pytest.mark.lab
def test_the_whole_matrix_passes_on_a_multi_az_cloud_inventory(default_lab: Lab, tmp_path: Path) -> None:
    """Both pairs, sudo user, no scratch devices: every replicated scenario, the calibration,
    the sysrq failover (protocol C, the inventory's) and the partitions run, and online verify
    finds both replicas of each pair identical at the end; the disk studies say why not."""
    inventory = _posing_inventory(default_lab, "multi-az", tmp_path)
    try:
        outcome = _run_scenarios(
            default_lab, inventory, tmp_path / "reports", "--allow-disruptive", "--verify-after=256MiB", "-n", "2"
        )
    finally:  # its failover crashed a1, which is the md-nbd pair's primary too
        _restore_lab_roles(default_lab)
    # a failed test or teardown: --verify-after fails the last test's teardown when replicas differ
    assert outcome.failed == [], outcome.report()
    assert _unexpected_skips(outcome) == {}, outcome.output
    ran = " ".join(outcome.passed)
    for scenario in ("test_replicated_write", "test_stack_baseline", "test_latency_sweep", "test_bandwidth_cap"):
        assert f"{scenario}[single-az" in ran and f"{scenario}[multi-az" in ran, scenario
    assert "test_failover_integrity[single-az-protocol-C]" in outcome.passed
    for cut in ("below-timeout", "above-timeout"):
        assert f"test_partition[single-az-{cut}]" in outcome.passed and f"test_partition[multi-az-{cut}]" in ran
    disk = [n for n, why in outcome.skipped.items() if "scratch_devices" in why]
    assert {n.split("[")[0] for n in disk} >= {"test_disk_baseline", "test_raid0", "test_filesystem"}


@pytest.mark.lab
def test_a_cross_az_only_inventory_runs_and_skips_same_az_scenarios(default_lab: Lab, tmp_path: Path) -> None:
    inventory = _posing_inventory(default_lab, "cross-az-only", tmp_path)
    outcome = _run_scenarios(
        default_lab,
        inventory,
        tmp_path / "reports",
        "-k",
        # "nj1-qd1" alone would also pick every nj1-qd16 cell
        "replicated_write and 4k-nj1-qd1 or failover or disk_baseline",
        "--no-predict",
        "--allow-disruptive",
    )
    assert outcome.failed == [], outcome.report()
    assert _unexpected_skips(outcome) == {}, outcome.output
    assert "test_replicated_write[multi-az-randwrite-4k-nj1-qd1]" in outcome.passed
    assert any("has no same-az pair" in why for why in outcome.skipped.values())  # the failover scenario


@pytest.mark.lab
def test_a_same_az_only_inventory_runs_the_disk_studies_and_both_products_through_sudo(
    default_lab: Lab, tmp_path: Path
) -> None:
    inventory = _posing_inventory(default_lab, "same-az-only", tmp_path)
    outcome = _run_scenarios(
        default_lab,
        inventory,
        tmp_path / "reports",
        "-k",
        "replicated_write and 4k-nj1-qd1 or disk_baseline or raid0 or failover",
        "--no-predict",
        "--allow-disruptive",
    )
    assert outcome.failed == [], outcome.report()
    assert _unexpected_skips(outcome) == {}, outcome.output
    assert "test_replicated_write[single-az-write-4k-nj1-qd1]" in outcome.passed
    # DataKeeper's architecture through sudo, and a sysrq crash of a node primary of a DRBD
    # resource and an md-nbd array at once: each failover restores the other pair's roles
    assert "test_replicated_write[single-az-md-nbd-write-4k-nj1-qd1]" in outcome.passed
    assert {
        "test_failover_integrity[single-az-protocol-C]",
        "test_failover_integrity[single-az-md-nbd-protocol-C]",
    } <= set(outcome.passed)
    assert any(n.startswith("test_disk_baseline[a1-") for n in outcome.passed)
    assert any(n.startswith("test_raid0[a1-") for n in outcome.passed)
