"""The embedded lab, booted for real: user-mode-linux guests, DRBD, netem, sshd.

This module runs its own lab in its own namespace and state directory (``hlabt``), so it
never disturbs a lab a developer has up, and it can assert that ``down`` leaves nothing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.errors import HostKeyRefused, InfraError
from harness.inventory import Inventory, load_inventory, parse_inventory
from harness.lab.lifecycle import Lab
from harness.lab.processes import find_lab_processes, find_orphan_guest_processes
from harness.lab.status import collect_status, read_userlands
from harness.remote import SshNode

pytestmark = [pytest.mark.lab]

ROOT = Path(__file__).resolve().parents[2]
NETNS = "hlabt"
STATE = Path("/run/harness-lab-test")


def _test_inventory() -> Inventory:
    """inventories/lab.yaml moved to its own namespace and state directory."""
    text = (ROOT / "inventories" / "lab.yaml").read_text()
    text = text.replace("netns: hlab", f"netns: {NETNS}").replace("/run/harness-lab", str(STATE))
    return parse_inventory(text, "lab-test.yaml")


def _host_view() -> dict[str, object]:
    """What the host has of the test lab: processes, namespace, mounts, files."""
    mounts = Path("/proc/self/mounts").read_text()
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True).stdout
    return {
        "processes": [p.pid for p in find_lab_processes(NETNS, STATE)],
        # guest processes whose UML kernel is gone (they would keep taps open)
        "orphans": find_orphan_guest_processes(4242),
        "netns": (Path("/run/netns") / NETNS).exists(),
        "mounts": [line for line in mounts.splitlines() if str(STATE) in line],
        "state_dir": STATE.exists(),
        "host_links": [line for line in links.splitlines() if " t0m" in line or " br1:" in line],
        "uid_4242_processes": subprocess.run(
            ["pgrep", "-u", "4242", "-f", f"umid={NETNS}-"], capture_output=True, check=False
        ).stdout,
    }


CLEAN = {
    "processes": [],
    "orphans": [],
    "netns": False,
    "mounts": [],
    "state_dir": False,
    "host_links": [],
    "uid_4242_processes": b"",
}


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    lab = Lab(_test_inventory(), None, progress=print)
    lab.down()  # a previous crashed run of this test module
    lab.up()
    yield lab
    lab.down()


def test_every_guest_answers_ssh_with_its_pinned_host_key(lab: Lab) -> None:
    with lab.connections() as conns:
        for name, conn in conns.items():
            assert conn.run(["uname", "-n"], timeout=20).stdout.strip() == name


def test_unknown_host_key_is_refused(lab: Lab, tmp_path: Path) -> None:
    guest = lab.topology.guest("a1")
    other = lab.topology.guest("a2")
    # a known_hosts that pins a2's key for a1's address: a changed key, must be refused
    known = lab.known_hosts.read_text().splitlines()
    a2_key = next(line for line in known if line.startswith(other.mgmt_ip + " "))
    bad = tmp_path / "known_hosts"
    bad.write_text(a2_key.replace(other.mgmt_ip, guest.mgmt_ip) + "\n")
    spec = lab.ssh_spec(guest).model_copy(update={"known_hosts": bad})
    with pytest.raises(HostKeyRefused, match="CHANGED"):
        SshNode("a1", spec).open()
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    with pytest.raises(HostKeyRefused, match="not in"):
        SshNode("a1", spec.model_copy(update={"known_hosts": empty})).open()


def test_every_pair_is_up_in_its_product_s_own_words(lab: Lab) -> None:
    with lab.connections(lab.topology.nodes) as conns:
        rows = lab.resource_states(conns)
    states = {r.name: (r.connection, r.disk, r.role) for r in rows}
    assert states == {
        "single-az": ("Connected", "UpToDate/UpToDate", "Primary/Secondary"),
        "multi-az": ("Connected", "UpToDate/UpToDate", "Primary/Secondary"),
        # md-nbd: the array on the primary, both legs in sync (the NBD leg first)
        "single-az-md": ("Connected", "InSync/InSync", "Primary"),
        "multi-az-md": ("Connected", "InSync/InSync", "Primary"),
    }
    assert all(r.healthy for r in rows)


def test_every_node_boots_the_root_its_inventory_names(lab: Lab) -> None:
    """lab.nodes.<node>.root: a built root's guest runs that release, with every tool answering."""
    with lab.connections(lab.topology.nodes) as conns:
        userlands = read_userlands(conns)
    roots = {name: lab.spec.root_of(name) for name in lab.inventory.nodes}
    assert set(roots.values()) - {"host"}, "the default lab boots nodes on built roots"
    for name, root in roots.items():
        assert userlands[name].missing() == [], name
        if root != "host":
            assert userlands[name].codename == root, name


def test_cross_az_rtt_exceeds_single_az_by_the_configured_delay(lab: Lab) -> None:
    status = collect_status(lab, rtt_count=30)
    assert status.healthy, status.problems
    assert lab.spec.az_link.delay == pytest.approx(0.001)
    single = status.rtt_ms["a1-a2"]
    cross = status.rtt_ms["a3-b1"]
    added = cross - single
    # 1 ms each way through the router: about 2 ms more RTT; generous band for a noisy host
    assert 1.6 <= added <= 3.5, (single, cross)
    assert status.to_json()["resources"][0]["connection"] == "Connected"
    assert {n["name"] for n in status.to_json()["nodes"]} == {"a1", "a2", "a3", "b1"}


def test_guests_cannot_write_root_owned_host_files(lab: Lab) -> None:
    """Guests run as uid 4242: hostfs gives them no more than that uid's rights (as root,
    a guest could write the host's files)."""
    with lab.connections((lab.topology.guest("a1"),)) as conns:
        res = conns["a1"].run_script(
            "mkdir -p /mnt/hostroot && mount -t hostfs none /mnt/hostroot -o /etc && "
            "touch /mnt/hostroot/harness-lab-escape",
            timeout=30,
            check=False,
        )
    assert res.exit_code != 0
    assert not Path("/etc/harness-lab-escape").exists()


def test_second_up_is_refused(lab: Lab) -> None:
    with pytest.raises(InfraError, match="already up"):
        Lab(_test_inventory(), None).up()


def test_the_host_latency_hold_lives_exactly_as_long_as_the_lab(lab: Lab) -> None:
    state = lab.state()
    assert state is not None and state.latency_hold_pid is not None
    cmdline = Path(f"/proc/{state.latency_hold_pid}/cmdline").read_bytes().split(b"\0")
    assert b"/dev/cpu_dma_latency" in cmdline
    # the request is in force: no CPU takes a halting idle state while it is held
    usage = sorted(Path("/sys/devices/system/cpu").glob("cpu[0-9]*/cpuidle/state1/usage"))
    if usage:  # a host without cpuidle states has nothing to hold
        before = sum(int(p.read_text()) for p in usage)
        time.sleep(0.5)
        assert sum(int(p.read_text()) for p in usage) == before


def test_the_timer_kick_holds_a_pidfd_to_every_guest(lab: Lab) -> None:
    state = lab.state()
    assert state is not None and state.timer_kick_pid is not None
    fd_dir = Path(f"/proc/{state.timer_kick_pid}/fd")
    deadline = time.monotonic() + 5  # it re-reads the state file once a second
    pidfds = 0
    while time.monotonic() < deadline:
        pidfds = sum(1 for fd in fd_dir.iterdir() if os.readlink(fd) == "anon_inode:[pidfd]")
        if pidfds == len(state.pids):
            break
        time.sleep(0.2)
    assert pidfds == len(state.pids)


def test_down_leaves_nothing_and_is_idempotent(lab: Lab) -> None:
    hold = lab.state().latency_hold_pid  # type: ignore[union-attr]
    kick = lab.state().timer_kick_pid  # type: ignore[union-attr]
    assert lab.down() == []
    assert hold is not None and not Path(f"/proc/{hold}").exists()
    assert kick is not None and not Path(f"/proc/{kick}").exists()
    assert _host_view() == CLEAN
    assert lab.down() == []


def test_down_cleans_a_crashed_lab() -> None:
    """SIGKILL of a guest's main process leaves its helpers running (re-parented to pid 1); down finds them."""
    lab = Lab(_test_inventory(), None)
    lab.up()
    state = lab.state()
    assert state is not None
    os.kill(state.pids["a1"], signal.SIGKILL)
    os.kill(state.pids["router"], signal.SIGKILL)
    time.sleep(0.5)
    # the state file is gone too, as after a lost /run: down must still find the processes
    (STATE / "state.json").unlink()
    assert lab.down() == []
    assert _host_view() == CLEAN


def test_guest_that_does_not_boot_reports_its_console() -> None:
    inv = _test_inventory()
    lab = Lab(inv, None)
    assert inv.lab is not None
    broken = Lab(inv.model_copy(update={"lab": inv.lab.model_copy(update={"guest_memory": 1024 * 1024})}), None)
    broken.spec = broken.spec.model_copy(update={"boot_timeout": 15.0})
    with pytest.raises(InfraError, match="console lines") as info:
        broken.up()
    assert "guest" in str(info.value)
    assert _host_view() == CLEAN
    assert lab.leftovers() == []


def test_lab_inventory_file_is_the_default() -> None:
    inv = load_inventory(ROOT / "inventories" / "lab.yaml")
    assert inv.lab is not None and inv.lab.netns == "hlab"
