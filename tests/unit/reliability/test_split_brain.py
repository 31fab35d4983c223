"""Split brain after a partition is found from both nodes' data generations (DRBD's own
rule), named, never resolved, and it stops the run.  The get-gi lines were recorded on the lab
after both nodes of single-az wrote while the replication path was cut (tests/data/drbd/README.md)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.drbd import commands
from harness.drbd.errors import DrbdOutputError
from harness.drbd.generations import DataGenerations, diverged, parse_gi
from harness.drbd.replication import DrbdReplication
from tests.doubles import Answer, FakeRunner, data

SPLIT = ("drbd/84-get-gi-primary-split-brain.txt", "drbd/84-get-gi-secondary-split-brain.txt")
CONNECTED = ("drbd/84-get-gi-primary-connected.txt", "drbd/84-get-gi-secondary-connected.txt")
# the kernel's own view of a partition that only the primary wrote through (its dmesg on the lab,
# "drbd_sync_handshake: self ... peer ...", then "Began resync as SyncSource"): a resync, not split brain
RESYNC_SELF = "CC67BCBD650944F5:BA90C740C1B30421:0000000000000000:0000000000000000"
RESYNC_PEER = "BA90C740C1B30420:0000000000000000:0000000000000000:0000000000000000"


def _replication(name: str, gi: str) -> DrbdReplication:
    node = FakeRunner(name, argv={tuple(commands.get_gi_argv("single-az")): [Answer(data(gi))]})
    return DrbdReplication(node, "single-az")


@pytest.mark.reliability_row(32)
def test_case_32_both_sides_wrote_while_apart_is_split_brain() -> None:
    a1, a2 = (parse_gi(data(f)) for f in SPLIT)
    assert diverged(a1, a2) and diverged(a2, a1)
    why = _replication("a1", SPLIT[0]).diverged_from(_replication("a2", SPLIT[1]))
    assert why is not None
    assert "split brain on single-az: a1" in why and "C446E4D35A37505A" in why and "a human must" in why


@pytest.mark.reliability_row(32)
def test_case_32_a_resync_or_a_pair_in_sync_is_not_split_brain() -> None:
    assert not diverged(parse_gi(RESYNC_SELF), parse_gi(RESYNC_PEER))
    assert not diverged(*(parse_gi(data(f)) for f in CONNECTED))
    assert _replication("a1", CONNECTED[0]).diverged_from(_replication("a2", CONNECTED[1])) is None


uuids = st.integers(1, 2**64 - 1)


@given(base=uuids, mine=uuids, theirs=uuids)
def test_diverged_is_drbds_rule_90(base: int, mine: int, theirs: int) -> None:
    a = DataGenerations(mine, base, (0, 0))
    b = DataGenerations(theirs, base ^ 1, (0, 0))  # the lowest bit is a flag
    assert diverged(a, b) == ((mine & ~1) != (theirs & ~1) and base & ~1 != 0)
    # a side that did not write since the parting still has its old current as its bitmap base
    assert not diverged(a, DataGenerations(base, 0, (0, 0)))


def test_garbage_is_not_a_generation_line() -> None:
    with pytest.raises(DrbdOutputError, match="not a get-gi line"):
        parse_gi("'single-az' not defined in your config (for this host).\n")
