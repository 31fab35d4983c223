"""Partition and heal: cut the replication path while fio writes, then check what survived.

Two cuts per pair, sized from the resource's own timeouts (DRBD: ``ping-int`` and
``ping-timeout``, read with ``drbdsetup show --show-defaults``):

* **below-timeout** (0.4 × ``ping-int``): writes stall and resume, the connection stays up;
  the longest write is the stall;
* **above-timeout** (2 × (``ping-int`` + ``ping-timeout``) + 2 s): the primary declares the
  peer lost and goes on alone, the peer falls behind; on heal they reconnect and resync.

After either: online verify of the written range finds 0 KiB out of sync, and the peer,
promoted in a switchover, holds every write fio acknowledged (``verify_only`` replay).

``disruptive``: a cut stalls the cluster's writes, and the above-timeout cut disconnects the
resource and forces a resync; outside the embedded lab it runs only with
``--allow-disruptive`` after the pair's configuration audit found nothing risky.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.cell.partition import CUTS, Cut, run_partition
from harness.plugin.session import HarnessSession


@pytest.mark.disruptive
@pytest.mark.parametrize("cut", CUTS)
def test_partition(
    harness_session: HarnessSession, pair: str, cut: Cut, record_property: Any, harness_repeat: int
) -> None:
    result = run_partition(harness_session.runner, pair, cut=cut, repeat=harness_repeat)
    for key, value in result.properties():
        record_property(key, value)
    record_property("summary", result.metadata["summary"])
    if cut == "below-timeout":
        assert not result.disconnected, f"{result.cut_s:.2f} s cut below the timeouts disconnected the peer"
    else:
        assert result.disconnected, f"{result.cut_s:.2f} s cut above the timeouts never disconnected the peer"
        assert result.behind_kib > 0, "the primary did not go on writing alone while cut off"
        assert result.resync_s is not None
    assert result.verify_oos_kib == 0, f"online verify found {result.verify_oos_kib} KiB out of sync: {result.notes}"
    assert result.verify_ok, f"the promoted peer is missing acknowledged writes: {result.notes}"
    assert result.healthy_after, "the resource did not return healthy with the original primary"
