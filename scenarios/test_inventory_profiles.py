"""The inventory's own network profiles and workloads, on every pair.

``network_profiles:`` in the inventory (delay, jitter, loss, rate on the replication path)
each run with the study's 4k random write, 8 jobs; ``workloads:`` (any fio job the inventory
defines, e.g. a customer's block-size range) each run unimpaired.  Bounds as for any cell.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.cell import CellResult, CellSpec
from harness.fio.spec import WorkloadSpec
from harness.fio.workloads import for_profile, write_job
from harness.impair.profile import NetemProfile
from harness.plugin.session import HarnessSession


def test_network_profile(
    harness_session: HarnessSession, measure: Callable[..., CellResult], pair: str, network_profile: NetemProfile
) -> None:
    workload = for_profile(harness_session.profile, write_job("randwrite", 4096, numjobs=8))
    result = measure(CellSpec("network_profile", pair, workload, impairment=network_profile))
    assert result.rtt.median_ms >= network_profile.added_rtt_s * 1e3 * 0.9


def test_inventory_workload(measure: Callable[..., CellResult], pair: str, inventory_workload: WorkloadSpec) -> None:
    result = measure(CellSpec("inventory_workload", pair, inventory_workload))
    assert result.metadata["workload"] == inventory_workload.id()
