"""Every example inventory the project ships collects the real scenarios, as a new user first
runs them (`pytest scenarios/ --inventory inventories/multi_az.yaml`), even where no node has
scratch devices."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(
    p.relative_to(ROOT) for p in [*ROOT.glob("inventories/*.yaml"), ROOT / "inventories/ansible/mapping.yaml"]
)


def _collect(inventory: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "pytest", "scenarios/", "--inventory", inventory, "--collect-only", "-q"]
    argv += ["-p", "no:cacheprovider", "--reports", str(tmp_path)]
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False, timeout=120)


@pytest.mark.parametrize("inventory", [str(p) for p in EXAMPLES])
def test_example_inventory_collects_every_scenario(inventory: str, tmp_path: Path) -> None:
    res = _collect(inventory, tmp_path)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert "INTERNALERROR" not in res.stdout + res.stderr
    scenario_files = {p.name for p in (ROOT / "scenarios").glob("test_*.py")}
    collected = {line.split("::")[0].split("/")[-1] for line in res.stdout.splitlines() if "::" in line}
    assert collected == scenario_files


def test_an_inventory_without_scratch_devices_collects_one_placeholder_per_disk_study(tmp_path: Path) -> None:
    """The placeholder is skipped with the reason when run (the lab-as-a-cloud-cluster
    integration test reads that reason from JUnit); here: it collects, and only it."""
    res = _collect("inventories/multi_az.yaml", tmp_path)
    disk = [line for line in res.stdout.splitlines() if "test_disk_baseline.py::" in line]
    assert disk and all("[no-disk-node" in line for line in disk), res.stdout[-2000:]
