"""Integration fixtures: the default embedded lab (inventories/lab.yaml), booted once per
session unless already up (then reused and left up), and a cell runner writing to tmp."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.cell import CellRunner
from harness.inventory import Inventory, load_inventory
from harness.lab.lifecycle import Lab

ROOT = Path(__file__).resolve().parents[2]
# HARNESS_LAB_INVENTORY points the lab tests at another lab instance (its own namespace and
# state directory), so several people can run them on one machine side by side.
LAB_INVENTORY = Path(os.environ.get("HARNESS_LAB_INVENTORY") or ROOT / "inventories" / "lab.yaml")


@pytest.fixture(scope="session")
def default_lab() -> Iterator[Lab]:
    if os.geteuid() != 0:
        pytest.fail("lab integration tests need root (run ./run tests as root)")
    lab = Lab(load_inventory(LAB_INVENTORY), LAB_INVENTORY, progress=print)
    state = lab.state()
    booted = False
    if state is None or state.phase != "up":
        lab.down()
        lab.up()
        booted = True
    yield lab
    if booted:
        assert lab.down() == []


@pytest.fixture
def lab_inventory(default_lab: Lab) -> Inventory:
    return default_lab.inventory


def make_runner(inventory: Inventory, tmp: Path, **kwargs: Any) -> CellRunner:
    return CellRunner.standalone(inventory, tmp, **kwargs)


@pytest.fixture
def cell_runner(lab_inventory: Inventory, tmp_path: Path) -> Iterator[CellRunner]:
    runner = make_runner(lab_inventory, tmp_path, health_timeout_s=8.0)
    yield runner
    runner.pool.close_all()
