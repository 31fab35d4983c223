"""Replicated writes, single-AZ vs multi-AZ: the DataKeeper study made repeatable.

The study ran ``fio -direct=1 -rw=randwrite|write -bs=4k -numjobs=8`` on a pair in one AZ
and a pair across AZs.  Here every pair of the inventory runs randwrite and write at 4k with
1 and 8 jobs, plus 1 MiB sequential writes for bandwidth; the comparison table puts the
pairs side by side with the cross-AZ / same-AZ ratio.  Bounds come from the inventory.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.cell import CellResult, CellSpec
from harness.fio.spec import WorkloadSpec
from harness.fio.workloads import for_profile, write_job
from harness.plugin.session import HarnessSession

WORKLOADS = [
    write_job("randwrite", 4096, numjobs=1),
    write_job("randwrite", 4096, numjobs=8),
    write_job("write", 4096, numjobs=1),
    write_job("write", 4096, numjobs=8),
    write_job("write", 1024 * 1024, numjobs=1, iodepth=16),
    write_job("write", 1024 * 1024, numjobs=8, iodepth=2),
]


@pytest.mark.parametrize("workload", WORKLOADS, ids=[w.id() for w in WORKLOADS])
def test_replicated_write(
    harness_session: HarnessSession, measure: Callable[..., CellResult], pair: str, workload: WorkloadSpec
) -> None:
    result = measure(CellSpec("replicated_write", pair, for_profile(harness_session.profile, workload)))
    assert result.iops > 0 and result.bw_mib_s > 0
