"""On the lab: a second DRBD resource to the same peer is named by preflight and is not
shaped by a fault on the pair (only the pair's port is), unless the pair asks for the whole path.

The lab's pairs use distinct peers, so the test adds a temporary DRBD resource between a1 and
a2 on their first scratch disk (port 7795, minor 5), skips its initial sync (both sides are
blank), makes a1 its primary, and removes it (metadata wiped, drbd.conf restored) afterwards.
What goes through netem is counted with the netem qdisc's own packet counter, not timed; the
write latencies are printed as the measured figures.
"""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Iterator

import pytest

from harness.cell import CellRunner
from harness.impair.apply import Impairer
from harness.impair.profile import NetemProfile
from harness.inventory import Inventory
from harness.remote import Runner
from harness.safety.preflight import run_preflight

pytestmark = pytest.mark.lab

RESOURCE = "shared-test"
PORT = 7795
MINOR = 5
WRITES = 40
_BLOCK = f"""resource {RESOURCE} {{
  net {{ protocol C; }}
  device /dev/drbd{MINOR};
  disk DISK;
  meta-disk internal;
  on a1 {{ address A1:{PORT}; }}
  on a2 {{ address A2:{PORT}; }}
}}
"""


def _netem_packets(node: Runner) -> int:
    qdiscs = json.loads(node.run(["tc", "-s", "-j", "qdisc", "show", "dev", "vec1"], timeout=20).stdout)
    return int(next(q["packets"] for q in qdiscs if q["kind"] == "netem"))


def _write(node: Runner, device: str) -> float:
    """``WRITES`` synchronous 4 KiB writes (protocol C: each waits for the peer); seconds taken."""
    start = time.monotonic()
    node.run(["dd", "if=/dev/zero", f"of={device}", "bs=4k", f"count={WRITES}", "oflag=direct"], timeout=120)
    return time.monotonic() - start


@pytest.fixture
def second_resource(cell_runner: CellRunner) -> Iterator[Inventory]:
    inv = cell_runner.inventory
    a1, a2 = cell_runner.pool.get("a1"), cell_runner.pool.get("a2")
    disk = inv.nodes["a1"].scratch_devices[0]
    block = (
        _BLOCK.replace("DISK", disk)
        .replace("A1", str(inv.nodes["a1"].replication.ip))
        .replace("A2", str(inv.nodes["a2"].replication.ip))
    )
    for node in (a1, a2):
        node.run_script(
            "cp /etc/drbd.conf /run/drbd.conf.before-shared-test && "
            f"printf '%s' {shlex.quote(block)} >> /etc/drbd.conf && "
            f"yes yes | drbdadm create-md --force {RESOURCE} >/dev/null && drbdadm up {RESOURCE}",
            timeout=60,
        )
    try:
        a1.run_script(
            f"for i in $(seq 50); do drbdadm cstate {RESOURCE} | grep -q Connected && break; sleep 0.2; done; "
            f"drbdadm -- --clear-bitmap new-current-uuid {RESOURCE} && drbdadm primary {RESOURCE}",
            timeout=60,
        )
        yield inv
    finally:
        a1.run_script(f"drbdadm secondary {RESOURCE}; true", timeout=30, check=False)
        for node in (a1, a2):
            node.run_script(
                f"drbdadm down {RESOURCE}; drbdadm wipe-md --force {RESOURCE} >/dev/null 2>&1; "
                f"cp /run/drbd.conf.before-shared-test /etc/drbd.conf; wipefs -a -q {disk}; true",
                timeout=60,
                check=False,
            )


def test_preflight_names_another_resource_to_the_same_peer(cell_runner: CellRunner, second_resource: Inventory) -> None:
    report = run_preflight(second_resource, cell_runner.pool, pairs=["single-az"])
    shared = [f for f in report.findings if f.check == "shared path single-az"]
    print("\n" + "\n".join(f"{f.node}: {f.status}: {f.detail}" for f in shared))
    assert {f.node for f in shared} == {"a1", "a2"}
    for f in shared:
        assert f.status == "warn"
        assert f"DRBD resource {RESOURCE} (" in f.detail and f":{PORT})" in f.detail
        assert "shapes only port 7789, not them" in f.detail


def test_a_fault_shapes_only_the_pairs_own_port(cell_runner: CellRunner, second_resource: Inventory) -> None:
    inv = second_resource
    a1 = cell_runner.pool.get("a1")
    pair = inv.pairs["single-az"]
    impairer = Impairer(cell_runner.run_id, cell_runner.ledger)
    profile = NetemProfile.from_text("slow", delay="20ms", direction="primary")
    figures: dict[str, tuple[int, float]] = {}
    for shape, port in (("resource", pair.shaped_port()), ("path", None)):
        applied = impairer.apply(
            a1, iface="vec1", peer_ip=str(inv.nodes["a2"].replication.ip), profile=profile, hold_s=120,
            role="primary", port=port,
        )  # fmt: skip
        assert applied is not None
        try:
            for device in (pair.device, f"/dev/drbd{MINOR}"):
                before = _netem_packets(a1)
                seconds = _write(a1, device)
                figures[f"{shape} {device}"] = (_netem_packets(a1) - before, seconds)
        finally:
            impairer.clear(a1, applied)
    print("\nshape, device: packets through netem, seconds for", WRITES, "4 KiB O_DIRECT writes")
    for key, (packets, seconds) in figures.items():
        print(f"  {key}: {packets} packets, {seconds:.2f} s")
    # each write sends at least one data packet to the peer: the pair's writes cross netem...
    assert figures[f"resource {pair.device}"][0] >= WRITES
    # ...the other resource's do not (DRBD's keep-alive pings of the pair, once a second, may)
    assert figures[f"resource /dev/drbd{MINOR}"][0] < WRITES // 4
    # with the whole path asked for, both do
    assert figures[f"path /dev/drbd{MINOR}"][0] >= WRITES
