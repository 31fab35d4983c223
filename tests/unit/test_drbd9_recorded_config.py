"""Every recorded DRBD 9.2.18 configuration, version and kernel-log output through the harness's
readers: ``drbdsetup show --show-defaults`` (layout, identity, timeouts, audit, quorum setting),
``drbdadm -v dump`` (layout, audit, diskless hosts), ``drbdadm --version``, dmesg, and the dry
run of an adjust.  Sources and states: tests/data/drbd/drbd-9.2.18/README.md; the state
recordings are the cases of tests/unit/test_drbd9_recorded_state.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

import pytest

from harness.drbd import commands
from harness.drbd.audit import audit_dump, audit_show
from harness.drbd.fold import resource_from_events2
from harness.drbd.identity import judge_identity, read_this_host
from harness.drbd.kernlog import KernelSplitBrain, split_brains_in_kernel_log
from harness.drbd.layout import Endpoint, PairEnds
from harness.drbd.quorum import QuorumSetting, quorum_setting, summarize_quorum
from harness.drbd.verify import parse_timeouts
from tests.unit.drbd9_recorded import FILES, Recording, dump_layout, hosts, read, recording, show_layout
from tests.unit.test_drbd9_recorded_state import CHECKS as STATE_CHECKS

#: (resource, node) -> (node-id, replication address:port), the README's topology table
NODES: Final = {
    ("r-sa", "a1"): (0, "10.213.1.11:7800"),
    ("r-sa", "a2"): (1, "10.213.1.12:7800"),
    ("r-ma", "a3"): (0, "10.213.1.13:7801"),
    ("r-ma", "b1"): (1, "10.213.2.21:7801"),
    ("r3", "a1"): (0, "10.213.1.11:7802"),
    ("r3", "a2"): (1, "10.213.1.12:7802"),
    ("r3", "a3"): (2, "10.213.1.13:7802"),
    ("single-az", "a1"): (1, "10.213.1.11:7789"),
    ("single-az", "a2"): (0, "10.213.1.12:7789"),
}
#: the peer of each node in the pair under test (r3's pair is a1-a2; the tie-breaker a3 has none,
#: it is judged toward a1)
PAIR_PEER: Final = {"a1": "a2", "a2": "a1", "a3": "b1", "b1": "a3"}
R3_QUORUM: Final = QuorumSetting("majority", "io-error", "off")


def pair_ends(rec: Recording) -> PairEnds:
    peer = "a1" if (rec.resource, rec.node) == ("r3", "a3") else PAIR_PEER[rec.node]
    return PairEnds(Endpoint(frozenset({rec.node})), Endpoint(frozenset({peer})))


def expected_quorum(resource: str, *, with_defaults: bool) -> QuorumSetting:
    """r3's setting; the others have none (``show --show-defaults`` prints the default
    ``on-no-quorum suspend-io`` beside ``quorum off``)."""
    if resource == "r3":
        return R3_QUORUM
    return QuorumSetting("off", "suspend-io" if with_defaults else None, "off")


def check_show(rec: Recording) -> None:
    resource = rec.resource or ""
    layout = show_layout(rec.name, resource)
    assert {n for c in layout.connections for n in c.names()} == hosts(resource) - {rec.node}
    assert layout.local_diskless == (rec.state == "8-diskless")
    assert quorum_setting(layout.resource_options) == expected_quorum(resource, with_defaults=True)
    node_id, address = NODES[(resource, rec.node)]
    ip, port = address.split(":")
    this = read_this_host(rec.text(), resource)
    assert this is not None and this.node_id == node_id and address in this.addresses
    assert judge_identity(this, node=rec.node, resource=resource, node_id=node_id, ip=ip, port=int(port)).ok
    timeouts = parse_timeouts(rec.text(), resource)
    assert (timeouts.ping_int_s, timeouts.ping_timeout_s, timeouts.verify_alg) == (1.0, 1.0, "crc32c")
    # protocol C, fencing dont-care, after-sb disconnect, no dual primary; r3's majority on
    # three nodes survives the loss of the pair's peer: nothing risky
    assert audit_show(rec.text(), resource, "C", pair_ends(rec)) == []
    (risk,) = audit_show(rec.text(), resource, "A", pair_ends(rec))
    assert risk.check == "protocol" and "runs protocol C, the inventory says A" in risk.detail


def check_dump(rec: Recording) -> None:
    resource = rec.resource or ""
    layout = dump_layout(rec.name, resource)
    assert layout.nodes == len(hosts(resource))
    assert len(layout.connections) == (3 if resource == "r3" else 1)
    # a3 re-created without a disk: its own dump says `disk none` for it, the earlier ones do not
    assert layout.diskless == (("a3",) if rec.state == "8-diskless" else ())
    assert quorum_setting(layout.resource_options) == expected_quorum(resource, with_defaults=False)
    assert audit_dump(rec.text(), resource, "C", pair_ends(rec)) == []


def check_version(rec: Recording) -> None:
    version = commands.parse_drbdadm_version(rec.text())
    utils = "9.15.0" if rec.node == "a3" else "9.22.0"  # a3's Debian 11 root carries older utils
    assert (version.kernel, version.kernel_code, version.utils, version.api) == ("9.2.18", 0x090212, utils, 2)
    assert version.is_drbd9 and commands.describe_version(rec.text()) == f"DRBD kernel 9.2.18, utils {utils}"


def check_dmesg(rec: Recording) -> None:
    found = split_brains_in_kernel_log(rec.text(), rec.resource)
    if "split-brain" not in rec.command:
        assert found == () and "Online verify done" in rec.text()
        return
    # a3's log at the reconnect: the one line that names the split brain with b1
    (split,) = found
    assert split == KernelSplitBrain(
        minor=11,
        resolved=False,
        line="[ 3050.800000] drbd r-ma/0 drbd11 b1: Split-Brain detected but unresolved, dropping connection!",
        resource="r-ma",
        volume=0,
        peer="b1",
    )
    assert split.describe() == "split brain on r-ma/0 (minor 11) with b1: unresolved, connection dropped"
    assert split_brains_in_kernel_log(rec.text(), "r3") == ()


def check_dry_run_adjust(rec: Recording) -> None:
    """a1 after a3's configuration went diskless: the adjust would drop a1's bitmap for peer 2,
    so a1's DRBD still keeps one, prints a3 as ``peer-client:no`` and counts it as a voter."""
    (command,) = rec.text().splitlines()
    found = re.fullmatch(r"drbdsetup peer-device-options r3 (\d+) 0 .*--bitmap=no", command)
    assert found is not None
    peer_node = int(found[1])
    state = resource_from_events2(read("a1.r3.events2-now-statistics.8-diskless-tiebreaker.txt"), "r3")
    assert state is not None
    (a3,) = (p for p in state.peer_devices if p.peer_node_id == peer_node)
    assert (a3.conn_name, a3.peer_disk, a3.peer_client) == ("a3", "Diskless", False)
    summary = summarize_quorum(state, R3_QUORUM, diskless={"a3"})
    assert summary.notes and "keeps a bitmap for it (peer-client:no)" in summary.notes[0]


CHECKS: dict[str, Callable[[Recording], None]] = {
    "show-show-defaults": check_show,
    "drbdadm-v-dump": check_dump,
    "drbdadm-version": check_version,
    "dmesg-verify": check_dmesg,
    "dmesg-split-brain": check_dmesg,
    "drbdadm-dry-run-adjust": check_dry_run_adjust,
}
CONFIG_FILES = [name for name in FILES if recording(name).command in CHECKS]


@pytest.mark.parametrize("name", CONFIG_FILES)
def test_every_configuration_recording_is_read(name: str) -> None:
    rec = recording(name)
    CHECKS[rec.command](rec)


def test_every_recorded_file_is_a_case() -> None:
    covered = {name for name in FILES if recording(name).command in CHECKS | STATE_CHECKS}
    assert covered == set(FILES) and len(FILES) == 230
    assert not set(CHECKS) & set(STATE_CHECKS)
