"""A typo'd device that does not exist is refused on the node and never created: fio would
otherwise create a regular file under /dev and measure the page cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cell import CellRunner, CellSpec
from harness.errors import RefusedError
from harness.fio.profiles import PROFILES
from harness.fio.workloads import for_profile, write_job
from harness.inventory import Inventory

pytestmark = [pytest.mark.lab]


def test_an_absent_drbd_device_is_refused_and_nothing_appears_under_dev(
    lab_inventory: Inventory, tmp_path: Path
) -> None:
    pair = lab_inventory.pairs["single-az"].model_copy(update={"device": "/dev/drbd10"})
    typo = lab_inventory.model_copy(update={"pairs": {**lab_inventory.pairs, "single-az": pair}})
    runner = CellRunner.standalone(typo, tmp_path, health_timeout_s=8.0)
    a1 = runner.pool.get("a1")
    try:
        before = a1.run(["sh", "-c", "ls /tmp"], timeout=30).stdout
        with pytest.raises(RefusedError, match=r"/dev/drbd10"):
            runner.run(CellSpec("itest", "single-az", for_profile(PROFILES["quick"], write_job("randwrite", 4096))))
        assert a1.run(["test", "-e", "/dev/drbd10"], timeout=30, check=False).exit_code != 0, (
            "something created /dev/drbd10"
        )
        assert a1.run(["pgrep", "-x", "fio"], timeout=30, check=False).stdout == ""
        # the probe's batch left no temporary file behind (an `exit` inside the batch would leave one)
        assert a1.run(["sh", "-c", "ls /tmp"], timeout=30).stdout == before
    finally:
        runner.pool.close_all()
