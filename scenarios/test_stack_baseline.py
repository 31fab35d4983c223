"""Stack baseline: the primary's disk alone (DRBD disconnected), then replicated, per pair.

Read the comparison table's ``repl/disc`` columns: the cost of replication over the local
disk, for a same-AZ and a cross-AZ pair.  LINBIT's guidance is that DRBD itself adds little
(< 3 % throughput, < 1 % latency) over disk + network; what remains is the network round
trip — which is what the cross-AZ column shows.  The inventory's ``replicated_vs_local``
bound is judged at the end of the run.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.cell import CellResult, CellSpec
from harness.fio.spec import WorkloadSpec
from harness.fio.workloads import for_profile, write_job
from harness.plugin.session import HarnessSession

WORKLOADS = [write_job("randwrite", 4096), write_job("write", 1024 * 1024, iodepth=16)]
# `drbdadm disconnect` cuts replication (and, with fencing configured, calls fence-peer): a
# disruptive step, run outside the embedded lab only with --allow-disruptive.
MODES = [pytest.param("disconnected", marks=pytest.mark.disruptive), "replicated"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("workload", WORKLOADS, ids=[w.id() for w in WORKLOADS])
def test_stack_baseline(
    harness_session: HarnessSession,
    measure: Callable[..., CellResult],
    pair: str,
    workload: WorkloadSpec,
    mode: str,
) -> None:
    spec = CellSpec("stack_baseline", pair, for_profile(harness_session.profile, workload), mode=mode)  # type: ignore[arg-type]
    result = measure(spec)
    assert result.metadata["placement"] == (
        "local" if mode == "disconnected" else harness_session.inventory.placement(pair)
    )
