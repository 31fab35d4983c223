"""The fault and bad-input table of reliability.md §4, row by row, at unit level.

Every test is named ``test_case_NN_<short name>`` after its row (tests/RELIABILITY_CASES.md
maps all 35 rows to these tests and to the lab integration tests).  Nodes are played by the
shared doubles of ``tests/doubles.py``: :class:`FakeRunner` answers with outputs recorded in
``tests/data`` (DRBD, tc, fio), unpacks ``run_batch`` round trips into their single commands,
and records every command the code asked for, so a test can assert that nothing mutating was
sent; the replication seam is the real DRBD implementation over such a node.  Where no
recording exists (``ip -o addr``, ``tc -V``,
``$SSH_CONNECTION``, sudo's refusal, a missing tool), the answer is marked *constructed*.
A few tests run read-only probes for real on this machine (:class:`LocalRunner`), or talk to
an in-process paramiko SSH server on 127.0.0.1; none touches the lab or its namespace.

Bugs these tests found were fixed; the tests keep them fixed.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import cast, get_args

import paramiko
import pytest
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given
from hypothesis import strategies as st
from paramiko.common import AUTH_FAILED

import harness.cli
import harness.connections
from harness.cell import CellRunner, CellSpec
from harness.cell.failover import FailoverResult, _verify, verify_workload
from harness.cell.fault import check_rtt
from harness.cell.judge import validity
from harness.connections import ConnectionPool
from harness.drbd.audit import AuditPlan, Risk, audit_dump, audit_managers, audit_show
from harness.drbd.errors import DrbdNotReady
from harness.drbd.fold import resource_from_events2
from harness.drbd.replication import BACKING_PROBE, DEVICE_PROBE, DrbdReplication
from harness.drbd.state import Connection, ResourceState
from harness.drbd.validity import check_capture
from harness.errors import (
    CommandFailed,
    ConfigError,
    ConnectionLost,
    HarnessError,
    HostKeyRefused,
    RefusedError,
)
from harness.fio.command import build_fio_argv, check_safe_path
from harness.fio.result import parse_fio_json
from harness.fio.runner import FioFailed, FioRunner, fio_deadline_s
from harness.fio.spec import VerifySpec, WorkloadSpec
from harness.impair.apply import Impairer, ImpairmentMismatch, deadman_script, disarm_script
from harness.impair.commands import apply_commands, teardown_commands, validate_ifname
from harness.impair.profile import NETEM_DEFAULT_LIMIT, Direction, NetemProfile, lint_profile
from harness.impair.readback import parse_filters, parse_qdiscs, verify_applied
from harness.inventory import Inventory, load_inventory, parse_inventory
from harness.inventory.models import PairSpec
from harness.ledger import Ledger
from harness.plugin import _sigterm_to_interrupt
from harness.reboot import BOOT_ID_PATH, NodeRebooted, parse_boot_id, reboot_error, watch_reboots
from harness.redact import REDACTED, redact
from harness.remote import CommandResult, SshNode, render_command, run_batch
from harness.remote.spec import SshSpec
from harness.rtt import RttStats
from harness.safety.device import DeviceFacts, evaluate_drbd_target, guard_replicated_device, probe_device
from harness.safety.disruptive import OPTION, opt_in_error, refuse_risky, skip_reason
from harness.safety.leftovers import find_leftovers, parse_listing, remove_leftovers
from harness.safety.lock import ClusterLock, LockHeld, LockOwner, local_owner, read_lock
from harness.safety.preflight import Finding, PreflightReport, run_preflight
from harness.samples import SampleStore
from harness.sysrq import SysrqCrasher
from tests.doubles import (
    LAB,
    ROOT,
    Answer,
    FakePool,
    FakeRunner,
    LocalRunner,
    data,
    forbidden,
    mutations,
    recorded_replication,
)

RUN_ID = "20261121-101500-ab12"
OTHER_RUN_ID = "20261121-094500-cd34"

#: drbdadm one-liners recorded on a1 (tests/data/drbd/README.md): sh-dev, sh-ll-dev, ...
ONELINERS = data("drbd/84-drbdadm-oneliners.txt").splitlines()
SH_DEV, SH_LL_DEV = ONELINERS[0], ONELINERS[1]  # /dev/drbd0, /dev/ubda
DRBDADM_VERSION = "\n".join(ONELINERS[5:8]) + "\n"
#: The lab's DRBD device size: `size:2097052` KiB in the recorded events2 snapshots.
DRBD0_BYTES = 2097052 * 1024
#: `tc -V` as Debian 12's iproute2 6.1.0 printed it on the CI machine (the lab guests run 6.1.0 too).
TC_VERSION = "tc utility, iproute2-6.1.0, libbpf 1.1.2\n"

#: The smallest valid inventory with the lab's node and pair names (line numbers matter).
MINI = """\
name: mini
nodes:
  a1:
    az: az-a
    ssh: {host: 10.213.0.11, key: /run/harness-lab/keys/lab_key, known_hosts: /run/harness-lab/known_hosts}
    replication: {ip: 10.213.1.11, iface: vec1}
  a2:
    az: az-a
    ssh: {host: 10.213.0.12, key: /run/harness-lab/keys/lab_key, known_hosts: /run/harness-lab/known_hosts}
    replication: {ip: 10.213.1.12, iface: vec1}
pairs:
  single-az:
    primary: a1
    secondary: a2
    resource: single-az
    device: /dev/drbd0
"""


def ip_addr_line(iface: str, ip: str) -> str:
    # constructed: the shape of `ip -o -4 addr show dev X` (iproute2)
    return f"3: {iface}    inet {ip}/24 brd {ip.rsplit('.', 1)[0]}.255 scope global {iface}\\       valid_lft forever\n"


def device_probe(**changes: Answer) -> dict[str, Answer]:
    """Answers of probe_device for the lab's healthy, unused /dev/drbd0 on a1 (recorded sh-dev,
    sh-ll-dev and size; the sysfs/builtin probes print nothing when there is nothing)."""
    answers = {
        "realpath": Answer(f"{SH_DEV}\n"),
        "isblock": Answer(),
        "size": Answer(f"{DRBD0_BYTES}\n"),
        "mounts": Answer(),
        "holders": Answer(),
        "parts": Answer(),
        "blkid": Answer(rc=2),  # blkid -p exits 2 when it finds no signature
        DEVICE_PROBE: Answer(f"{SH_DEV}\n"),
        BACKING_PROBE: Answer(f"{SH_LL_DEV}\n"),
    }
    answers.update(changes)
    return answers


#: `systemctl` where systemd is not PID 1, as it failed on the CI machine (the lab's guests boot
#: without systemd too).
NO_SYSTEMD = Answer(
    rc=1,
    stderr="System has not been booted with systemd as init system (PID 1). Can't operate.\n"
    "Failed to connect to bus: Host is down",
)
#: constructed: `ps -e -o pid=,comm=` (procps) on a lab guest: init, sshd and DRBD's kernel
#: threads, whose names the kernel cuts at 15 characters.
GUEST_PROCESSES = "    1 sh\n    2 kthreadd\n  412 sshd\n  431 drbd_w_single-a\n  433 drbd_r_single-a\n"


def audit_answers(
    show: str = "drbd/84-drbdsetup-show-defaults-constructed.txt", dump: str = "drbd/84-drbdadm-dump-constructed.txt"
) -> dict[str, Answer]:
    """A node's answers to the config audit of its one resource (harness.drbd.audit.AuditPlan)."""
    return {
        "audit_units": NO_SYSTEMD,
        "audit_processes": Answer(GUEST_PROCESSES),
        "audit_show_single_2daz": Answer(data(show)),
        "audit_dump_single_2daz": Answer(data(dump)),
    }


def lab_node(name: str, *, events: str = "drbd/84-events2-now-primary-connected.txt", **changes: Answer) -> FakeRunner:
    """A lab guest for preflight: recorded versions, qdiscs, DRBD state; clean and unlocked."""
    spec = LAB.nodes[name]
    batch = {
        "hostname": Answer(f"{name}\n"),  # the lab's guests are named after their nodes
        "fio": Answer(data("fio/fio-3.33-version.txt")),
        "product": Answer(DRBDADM_VERSION),
        "tc": Answer(TC_VERSION),
        "netem": Answer(),
        "addr": Answer(ip_addr_line(spec.replication.iface, spec.replication.ip)),
        "qdisc": Answer(data("tc/lab/default-root.json")),
        # constructed: $SSH_CONNECTION = client ip, port, server ip (management bridge), port
        "sshconn": Answer(f"10.213.0.1 40022 {spec.ssh.host} 22\n"),
        **device_probe(),
        **audit_answers(),
        "state": Answer(data(events)),
    }
    batch.update(changes)
    return FakeRunner(
        name,
        batch=batch,
        scripts=[("/faults/*.json", Answer()), ("owner.json 2>/dev/null ||", Answer())],
    )


def preflight(nodes: dict[str, FakeRunner | HarnessError], inv: Inventory = LAB) -> PreflightReport:
    return run_preflight(inv, cast(ConnectionPool, FakePool(nodes)), pairs=["single-az"])


def finding(report: PreflightReport, node: str, check: str) -> Finding:
    return next(f for f in report.findings if f.node == node and f.check == check)


def cell_runner(tmp: Path, inv: Inventory = LAB) -> CellRunner:
    return CellRunner(
        inv,
        run_id=RUN_ID,
        run_dir=tmp,
        pool=ConnectionPool(inv),  # opens nothing until asked
        store=SampleStore(tmp / "samples.ndjson"),
        ledger=Ledger(tmp / "ledger.ndjson", RUN_ID),
        lock_dir=tmp / "locks",
    )


def test_the_mutation_detector_sees_real_mutations() -> None:
    """The "nothing mutating was sent" assertions below are only worth something if this holds."""
    node = FakeRunner("a1", scripts=[("", Answer())])
    for argv in [*apply_commands(NetemProfile("p", delay_s=0.001), "vec1", "10.213.1.12"), *teardown_commands("vec1")]:
        node.run_script(shlex.join(argv), timeout=1)
    node.run_script("tc -j qdisc show dev vec1; cat /run/harness/lock/owner.json; kill -0 42", timeout=1)
    assert len(mutations(node)) == 4  # prio, netem, filter added; root deleted; the reads are not
    node.calls.append("drbdadm connect --discard-my-data r0")
    assert len(mutations(node)) == 5 and forbidden(node) == ["drbdadm connect --discard-my-data r0"]


# ---------------------------------------------------------------------------------------------
# 1-5: inventory input
# ---------------------------------------------------------------------------------------------
def test_case_01_yaml_syntax_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text(MINI.replace("iface: vec1}", "iface: vec1", 1))  # an unclosed flow mapping

    def no_ssh(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("an SSH connection was attempted for a broken inventory")

    monkeypatch.setattr(harness.connections, "ConnectionPool", no_ssh)
    monkeypatch.setattr(SshNode, "open", no_ssh)
    assert harness.cli.main(["preflight", "--inventory", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:7:5: YAML syntax error" in err  # file:line:col (PyYAML marks where it noticed)
    with pytest.raises(ConfigError) as info:
        load_inventory(path)
    assert info.value.exit_code == 2


@pytest.mark.parametrize("index", range(len(MINI.splitlines())))
def test_case_02_duplicate_keys(index: int) -> None:
    lines = MINI.splitlines()
    key = lines[index].strip().split(":", 1)[0]
    text = "\n".join([*lines[: index + 1], lines[index], *lines[index + 1 :]]) + "\n"
    with pytest.raises(
        ConfigError, match=rf"inv.yaml:{index + 2}: duplicate key '{re.escape(key)}' \(first at line {index + 1}\)"
    ):
        parse_inventory(text, "inv.yaml")


def test_case_02_duplicate_device_would_silently_win_in_plain_pyyaml() -> None:
    text = MINI.replace("    device: /dev/drbd0\n", "    device: /dev/drbd0\n    device: /dev/vda\n")
    assert yaml.safe_load(text)["pairs"]["single-az"]["device"] == "/dev/vda"  # the hazard (pyyaml#165)
    with pytest.raises(ConfigError, match=r"inv.yaml:17: duplicate key 'device' \(first at line 16\)"):
        parse_inventory(text, "inv.yaml")


YAML11_WORDS = ["y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF"]


@given(st.sampled_from(YAML11_WORDS), st.sampled_from(YAML11_WORDS))
def test_case_03_yaml11_words_stay_strings(az: str, iface: str) -> None:
    text = MINI.replace("az: az-a", f"az: {az}", 1).replace("iface: vec1}", f"iface: {iface}}}", 1)
    inv = parse_inventory(text)
    assert inv.nodes["a1"].az == az and isinstance(inv.nodes["a1"].az, str)
    assert inv.nodes["a1"].replication.iface == iface
    assert validate_ifname(iface) == iface  # and the impairer takes it as the same name


@given(st.sampled_from(YAML11_WORDS))
def test_case_03_protocol_on_is_refused_not_coerced(word: str) -> None:
    text = MINI.replace("    device: /dev/drbd0\n", f"    device: /dev/drbd0\n    protocol: {word}\n")
    with pytest.raises(ConfigError, match=r"inv.yaml:17: pairs.single-az.protocol: Input should be 'A', 'B' or 'C'"):
        parse_inventory(text, "inv.yaml")


def test_case_03_numbers_are_not_coerced_to_strings_or_octal() -> None:
    with pytest.raises(ConfigError, match=r"inv.yaml:4: nodes.a1.az: Input should be a valid string"):
        parse_inventory(MINI.replace("az: az-a", "az: 8.4", 1), "inv.yaml")  # a float, never "8.4"
    inv = parse_inventory(MINI.replace("resource: single-az", "resource: 010"))
    assert inv.pairs["single-az"].resource == "010"  # not octal 8
    with pytest.raises(ConfigError, match=r"nodes.a1.ssh.port: Input should be a valid integer"):
        parse_inventory(MINI.replace("host: 10.213.0.11,", "host: 10.213.0.11, port: 010,"))
    with pytest.raises(ConfigError, match=r"production: Input should be a valid boolean"):
        parse_inventory(MINI + "production: yes\n")


@pytest.mark.parametrize("iface", ["eth0:1", "-eth0"])
def test_case_03_interface_names_the_impairer_refuses_are_refused_at_parse_time(iface: str) -> None:
    with pytest.raises(ConfigError):
        validate_ifname(iface)
    text = MINI.replace("iface: vec1}", f'iface: "{iface}"}}', 1)
    try:
        parse_inventory(text)
    except ConfigError:
        return
    raise AssertionError(f"inventory accepted iface {iface!r}")


def test_case_04_unknown_key() -> None:
    text = MINI.replace("    replication: {ip: 10.213.1.11, iface: vec1}", "    replication_iface: vec1")
    with pytest.raises(ConfigError) as info:
        parse_inventory(text, "inv.yaml")
    assert "inv.yaml:6: nodes.a1.replication_iface: unknown key (misspelled?)" in str(info.value)
    assert "inv.yaml:3: nodes.a1.replication: Field required" in str(info.value)
    # workloads name the allowed set as well
    text = MINI + "workloads:\n  w: {rw: randwrite, size: 64M, iodepht: 4}\n"
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['iodepht'\] \(allowed: .*'iodepth'"):
        parse_inventory(text)


AMBIGUOUS = [
    (
        "same-host-twice",
        MINI.replace("host: 10.213.0.12", "host: 10.213.0.11"),
        r"nodes 'a1' and 'a2' have the same ssh endpoint 10.213.0.11:22",
    ),
    (
        "same-replication-ip",
        MINI.replace("ip: 10.213.1.12", "ip: 10.213.1.11"),
        r"nodes 'a1' and 'a2' share replication ip 10.213.1.11",
    ),
    (
        "primary-is-secondary",
        MINI.replace("secondary: a2", "secondary: a1"),
        r"primary and secondary are the same node 'a1'",
    ),
    (
        "two-pairs-one-device",
        MINI + "  second: {primary: a1, secondary: a2, resource: other, device: /dev/drbd0}\n",
        r"pairs 'single-az' and 'second' both use /dev/drbd0 on 'a1'",
    ),
    (
        "two-pairs-one-resource",
        MINI + "  second: {primary: a1, secondary: a2, resource: single-az, device: /dev/drbd1}\n",
        r"pairs 'single-az' and 'second' both use resource 'single-az'",
    ),
    ("unknown-node", MINI.replace("secondary: a2", "secondary: a3"), r"secondary 'a3' is not a node"),
    (
        "no-az-label",
        MINI.replace("    az: az-a\n    ssh: {host: 10.213.0.12", "    ssh: {host: 10.213.0.12"),
        r"nodes.a2.az: Field required",
    ),
]


@pytest.mark.parametrize(("text", "message"), [(t, m) for _, t, m in AMBIGUOUS], ids=[i for i, _, _ in AMBIGUOUS])
def test_case_05_ambiguous_inventory(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_inventory(text, "inv.yaml")


def test_case_05_single_az_pair_is_never_taken_for_cross_az() -> None:
    inv = parse_inventory(MINI)
    assert inv.placement("single-az") == "same-az"
    assert parse_inventory(MINI.replace("az: az-a", "az: az-b", 1)).placement("single-az") == "cross-az"


# ---------------------------------------------------------------------------------------------
# 6-8: the write target
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "device",
    ["/dev/vda", "/dev/sda", "/dev/nvme0n1", "/dev/mapper/vg-scratch", "/dev/ubda", "/dev/drbd/by-res/single-az/0",
     "/dev/disk/by-id/virtio-abc", "/dev/drbd", "/dev/drbd00000"],
)  # fmt: skip
def test_case_06_non_drbd_target_is_refused_at_parse_time(device: str) -> None:
    with pytest.raises(ConfigError, match=r"inv.yaml:16: pairs.single-az.device: String should match pattern"):
        parse_inventory(MINI.replace("/dev/drbd0", device), "inv.yaml")


def test_case_06_the_resources_own_unused_drbd_device_passes_the_guard() -> None:
    node = FakeRunner("a1", batch=device_probe())
    facts = guard_replicated_device(node, recorded_replication(node), needed_bytes=64 << 20)
    assert (facts.realpath, facts.sh_dev, facts.backing, facts.size_bytes) == (
        "/dev/drbd0",
        SH_DEV,
        (SH_LL_DEV,),
        DRBD0_BYTES,
    )
    assert mutations(node) == []


NODE_SIDE_REFUSALS = [
    (
        "backing-device",
        "/dev/ubda",
        {"realpath": Answer("/dev/ubda\n"), "holders": Answer("drbd0\n")},
        [
            "drbdadm sh-dev says the resource's device is /dev/drbd0, not /dev/ubda",
            "is the resource's backing device /dev/ubda",
            "is held by drbd0",
        ],
    ),
    (
        "root-disk-with-partition",
        "/dev/vda",
        {"realpath": Answer("/dev/vda\n"), "parts": Answer("/sys/class/block/vda/vda1\n")},
        ["drbdadm sh-dev says the resource's device is /dev/drbd0, not /dev/vda", "has partitions vda1"],
    ),
    ("mounted", "/dev/drbd0", {"mounts": Answer("/mnt/itest\n")}, ["is mounted at /mnt/itest"]),
    # constructed: `blkid -p -o export` of an ext4 filesystem
    (
        "filesystem",
        "/dev/drbd0",
        {"blkid": Answer("DEVNAME=/dev/drbd0\nTYPE=ext4\nUSAGE=filesystem\n")},
        ["carries a signature (", "TYPE=ext4"],
    ),
    ("held", "/dev/drbd0", {"holders": Answer("dm-3\n")}, ["is held by dm-3"]),
    (
        "other-resources-device",
        "/dev/drbd0",
        {DEVICE_PROBE: Answer("/dev/drbd1\n")},
        ["drbdadm sh-dev says the resource's device is /dev/drbd1, not /dev/drbd0"],
    ),
    (
        "resource-unknown",
        "/dev/drbd0",
        {DEVICE_PROBE: Answer(rc=10, stderr="'single-az' not defined in your config (for this host).")},
        ["drbdadm sh-dev failed"],
    ),
    (
        "probe-failed",
        "/dev/drbd0",
        {"size": Answer(rc=2, stderr="sh: 1: cannot open /sys/class/block/drbd0/size: No such file")},
        ["probe failed (size: exit 2", "size unknown"],
    ),
]


@pytest.mark.parametrize(
    ("device", "changes", "expected"), [c[1:] for c in NODE_SIDE_REFUSALS], ids=[c[0] for c in NODE_SIDE_REFUSALS]
)
def test_case_06_node_side_guard_refuses(device: str, changes: dict[str, Answer], expected: list[str]) -> None:
    node = FakeRunner("a1", batch=device_probe(**changes))
    with pytest.raises(RefusedError) as info:
        guard_replicated_device(node, recorded_replication(node), device=device, needed_bytes=1)
    message = str(info.value)
    assert message.startswith(f"a1: refusing to write to {device} (resource single-az): ")
    for text in expected:
        assert text in message
    assert info.value.exit_code == 3
    assert mutations(node) == []


def _root_disk() -> tuple[str, bool] | None:
    """(kernel name of the disk holding /, whether / is on a partition of it)."""
    st_dev = os.stat("/").st_dev
    sysdir = Path(f"/sys/dev/block/{os.major(st_dev)}:{os.minor(st_dev)}")
    if os.major(st_dev) == 0 or not sysdir.exists():
        return None
    real = sysdir.resolve()
    if (real / "partition").exists():
        return real.parent.name, True
    return real.name, False


def test_case_06_the_real_root_disk_of_this_machine_is_refused() -> None:
    """The /dev/vda accident, for real: probe this machine's root disk read-only."""
    root = _root_disk()
    if root is None or not re.fullmatch(r"[a-z][a-z0-9]{1,31}", root[0]):
        pytest.skip("the root filesystem is not on a plain block device here")
    name, on_partition = root
    node = LocalRunner()
    facts = probe_device(node, f"/dev/{name}", recorded_replication(node), resolved=(SH_DEV, SH_LL_DEV))
    problems = evaluate_drbd_target(facts, expected_device=SH_DEV, needed_bytes=1)
    assert f"resolves to /dev/{name}, not the DRBD device /dev/drbd0" in problems
    if on_partition:
        assert any(p.startswith("has partitions") for p in problems)
    else:
        assert "/" in facts.mounted_at and any(p.startswith("is mounted at /") for p in problems)
    assert not any(re.search(r"\b(?:dd|mkfs|wipefs|fio)\b", c) for c in node.calls)


@pytest.mark.parametrize("resource", ["all", "--discard-my-data", "-x"])
def test_case_06_reserved_resource_names_are_refused_at_parse_time(resource: str) -> None:
    try:
        parse_inventory(MINI.replace("resource: single-az", f'resource: "{resource}"'))
    except ConfigError:
        return
    raise AssertionError(f"inventory accepted resource {resource!r}")


METACHARACTERS = [":", " ", "'", '"', ";", "\n", "$(", "`", "|", "&", ">", "\\", "\t", "*", "#"]


@given(
    st.text(alphabet="0123456789", max_size=3),
    st.sampled_from(METACHARACTERS),
    st.text(max_size=12),
)
def test_case_07_device_paths_with_metacharacters(digits: str, meta: str, tail: str) -> None:
    path = f"/dev/drbd{digits}{meta}{tail}"
    with pytest.raises(ValueError, match="device"):  # pydantic's ValidationError is a ValueError
        PairSpec.model_validate({"primary": "a1", "secondary": "a2", "resource": "r0", "device": path})
    with pytest.raises(ConfigError):
        check_safe_path(path, what="fio filename")
    node = FakeRunner("a1")
    with pytest.raises(RefusedError, match="is not a plain device path"):
        probe_device(node, path, DrbdReplication(node, "r0"))
    assert node.calls == []  # refused before the node was asked anything


@given(st.text(min_size=1, max_size=20))
def test_case_07_a_path_that_renders_stays_one_shell_token(value: str) -> None:
    if "\x00" in value:
        return  # no argv can carry NUL
    command = render_command(["blkid", "-p", "--", value], timeout=30, sudo=True)
    assert shlex.split(command)[-1] == value


def test_case_08_absent_device_is_refused_and_fio_never_creates_it() -> None:
    # what the probe knows about a device that is not there: nothing is a block device, the
    # resource's own device is another one, the size is unknown
    facts = DeviceFacts(
        path="/dev/drbd10", realpath="", is_block=False, size_bytes=None, mounted_at=(), holders=(),
        partitions=(), signature="", sh_dev=SH_DEV, backing=(SH_LL_DEV,), probe_errors=("realpath: exit 1",),
    )  # fmt: skip
    problems = evaluate_drbd_target(facts, expected_device="/dev/drbd10", needed_bytes=1)
    assert problems == [
        "probe failed (realpath: exit 1)",
        "not a block device",
        "drbdadm sh-dev says the resource's device is /dev/drbd0, not /dev/drbd10",
        "resolves to ?, not the DRBD device /dev/drbd10",
        "size unknown",
    ]
    argv = build_fio_argv(WorkloadSpec(name="w", rw="write", size=1 << 20), "/dev/drbd10", "/run/harness/x/o.json")
    assert "--allow_file_create=0" in argv and "--allow_mounted_write=0" in argv


def _absent_device_runner(tmp_path: Path) -> LocalRunner:
    if Path("/dev/drbd10").exists():
        pytest.skip("this machine has a /dev/drbd10")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "drbdadm"  # prints the recorded sh-dev / sh-ll-dev of single-az
    stub.write_text(f'#!/bin/sh\ncase "$1" in sh-dev) echo {SH_DEV};; sh-ll-dev) echo {SH_LL_DEV};; *) exit 1;; esac\n')
    stub.chmod(0o755)
    return LocalRunner(env={**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"})


def test_case_08_typoed_absent_device_probed_for_real(tmp_path: Path) -> None:
    """/dev/drbd10 does not exist: the probe runs for real here (read-only shell builtins and
    sysfs), with a stand-in drbdadm."""
    node = _absent_device_runner(tmp_path)
    with pytest.raises(RefusedError, match="not a block device"):
        guard_replicated_device(node, recorded_replication(node), device="/dev/drbd10", needed_bytes=1)


# ---------------------------------------------------------------------------------------------
# 9-12: SSH and sudo (an in-process paramiko server on 127.0.0.1, or a fake connection)
# ---------------------------------------------------------------------------------------------
def new_key() -> tuple[paramiko.PKey, str]:
    pem = (
        Ed25519PrivateKey.generate()
        .private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption())
        .decode()
    )
    return paramiko.Ed25519Key.from_private_key(io.StringIO(pem)), pem


class _RejectEveryKey(paramiko.ServerInterface):
    def get_allowed_auths(self, username: str) -> str:
        return "publickey"

    def check_auth_publickey(self, username: str, key: paramiko.PKey) -> int:
        return AUTH_FAILED


@dataclass
class SshServer:
    port: int
    host_key: paramiko.PKey
    connections: int = 0

    def known_hosts_line(self, key: paramiko.PKey | None = None) -> str:
        key = key or self.host_key
        return f"[127.0.0.1]:{self.port} {key.get_name()} {key.get_base64()}\n"


@pytest.fixture
def ssh_server() -> Iterator[SshServer]:
    """An sshd on 127.0.0.1 that presents its host key and refuses every client key."""
    host_key, _ = new_key()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.1)
    server = SshServer(listener.getsockname()[1], host_key)
    stop = threading.Event()
    transports: list[paramiko.Transport] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            server.connections += 1
            transport = paramiko.Transport(conn)
            transport.add_server_key(host_key)
            transports.append(transport)
            # the client may give up during the handshake (it refused our host key)
            with contextlib.suppress(paramiko.SSHException, EOFError, OSError):
                transport.start_server(server=_RejectEveryKey())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server
    stop.set()
    listener.close()
    for transport in transports:
        transport.close()
    thread.join(5)


def client_spec(tmp: Path, port: int, known_hosts: str | None, **kwargs: object) -> tuple[SshSpec, str]:
    _, pem = new_key()
    key = tmp / "id_ed25519"
    key.write_text(pem)
    key.chmod(0o600)
    kh = tmp / "known_hosts"
    if known_hosts is not None:
        kh.write_text(known_hosts)
    spec = SshSpec.model_validate(
        {"host": "127.0.0.1", "port": port, "key": str(key), "known_hosts": str(kh), "connect_timeout": "5s", **kwargs}
    )
    return spec, pem


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_case_09_unreachable_host_fails_fast(tmp_path: Path) -> None:
    spec, _ = client_spec(tmp_path, _free_port(), "")
    start = time.monotonic()
    with pytest.raises(
        ConnectionLost, match=rf"n1: SSH connection lost or refused: cannot connect to 127.0.0.1:{spec.port}"
    ):
        SshNode("n1", spec).open()
    assert time.monotonic() - start < 5


def test_case_09_silent_host_is_bounded_by_connect_timeout(tmp_path: Path) -> None:
    with socket.socket() as silent:  # accepts TCP, never speaks SSH
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        spec, _ = client_spec(tmp_path, silent.getsockname()[1], "", connect_timeout="0.5s")
        start = time.monotonic()
        with pytest.raises(ConnectionLost, match="n1: SSH connection lost or refused"):
            SshNode("n1", spec).open()
        assert time.monotonic() - start < 10


def test_case_09_preflight_is_all_or_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    a2 = lab_node("a2")
    lost = ConnectionLost("a1", "cannot connect to 10.213.0.11:22: [Errno 113] No route to host")
    report = preflight({"a1": lost, "a2": a2})
    assert finding(report, "a1", "ssh") == Finding("a1", "ssh", "BLOCK", str(lost))
    assert finding(report, "a2", "ssh").status == "ok"
    assert not report.ok and "preflight BLOCKED" in report.render()
    assert mutations(a2) == []
    # the CLI turns it into exit 3, changing nothing anywhere
    path = tmp_path / "inv.yaml"
    path.write_text(MINI)
    pool = FakePool({"a1": lost, "a2": lab_node("a2")})
    monkeypatch.setattr(harness.connections, "ConnectionPool", lambda _inv: pool)
    assert harness.cli.main(["preflight", "--inventory", str(path)]) == 3
    assert pool.closed and re.search(r"a1\s+ssh\s+BLOCK", capsys.readouterr().out)
    assert mutations(cast(FakeRunner, pool.nodes["a2"])) == []


def test_case_10_wrong_ssh_key_fails_fast_without_key_material(tmp_path: Path, ssh_server: SshServer) -> None:
    spec, pem = client_spec(tmp_path, ssh_server.port, ssh_server.known_hosts_line())
    with pytest.raises(ConnectionLost) as info:
        SshNode("n1", spec).open()
    message = str(info.value)
    assert message == "n1: SSH connection lost or refused: authentication failed for root@127.0.0.1"
    assert pem.splitlines()[1][:20] not in message and "PRIVATE KEY" not in message
    assert ssh_server.connections == 1  # no retry storm


def test_case_10_no_agent_no_key_search(tmp_path: Path) -> None:
    spec, _ = client_spec(tmp_path, 22, "")
    conn = SshNode("n1", spec)._new_connection()
    assert conn.connect_kwargs["allow_agent"] is False
    assert conn.connect_kwargs["look_for_keys"] is False
    assert conn.connect_kwargs["key_filename"] == [str(spec.key)]


def test_case_11_host_key_policy_is_reject(tmp_path: Path) -> None:
    spec, _ = client_spec(tmp_path, 22, "")
    conn = SshNode("n1", spec)._new_connection()
    assert isinstance(vars(conn.client)["_policy"], paramiko.RejectPolicy)  # fabric installs AutoAddPolicy


def test_case_11_unknown_host_key_is_refused(tmp_path: Path, ssh_server: SshServer) -> None:
    spec, _ = client_spec(tmp_path, ssh_server.port, "")
    with pytest.raises(HostKeyRefused, match=rf"host key of 127.0.0.1 is not in {re.escape(str(spec.known_hosts))}"):
        SshNode("n1", spec).open()
    assert not spec.known_hosts.read_text()  # nothing was added (no TOFU)


def test_case_11_changed_host_key_is_refused(tmp_path: Path, ssh_server: SshServer) -> None:
    other, _ = new_key()
    spec, _ = client_spec(tmp_path, ssh_server.port, ssh_server.known_hosts_line(other))
    with pytest.raises(HostKeyRefused, match=r"host key of 127.0.0.1 CHANGED") as info:
        SshNode("n1", spec).open()
    assert info.value.exit_code == 3


def test_case_11_missing_known_hosts_refuses_before_connecting(tmp_path: Path, ssh_server: SshServer) -> None:
    spec, _ = client_spec(tmp_path, ssh_server.port, None)
    with pytest.raises(HostKeyRefused, match=r"known_hosts file .* does not exist"):
        SshNode("n1", spec).open()
    assert ssh_server.connections == 0


@dataclass
class _FabricResult:
    exited: int
    stdout: str
    stderr: str


@dataclass
class FakeConnection:
    """Stands in for fabric's Connection inside SshNode: records commands, replies or raises."""

    reply: _FabricResult | BaseException
    commands: list[str] = field(default_factory=list)
    is_connected: bool = True
    closed: bool = False

    def run(self, command: str, timeout: float) -> _FabricResult:
        self.commands.append(command)
        if isinstance(self.reply, BaseException):
            raise self.reply
        return self.reply

    def close(self) -> None:
        self.closed = True
        self.is_connected = False


def sudo_node(tmp_path: Path, reply: _FabricResult | BaseException) -> tuple[SshNode, FakeConnection]:
    spec, _ = client_spec(tmp_path, 22, "", user="ci", sudo=True)
    node = SshNode("n1", spec)
    conn = FakeConnection(reply)
    node._conn = conn
    return node, conn


def test_case_12_sudo_needs_a_password(tmp_path: Path) -> None:
    # constructed: what `sudo -n` prints when a password would be needed (sudo(8) -n)
    node, conn = sudo_node(tmp_path, _FabricResult(1, "", "sudo: a password is required\n"))
    with pytest.raises(RefusedError, match="n1: sudo needs a password; the harness only uses `sudo -n`") as info:
        node.run(["tc", "-j", "qdisc", "show", "dev", "vec1"], timeout=10)
    assert info.value.exit_code == 3
    assert conn.commands == ["sudo -n -- timeout --kill-after=5 10 tc -j qdisc show dev vec1"]  # once, no prompt


def test_case_12_preflight_blocks_on_sudo(tmp_path: Path) -> None:
    text = (ROOT / "inventories" / "lab.yaml").read_text().replace("  user: root\n", "  user: ci\n  sudo: true\n", 1)
    inv = parse_inventory(text)
    a1 = lab_node("a1", sudo=Answer(rc=1, stderr="sudo: a password is required"))
    report = preflight({"a1": a1, "a2": lab_node("a2", sudo=Answer())}, inv)
    assert finding(report, "a1", "sudo -n") == Finding("a1", "sudo -n", "BLOCK", "sudo: a password is required")
    assert finding(report, "a2", "sudo -n").status == "ok"
    assert "sudo -n true" in a1.calls


# ---------------------------------------------------------------------------------------------
# 13-15: tools, DRBD state, DRBD configuration
# ---------------------------------------------------------------------------------------------
def test_case_13_healthy_node_records_tool_versions() -> None:
    report = preflight({"a1": lab_node("a1"), "a2": lab_node("a2")})
    assert report.ok, report.render()
    assert finding(report, "a1", "fio").detail == "fio-3.33"
    assert finding(report, "a1", "drbdadm").detail == "DRBD kernel 8.4.11, utils ?"
    assert finding(report, "a1", "netem").detail == "sch_netem available"


@pytest.mark.parametrize(
    ("changes", "check", "detail"),
    [
        # dash's message for a missing command, exit 127 (as /bin/sh printed it on the CI machine)
        (
            {"fio": Answer(rc=127, stderr="sh: 1: fio: not found")},
            "fio",
            "`fio` missing or failing on the node: sh: 1: fio: not found",
        ),
        (
            {"tc": Answer(rc=127, stderr="sh: 1: tc: not found")},
            "tc",
            "`tc` missing or failing on the node: sh: 1: tc: not found",
        ),
        ({"product": Answer(rc=127, stderr="sh: 1: drbdadm: not found")}, "drbdadm", "`drbdadm` missing or failing"),
        # constructed: kmod's message when the module does not exist
        (
            {"netem": Answer(rc=1, stderr="modinfo: ERROR: Module sch_netem not found.")},
            "netem",
            "sch_netem kernel module not available",
        ),
    ],
    ids=["no-fio", "no-tc", "no-drbdadm", "no-netem"],
)
def test_case_13_missing_tool_blocks(changes: dict[str, Answer], check: str, detail: str) -> None:
    a1 = lab_node("a1")
    a1.batch.update(changes)
    report = preflight({"a1": a1, "a2": lab_node("a2")})
    found = finding(report, "a1", check)
    assert found.status == "BLOCK" and found.detail.startswith(detail)
    assert not report.ok and mutations(a1) == []


def test_case_13_tool_printing_nothing_is_a_blocker_not_a_crash() -> None:
    report = preflight({"a1": lab_node("a1", fio=Answer()), "a2": lab_node("a2")})
    assert finding(report, "a1", "fio").status == "BLOCK"


NOT_READY = [
    ("drbd/84-events2-now-primary-standalone.txt", "connection to node 0 is StandAlone"),
    ("drbd/84-events2-now-primary-standalone-outofsync.txt", "replication to node 0 volume 0 is Off"),
    ("drbd/84-events2-now-primary-syncsource.txt", "replication to peer volume 0 is SyncSource"),
    ("drbd/84-events2-now-secondary-synctarget.txt", "local disk of volume 0 is Inconsistent"),
    ("drbd/84-events2-now-secondary-connected.txt", "a1 is Secondary, the inventory says Primary"),
    ("drbd/9-events2-no-resources.txt", "resource single-az not configured on a1"),
    # a3's multi-az resource with its peer gone: the single-az resource is not on this node at all
    ("drbd/84-events2-now-primary-peer-gone-connecting.txt", "resource single-az not configured on a1"),
]


@pytest.mark.parametrize(("events", "problem"), NOT_READY, ids=[Path(e).stem for e, _ in NOT_READY])
def test_case_14_drbd_not_ready_is_refused_and_never_repaired(events: str, problem: str) -> None:
    a1, a2 = lab_node("a1", events=events), lab_node("a2")
    report = preflight({"a1": a1, "a2": a2})
    drbd = finding(report, "single-az (a1)", "drbd")
    assert drbd.status == "BLOCK" and problem in drbd.detail
    assert mutations(a1, a2) == [] and forbidden(a1, a2) == []


def test_case_14_healthy_resource_passes() -> None:
    report = preflight({"a1": lab_node("a1"), "a2": lab_node("a2")})
    assert finding(report, "single-az (a1)", "drbd").detail == "Connected UpToDate/UpToDate Primary/Secondary"


def test_case_14_bounded_wait_then_refusal_without_repair() -> None:
    events = ("drbdsetup", "events2", "--now", "--statistics", "single-az")
    node = FakeRunner("a1", argv={events: [Answer(data("drbd/84-events2-now-primary-syncsource.txt"))]})
    clock = [0.0]

    def sleep(seconds: float) -> None:
        clock[0] += seconds

    replication = DrbdReplication(node, "single-az", clock=lambda: clock[0], sleep=sleep)
    with pytest.raises(DrbdNotReady, match=r"not healthy after 5 s.*SyncSource") as info:
        replication.wait_healthy(5)
    assert info.value.exit_code == 3 and clock[0] == pytest.approx(5.0)
    assert set(node.calls) == {shlex.join(events)}  # it only looked


def test_case_15_production_flag_is_strict() -> None:
    """The inventory flag the disruptive-test opt-in reads is parsed strictly (no YAML 1.1 `on`)."""
    assert parse_inventory(MINI + "production: true\n").production is True
    assert parse_inventory(MINI).production is False
    with pytest.raises(ConfigError, match="production: Input should be a valid boolean"):
        parse_inventory(MINI + "production: on\n")


def test_case_15_lab_configuration_is_not_risky() -> None:
    # recorded (`drbdsetup show` on a1) and constructed (--show-defaults, drbdadm -v dump)
    assert audit_show(data("drbd/84-drbdsetup-show.txt"), "single-az", "C") == []
    assert audit_show(data("drbd/84-drbdsetup-show-defaults-constructed.txt"), "single-az", "C") == []
    assert audit_dump(data("drbd/84-drbdadm-dump-constructed.txt"), "single-az", "C") == []
    # recorded on the lab's a1: the real 8.4.11 outputs of what preflight runs
    assert audit_show(data("drbd/84-drbdsetup-show-defaults-lab.txt"), "single-az", "C") == []
    assert audit_dump(data("drbd/84-drbdadm-dump-lab.txt"), "single-az", "C") == []
    assert [r.check for r in audit_show(data("drbd/84-drbdsetup-show-defaults-lab.txt"), "single-az", "B")] == [
        "protocol"
    ]
    # without --show-defaults the kernel omits protocol C: absent means DRBD's default, C
    assert [r.check for r in audit_show(data("drbd/84-drbdsetup-show.txt"), "single-az", "A")] == ["protocol"]
    report = preflight({"a1": lab_node("a1"), "a2": lab_node("a2")})
    assert finding(report, "a1", "config single-az") == Finding(
        "a1", "config single-az", "ok", "no fencing, quorum, automatic split-brain recovery or dual primary"
    )
    assert finding(report, "a2", "cluster manager").detail == "no Pacemaker or drbd-reactor running"


RISKY = [
    (
        audit_show,
        "drbd/84-drbdsetup-show-defaults-risky-constructed.txt",
        "single-az",
        [
            "protocol: the resource runs protocol B, the inventory says C",
            "fencing: fencing resource-and-stonith: on losing the peer the primary freezes all I/O",
            "split-brain policy: automatic data loss configured: after-sb-0pri discard-zero-changes",
            "split-brain policy: automatic data loss configured: after-sb-1pri discard-secondary",
            "two primaries: allow-two-primaries yes",
        ],
    ),
    (
        audit_dump,
        "drbd/84-drbdadm-dump-risky-constructed.txt",
        "single-az",
        [
            "protocol: the resource runs protocol B",
            "fencing: fencing resource-and-stonith",
            "fence-peer handler: fence-peer /usr/lib/drbd/crm-fence-peer.sh: runs when the peer is lost",
            "split-brain policy: automatic data loss configured: after-sb-0pri discard-zero-changes",
            "split-brain policy: automatic data loss configured: after-sb-1pri discard-secondary",
            "two primaries: allow-two-primaries yes",  # the bare flag `allow-two-primaries;`
        ],
    ),
    (
        audit_show,
        "drbd/9-drbdsetup-show-quorum-constructed.txt",
        "r0",
        ["quorum: quorum majority with on-no-quorum io-error: on two nodes a partition leaves neither side"],
    ),
]


@pytest.mark.parametrize(("audit", "path", "resource", "expected"), RISKY, ids=[Path(r[1]).stem for r in RISKY])
def test_case_15_risky_configuration_is_named(
    audit: Callable[[str, str, str], list[Risk]], path: str, resource: str, expected: list[str]
) -> None:
    risks = audit(data(path), resource, "C")
    assert len(risks) == len(expected)
    for risk, start in zip(risks, expected, strict=True):
        assert str(risk).startswith(start), str(risk)


def test_case_15_common_section_counts_unless_the_resource_overrides_it() -> None:
    """`drbdadm dump` of a whole file: settings in `common` apply to the resource."""
    text = (
        "common {\n    net {\n        after-sb-0pri discard-least-changes;\n        protocol A;\n    }\n"
        "    handlers {\n        fence-peer /usr/lib/drbd/crm-fence-peer.9.sh;\n    }\n}\n"
        + data("drbd/84-drbdadm-dump-constructed.txt")
    )
    checks = [r.check for r in audit_dump(text, "single-az", "C")]
    assert checks == ["fence-peer handler", "split-brain policy"]  # the resource's protocol C wins


def test_case_15_audit_fails_closed() -> None:
    recorded = data("drbd/84-drbdsetup-show.txt")
    assert audit_show(recorded, "multi-az", "C") == [
        Risk("audit", "`drbdsetup show multi-az` does not list multi-az: its running configuration cannot be checked")
    ]
    truncated = audit_show(recorded.rsplit("}", 2)[0], "single-az", "C")
    assert [r.check for r in truncated] == ["audit"] and "never closed" in truncated[0].detail
    plan = AuditPlan({"single-az": "C"})
    answers = {
        **{k: CommandResult("a1", " ".join(v), 0, "", "", 0.0) for k, v in plan.commands().items()},
        # constructed: drbdsetup-84's answer for a resource the kernel does not know
        "audit_show_single_2daz": CommandResult(
            "a1", "drbdsetup show --show-defaults single-az", 10, "", "single-az: Failure: (158) Unknown resource", 0
        ),
        "audit_dump_single_2daz": CommandResult("a1", "", 0, data("drbd/84-drbdadm-dump-constructed.txt"), "", 0.0),
    }
    audit = plan.evaluate(answers)
    assert [str(r) for r in audit.resources["single-az"]] == [
        "audit: `drbdsetup show --show-defaults single-az` failed: single-az: Failure: (158) Unknown resource"
    ]


def _result(stdout: str = "", rc: int = 0, stderr: str = "") -> CommandResult:
    return CommandResult("n1", "probe", rc, stdout, stderr, 0.0)


def test_case_15_cluster_managers_are_found() -> None:
    no_systemd = _result(rc=NO_SYSTEMD.rc, stderr=NO_SYSTEMD.stderr)
    assert audit_managers(no_systemd, _result(GUEST_PROCESSES)) == []  # the lab
    # systemd: one state per unit, in the order asked (`systemctl is-active pacemaker drbd-reactor`)
    found = audit_managers(_result("active\ninactive\n", rc=3), _result("    1 systemd\n  977 pacemakerd\n"))
    assert [str(r) for r in found] == [
        "cluster manager: unit pacemaker is active: it may manage the resource and react to the fault itself "
        "(promote the peer, fence, restart)"
    ]
    reactor = audit_managers(no_systemd, _result(GUEST_PROCESSES + " 1200 drbd-reactor\n"))
    assert [r.detail.split(":")[0] for r in reactor] == ["process drbd-reactor (pid 1200) is running"]
    blind = audit_managers(no_systemd, _result(rc=127, stderr="sh: 1: ps: not found"))
    assert blind == [Risk("audit", "cannot tell whether Pacemaker or drbd-reactor run here (sh: 1: ps: not found)")]


def _risky_node(name: str) -> FakeRunner:
    """A lab guest whose resource has fencing, a fence-peer handler, discard policies, two
    primaries and protocol B (the constructed risky show and dump)."""
    node = lab_node(name)
    node.batch.update(
        audit_answers(
            "drbd/84-drbdsetup-show-defaults-risky-constructed.txt", "drbd/84-drbdadm-dump-risky-constructed.txt"
        )
    )
    return node


def test_case_15_preflight_warns_and_blocks_a_disruptive_run() -> None:
    a1, a2 = _risky_node("a1"), lab_node("a2")
    report = preflight({"a1": a1, "a2": a2})
    config = finding(report, "a1", "config single-az")
    assert config.status == "warn" and "automatic data loss configured" in config.detail
    assert report.ok  # ordinary scenarios run; the risk is in the table
    pool = cast(ConnectionPool, FakePool({"a1": _risky_node("a1"), "a2": lab_node("a2")}))
    disruptive = run_preflight(LAB, pool, pairs=["single-az"], disruptive=True)
    assert finding(disruptive, "a1", "config single-az").status == "BLOCK" and not disruptive.ok
    assert finding(disruptive, "a2", "config single-az").status == "ok"
    assert mutations(a1, a2) == []


PROD = "name: prod-db\nproduction: true\n" + MINI.split("\n", 1)[1]


@pytest.mark.parametrize(
    ("inventory", "value", "expected"),
    [
        (MINI, None, f"which is not the embedded lab; enable with {OPTION}"),
        (MINI, "", None),
        (MINI, "mini", None),
        (PROD, None, f"marked production: true; confirm by naming it: {OPTION}=prod-db"),
        (PROD, "", f"marked production: true; confirm by naming it: {OPTION}=prod-db"),
        (PROD, "prod-db", None),
    ],
    ids=["plain-no-flag", "plain-flag", "plain-named", "prod-no-flag", "prod-bare-flag", "prod-named"],
)
def test_case_15_disruptive_tests_need_an_explicit_opt_in(inventory: str, value: str | None, expected: str) -> None:
    reason = skip_reason(parse_inventory(inventory), value)
    assert (reason is None) if expected is None else (reason is not None and reason.endswith(expected))
    assert skip_reason(LAB, None) is None  # the embedded lab needs no opt-in


@given(st.from_regex(r"\A[A-Za-z0-9_.-]{1,64}\Z"))
def test_case_15_no_other_name_reaches_production(name: str) -> None:
    prod = parse_inventory(PROD)
    if name == "prod-db":
        assert skip_reason(prod, name) is None and opt_in_error(prod, name) is None
    else:
        error = opt_in_error(prod, name)
        assert error is not None and f"{OPTION}=prod-db" in error  # the whole run stops
        assert skip_reason(prod, name) is not None


def test_case_15_risky_configuration_refuses_a_disruptive_test_before_any_change() -> None:
    a1, a2 = lab_node("a1"), _risky_node("a2")
    with pytest.raises(RefusedError, match=r"pair single-az: refusing a disruptive test .* before any change") as info:
        refuse_risky(LAB, cast(ConnectionPool, FakePool({"a1": a1, "a2": a2})), "single-az")
    assert "a2: fence-peer handler: fence-peer /usr/lib/drbd/crm-fence-peer.sh" in str(info.value)
    assert "a1:" not in str(info.value) and info.value.exit_code == 3
    assert mutations(a1, a2) == []
    refuse_risky(LAB, cast(ConnectionPool, FakePool({"a1": lab_node("a1"), "a2": lab_node("a2")})), "single-az")


#: constructed: a real node's answers to SysrqCrasher.prepare (kernel.panic 0 is the kernel's
#: default; 10 is what `sysctl kernel.panic=10` sets; kexec_crash_loaded 0: no kdump kernel).
def crash_node(
    name: str, *, panic: str = "10", kexec: str = "0", trigger: str = "writable", boot: str = ""
) -> FakeRunner:
    return FakeRunner(
        name,
        batch={
            "trigger": Answer(f"{trigger}\n" if trigger else "", rc=0 if trigger else 1),
            "sysrq": Answer("0\n"),  # keyboard sysrq off: does not matter for /proc/sysrq-trigger
            "panic": Answer(f"{panic}\n"),
            "kexec": Answer(f"{kexec}\n"),
            "boot_id": Answer(boot or "6f1c2f1e-3a4b-4c5d-8e9f-0a1b2c3d4e5f\n"),
        },
        scripts=[("/proc/sysrq-trigger", Answer())],
    )


@pytest.mark.parametrize(
    ("changes", "refusal"),
    [
        ({"panic": "0"}, "kernel.panic = 0 and no crash kernel (kdump) loaded"),
        ({"trigger": ""}, "/proc/sysrq-trigger is missing or not writable"),
        ({"panic": "?"}, "cannot read kernel.panic"),
    ],
    ids=["would-hang", "no-sysrq", "unknown-panic"],
)
def test_case_15_sysrq_crash_refuses_a_node_that_would_not_come_back(changes: dict[str, str], refusal: str) -> None:
    node = crash_node("a1", **changes)
    crasher = SysrqCrasher(cast(ConnectionPool, FakePool({"a1": node})), LAB.pairs["single-az"], sleep=lambda _s: None)
    with pytest.raises(RefusedError, match=re.escape(refusal)):
        crasher.crash("a1")  # crash() checks first when prepare() was not called
    assert not any("sysrq-trigger" in c and "echo c" in c for c in node.calls)


def test_case_15_sysrq_crash_is_a_detached_kernel_panic() -> None:
    pool = FakePool({"a1": crash_node("a1"), "a2": crash_node("a2", panic="0", kexec="1")})
    crasher = SysrqCrasher(cast(ConnectionPool, pool), LAB.pairs["single-az"], sleep=lambda _s: None)
    crasher.prepare("a2")  # kdump loaded: it reboots after saving the dump
    crasher.crash("a1")
    sent = cast(FakeRunner, pool.nodes["a1"]).calls[-1]
    assert sent == "setsid sh -c 'sleep 1; echo c > /proc/sysrq-trigger' </dev/null >/dev/null 2>&1 &"
    assert pool.resets == ["a1"]  # the streams reading from the dead node end


# ---------------------------------------------------------------------------------------------
# 16-21: size, paths, qdiscs, leftovers, read-back, lint
# ---------------------------------------------------------------------------------------------
def test_case_16_device_smaller_than_the_job() -> None:
    node = FakeRunner("a1", batch=device_probe())
    with pytest.raises(RefusedError, match=rf"is {DRBD0_BYTES} bytes, smaller than the {8 << 30} bytes the job writes"):
        guard_replicated_device(node, recorded_replication(node), needed_bytes=8 << 30)
    guard_replicated_device(node, recorded_replication(node), needed_bytes=DRBD0_BYTES)  # exactly fits


@given(st.integers(0, 64), st.integers(1, 64), st.integers(1, 4))
def test_case_16_offset_plus_size_beyond_the_end(offset_mib: int, size_mib: int, numjobs: int) -> None:
    mib = 1 << 20
    spec = WorkloadSpec(
        name="w",
        rw="write",
        size=size_mib * mib,
        offset=offset_mib * mib,
        numjobs=numjobs,
        offset_increment=size_mib * mib,
    )
    device = 128 * mib
    fits = offset_mib + numjobs * size_mib <= 128
    if fits:
        spec.check_fits(device)
    else:
        with pytest.raises(ConfigError, match="but the target holds only 134217728 bytes"):
            spec.check_fits(device)


@pytest.mark.parametrize(
    ("sshconn", "status"),
    [
        ("10.213.0.1 40022 10.213.0.11 22", "ok"),  # management path
        ("10.213.1.12 40022 10.213.1.11 22", "warn"),  # SSH arrives on the replication address
        ("10.213.1.13 40022 10.213.0.11 22", "BLOCK"),  # the harness sits on a replication address
    ],
    ids=["separate", "ssh-on-replication-ip", "harness-on-replication-net"],
)
def test_case_17_replication_path_is_not_the_ssh_path(sshconn: str, status: str) -> None:
    report = preflight({"a1": lab_node("a1", sshconn=Answer(sshconn + "\n")), "a2": lab_node("a2")})
    assert finding(report, "a1", "paths").status == status


def test_case_17_only_traffic_to_the_peer_is_shaped() -> None:
    argv = apply_commands(NetemProfile("wan", delay_s=0.005), "vec1", "10.213.1.12")
    assert argv[0][-16:] == ["0"] * 16  # priomap all 0: unclassified traffic (SSH, others) is untouched
    assert argv[-1][-6:] == ["match", "ip", "dst", "10.213.1.12/32", "flowid", "4842:2"]
    assert not any("replace" in a for a in argv)


def test_case_17_wrong_replication_address_blocks() -> None:
    report = preflight({"a1": lab_node("a1", addr=Answer(ip_addr_line("vec1", "10.213.9.9"))), "a2": lab_node("a2")})
    assert finding(report, "a1", "replication iface").status == "BLOCK"


def test_case_17_replication_address_is_matched_exactly() -> None:
    text = (ROOT / "inventories" / "lab.yaml").read_text().replace("ip: 10.213.1.11,", "ip: 10.213.1.1,")
    report = preflight({"a1": lab_node("a1"), "a2": lab_node("a2")}, parse_inventory(text))
    assert finding(report, "a1", "replication iface").status == "BLOCK"


QDISC_T = NetemProfile("t", delay_s=0.001, rate_bits=128e6)  # what made tests/data/tc/lab/harness-t-*.json
PEER = "10.213.1.12"
QSHOW = ("tc", "-j", "qdisc", "show", "dev", "vec1")
FSHOW = ("tc", "-j", "filter", "show", "dev", "vec1", "parent", "4842:")


def tc_node(qdiscs: list[str], filters: list[str]) -> FakeRunner:
    return FakeRunner(
        "a1",
        argv={QSHOW: [Answer(data(f"tc/{q}")) for q in qdiscs], FSHOW: [Answer(data(f"tc/{f}")) for f in filters]},
        scripts=[("", Answer())],
    )


@pytest.mark.parametrize(
    "root", ["lab/foreign-htb-root.json", "qdisc-recorded-htb-on-reserved-handle.json", "lab/router-netem-1ms.json"]
)
def test_case_18_foreign_qdisc_is_left_alone(tmp_path: Path, root: str) -> None:
    node = tc_node([root], ["filter-recorded-empty.json"])
    ledger = Ledger(tmp_path / "ledger.ndjson", RUN_ID)
    with pytest.raises(RefusedError, match=r"a1: vec1 has a qdisc the harness did not create .*refusing to touch it"):
        Impairer(RUN_ID, ledger).apply(node, iface="vec1", peer_ip=PEER, profile=QDISC_T, hold_s=60, role="primary")
    assert mutations(node) == [] and ledger.entries() == []  # not even an intent


def test_case_18_preflight_reports_a_foreign_root() -> None:
    report = preflight({"a1": lab_node("a1", qdisc=Answer(data("tc/lab/foreign-htb-root.json"))), "a2": lab_node("a2")})
    assert finding(report, "a1", "qdisc").status == "BLOCK"
    assert "htb 1: root was configured by someone else" in finding(report, "a1", "qdisc").detail


def test_case_19_leftover_harness_qdisc_refuses_a_new_fault(tmp_path: Path) -> None:
    node = tc_node(["lab/harness-t-qdisc.json"], ["lab/harness-t-filter.json"])
    with pytest.raises(RefusedError, match=r"already carries a harness qdisc .*run `harness cleanup"):
        Impairer(RUN_ID, Ledger(tmp_path / "l", RUN_ID)).apply(
            node, iface="vec1", peer_ip=PEER, profile=QDISC_T, hold_s=60, role="primary"
        )
    assert mutations(node) == []


LISTING = (  # the leftover finder's own output format (KIND, RUN-ID, DETAIL)
    f"fault\t{OTHER_RUN_ID}\t/run/harness/{OTHER_RUN_ID}/faults/a1-vec1-1-1763718300.json\n"
    f"fio\t{OTHER_RUN_ID}\t4242 /run/harness/{OTHER_RUN_ID}/fio-single-az-x.pid\n"
    "qdisc\t-\tvec1\n"
    'lock\t-\t{"run_id": "' + OTHER_RUN_ID + '"}\n'
)


def test_case_19_leftovers_are_reported_and_removed_only_when_owned() -> None:
    a1 = lab_node("a1")
    a1.scripts[0] = ("/faults/*.json", Answer(LISTING))
    report = preflight({"a1": a1, "a2": lab_node("a2")})
    left = finding(report, "a1", "leftovers")
    assert left.status == "BLOCK" and left.detail.endswith("run `harness cleanup --inventory FILE`")
    assert left.detail.startswith(f"a1: fault (run {OTHER_RUN_ID}): /run/harness/{OTHER_RUN_ID}/faults/")
    items = parse_listing("a1", LISTING)
    node = FakeRunner("a1", scripts=[("", Answer())])
    done = remove_leftovers(node, [*items, replace(items[2], node="a2")])
    assert len(done) == 3  # fault, fio, qdisc; not the lock, not a2's item
    assert "tc qdisc del dev vec1 root handle 4842:" in node.calls[2]
    assert "pkill -TERM -s 4242" in node.calls[1]
    assert not any("/run/harness/lock" in c for c in node.calls)
    remove_leftovers(node, items, break_lock=True)
    assert node.calls[-1].startswith("rm -rf /run/harness/lock")


def test_case_19_find_leftovers_filters_by_run() -> None:
    node = FakeRunner("a1", scripts=[("/faults/*.json", Answer(LISTING))])
    assert [i.kind for i in find_leftovers(node, run_id=RUN_ID)] == ["qdisc", "lock"]  # unknown run: always shown
    assert len(find_leftovers(node, run_id=OTHER_RUN_ID)) == 4
    with pytest.raises(ConfigError):
        find_leftovers(node, run_id="x; rm -rf /")
    assert mutations(node) == []


def test_case_20_applied_fault_is_read_back(tmp_path: Path) -> None:
    node = tc_node(
        ["lab/default-root.json", "lab/harness-t-qdisc.json"],
        ["filter-recorded-empty.json", "lab/harness-t-filter.json"],
    )
    ledger = Ledger(tmp_path / "ledger.ndjson", RUN_ID)
    applied = Impairer(RUN_ID, ledger).apply(
        node, iface="vec1", peer_ip=PEER, profile=QDISC_T, hold_s=60, role="primary"
    )
    assert applied is not None and applied.readback == data("tc/lab/harness-t-qdisc.json")
    assert [e["event"] for e in ledger.entries()] == ["impair-intent", "impair-applied"]


@pytest.mark.parametrize(
    ("after_q", "after_f", "problem"),
    [
        # someone else's prio tree on our handle: bands 3, priomap 1s, netem limit 3000 (lab-recorded)
        ("lab/prio-netem-tbf.json", "lab/u32-filter.json", "root prio: expected bands 2 priomap all 0"),
        # the fault silently absent: tc said nothing, the default root is still there
        ("lab/default-root.json", "filter-recorded-empty.json", "root: expected the harness prio root 4842:"),
        # the tree without its filter: nothing is steered into netem
        ("lab/harness-t-qdisc.json", "filter-recorded-empty.json", "nothing is impaired"),
    ],
    ids=["wrong-tree", "absent", "no-filter"],
)
def test_case_20_fault_applied_wrongly_is_removed_and_aborts(
    tmp_path: Path, after_q: str, after_f: str, problem: str
) -> None:
    node = tc_node(["lab/default-root.json", after_q, "lab/default-root.json"], ["filter-recorded-empty.json", after_f])
    ledger = Ledger(tmp_path / "ledger.ndjson", RUN_ID)
    with pytest.raises(ImpairmentMismatch, match=rf"a1: impairment read back differs: .*{re.escape(problem)}"):
        Impairer(RUN_ID, ledger).apply(node, iface="vec1", peer_ip=PEER, profile=QDISC_T, hold_s=60, role="primary")
    apply = next(i for i, c in enumerate(node.calls) if "tc qdisc add" in c)
    clear = [i for i, c in enumerate(node.calls) if "tc qdisc del dev vec1 root handle 4842:" in c and i != apply]
    assert len(clear) == 1 and clear[0] > apply  # removed after the bad read-back
    assert [e["event"] for e in ledger.entries()] == ["impair-intent", "impair-applied", "impair-cleared"]


def test_case_20_rtt_that_did_not_move_aborts() -> None:
    spec = CellSpec(
        "s",
        "single-az",
        WorkloadSpec(name="w", rw="randwrite", size=1 << 20),
        impairment=NetemProfile.from_rtt("rtt4ms", 0.004),
    )
    base = RttStats((0.5,) * 20, 20, 20)
    with pytest.raises(ImpairmentMismatch, match=r"RTT 0.50 ms after applying .*expected 4.50 ± 0.75 ms"):
        check_rtt(spec, base, base)
    check_rtt(spec, base, RttStats((4.4,) * 20, 20, 20))


def test_case_20_recorded_harness_trees_verify_exactly() -> None:
    filters = parse_filters(data("tc/lab/harness-t-filter.json"))
    assert verify_applied(QDISC_T, parse_qdiscs(data("tc/lab/harness-t-qdisc.json")), filters, PEER) == []
    t2 = NetemProfile("t2", delay_s=0.005, jitter_s=0.001, loss_pct=0.5)
    assert verify_applied(t2, parse_qdiscs(data("tc/lab/harness-t2-qdisc.json")), filters, PEER) == []
    assert verify_applied(t2, parse_qdiscs(data("tc/lab/harness-t2-qdisc.json")), filters, "10.213.1.13")


@given(
    st.floats(0, 2.0),
    st.floats(0, 1.0),
    st.sampled_from(get_args(Direction)),
    st.one_of(st.none(), st.floats(1e6, 1e9)),
)
def test_case_21_latency_near_drbd_timeouts_needs_opt_in(
    delay: float, jitter_frac: float, direction: Direction, rate: float | None
) -> None:
    delay = round(delay, 6)
    profile = NetemProfile(
        "p", delay_s=delay, jitter_s=round(delay * jitter_frac, 6), rate_bits=rate, direction=direction
    )
    worst = profile.added_rtt_max_s + (profile.tbf_latency_s or 0.0)
    levels = {f.code: f.level for f in lint_profile(profile)}
    assert (levels.get("drbd-ping-timeout") == "error") == (worst >= 0.5)
    assert (levels.get("drbd-timeout") == "error") == (worst >= 6.0)
    # the lab's resource runs with ping-timeout 10 (tenths, tests/data/drbd/84-drbdsetup-show.txt)
    lab_levels = {f.code: f.level for f in lint_profile(profile, ping_timeout_s=1.0)}
    assert (lab_levels.get("drbd-ping-timeout") == "error") == (worst >= 1.0)
    # netem's queue holds the bandwidth-delay product with headroom
    limit = profile.limit_packets()
    assert limit >= NETEM_DEFAULT_LIMIT
    assert limit >= 1.5 * max(10e9, rate or 0) * (profile.delay_s + profile.jitter_s) / (8 * 1500) - 1e-6


# ---------------------------------------------------------------------------------------------
# 22-25: during the run
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("capture", "when"),
    [
        ("84-events2-stream-primary-disconnect-resync.txt", "2026-11-21T09:48:02.743260"),
        ("84-events2-stream-secondary-disconnect-resync.txt", "2026-11-21T09:48:02.740644"),
    ],
)
def test_case_22_drbd_state_change_during_a_run_invalidates_it(capture: str, when: str) -> None:
    text = data(f"drbd/{capture}")
    verdict = check_capture(text, resource="single-az")
    assert not verdict.valid and when in verdict.reason and verdict.event is not None
    spec = CellSpec("s", "single-az", WorkloadSpec(name="w", rw="randwrite", size=1 << 20))
    watch = recorded_replication(FakeRunner("a1")).watch(RUN_ID, spec.id, max_duration_s=60)

    def judged(capture: str) -> str:
        return validity(spec, watch.judge(f"harness-watch alive=1\n{capture}")).verdict

    in_window = validity(spec, watch.judge(f"harness-watch alive=1\n{text}"))
    assert in_window.verdict == "inconclusive" and when in in_window.reason
    assert judged("") == "inconclusive"
    assert judged(data("drbd/84-events2-now-primary-connected.txt")) == "pass"
    # the watcher was gone before fio ended: the end of the window was not seen
    gone = watch.judge(f"harness-watch alive=0\n{data('drbd/84-events2-now-primary-connected.txt')}")
    assert validity(spec, gone).verdict == "inconclusive"
    disconnected = CellSpec("s", "single-az", WorkloadSpec(name="w", rw="randwrite", size=1 << 20), mode="disconnected")
    assert validity(disconnected, None).reason == "disconnected by design"


def fio_run_node(output: str, rc: str) -> FakeRunner:
    """A node where fio was started, exited with ``rc`` and left ``output`` as its JSON file."""
    # the wait is one batch: `rc` blocks until fio exits, `fio` then prints the JSON file
    return FakeRunner("a1", scripts=[("setsid", Answer())], batch={"rc": Answer(rc), "fio": Answer(output)})


def _tail_answers(node: FakeRunner, log: str, text: str) -> None:
    node.argv[("tail", "-n", "8", log)] = [Answer(text)]


# Recorded stderr of the runs that made the JSON files (tests/data/fio/README.md).
DEVFULL_STDERR = "fio: io_u error on file /dev/full: No space left on device: write offset=0, buflen=4096"
LOST_WRITES_STDERR = (
    "verify: bad magic header 0, wanted acca at file /work/tmp-fio/scratch.img offset 1011712, length 4096 "
    "(requested block: offset=1011712, length=4096)"
)


@pytest.mark.parametrize(
    ("rc", "output", "message"),
    [
        (1, "fio/fio-3.33-error-devfull.json", r"failed \(exit 1, fio error 28\): " + re.escape(DEVFULL_STDERR)),
        (0, "fio/fio-3.33-error-devfull.json", r"failed \(exit 0, fio error 28\)"),
        (1, None, r"exited 1 without usable JSON \(fio JSON output is truncated"),
        (0, "", r"exited 0 without usable JSON \(no JSON document"),
        (137, "fio/fio-3.33-randwrite-4k-libaio.json", r"hit its node-side deadline of 600 s"),
    ],
    ids=["enospc", "error-in-json-exit-0", "truncated", "no-output", "killed-at-deadline"],
)
def test_case_23_fio_failing_mid_run_is_an_error(tmp_path: Path, rc: int, output: str | None, message: str) -> None:
    if output is None:
        full = data("fio/fio-3.33-randwrite-4k-libaio.json")
        text = full[: len(full) // 2]  # fio killed while writing its JSON
    else:
        text = data(output) if output else ""
    fio = FioRunner(RUN_ID, Ledger(tmp_path / "ledger.ndjson", RUN_ID))
    node = FakeRunner("a1", scripts=[("", Answer())])
    run = fio.start(node, WorkloadSpec(name="w", rw="write", size=1 << 20), "/dev/drbd0", "cell-1")
    _tail_answers(node, run.log, DEVFULL_STDERR + "\n" if output and "devfull" in output else "")
    with pytest.raises(FioFailed, match=rf"a1: fio for cell-1 .*{message}") as info:
        fio.parse(node, run, rc, text)
    assert info.value.exit_code == 5  # an error, never a throughput verdict


def test_case_24_hung_fio_is_bounded_and_stopped(tmp_path: Path) -> None:
    fio = FioRunner(RUN_ID, Ledger(tmp_path / "ledger.ndjson", RUN_ID))
    spec = WorkloadSpec(name="w", rw="randwrite", size=1 << 20, runtime_s=30, ramp_s=2, time_based=True)
    # the blocking wait (a batch whose `rc` part waits on `tail --pid`) never sees an exit code
    node = FakeRunner("a1", scripts=[("", Answer())], batch={"rc": Answer()})
    run = fio.start(node, spec, "/dev/drbd0", "cell-1")
    deadline = fio_deadline_s(spec)
    assert deadline == 62.0
    assert f"timeout --kill-after=10 {deadline:.0f} fio --name=w" in node.calls[0]  # bounded on the node
    stale = replace(run, started=time.monotonic() - deadline - 60)  # the harness-side limit has passed
    with pytest.raises(FioFailed, match="a1: fio for cell-1 did not finish within 62 s"):
        fio.wait_exit(node, stale)
    stop = node.calls[-1]
    assert "pkill -TERM -s" in stop and "pkill -KILL -s" in stop
    assert not any("resume-io" in c or "drbdadm" in c for c in node.calls)


def test_case_25_dropped_ssh_connection_is_told_apart(tmp_path: Path) -> None:
    node, conn = sudo_node(tmp_path, EOFError())
    with pytest.raises(ConnectionLost, match=r"n1: SSH connection lost or refused: during `uname -n`: EOFError"):
        node.run(["uname", "-n"], timeout=10)
    assert conn.closed and not node.connected  # the next call reconnects
    node2, _ = sudo_node(tmp_path, OSError("Socket is closed"))
    with pytest.raises(ConnectionLost, match="Socket is closed"):
        node2.run_script("true", timeout=10)


def test_case_25_batch_cut_short_is_a_lost_connection() -> None:
    class CutShort(FakeRunner):
        def run_script(self, script: str, *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
            full = super().run_script(script, timeout=timeout, check=check, sudo=sudo)
            return replace(full, stdout=full.stdout[: len(full.stdout) // 2], exit_code=255)

    node = CutShort("a1", batch={"a": Answer("x\n"), "b": Answer("y\n")})
    with pytest.raises(ConnectionLost, match=r"a1: .*batch output incomplete \(missing \['b'\]\); exit 255"):
        run_batch(node, {"a": ["true"], "b": ["true"]}, timeout=10)


def test_case_25_a_lost_connection_is_not_retried_by_state_waits() -> None:
    events = ("drbdsetup", "events2", "--now", "--statistics", "single-az")
    node = FakeRunner("a1", argv={events: [ConnectionLost("a1", "reset by peer")]})
    with pytest.raises(ConnectionLost):
        DrbdReplication(node, "single-az").wait_healthy(60)
    assert len(node.calls) == 1


# ---------------------------------------------------------------------------------------------
# 26-28: the harness process killed or interrupted
# ---------------------------------------------------------------------------------------------
def _sh_bin(tmp: Path, *tools: str) -> Path:
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for tool in tools:
        found = shutil.which(tool)
        if found is None:
            pytest.skip(f"needs {tool}")
        (bin_dir / tool).symlink_to(found)
    return bin_dir


def _wait_for(condition: object, seconds: float) -> bool:
    assert callable(condition)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


def test_case_26_dead_man_switch_fires_without_the_harness(tmp_path: Path) -> None:
    """The switch's no-systemd branch (setsid + sleep), run for real with a harmless undo."""
    bin_dir = _sh_bin(tmp_path, "sh", "sleep", "rm", "touch", "setsid", "cat", "pkill")
    env = {"PATH": str(bin_dir)}  # no systemd-run in PATH: the setsid branch
    fault, pid_file, undone = tmp_path / "f.json", tmp_path / "f.deadman", tmp_path / "undone"
    fault.write_text("{}")
    subprocess.run(
        ["/bin/sh", "-c", deadman_script(str(fault), str(pid_file), [["touch", str(undone)]], 1)],
        env=env,
        check=True,
        timeout=10,
    )
    # the arming shell (our stand-in for the harness) has exited; the node undoes the fault alone
    assert _wait_for(lambda: undone.exists() and not fault.exists(), 10)
    # disarmed in time (the harness cleared the fault itself): the undo never runs
    fault2, pid2, undone2 = tmp_path / "g.json", tmp_path / "g.deadman", tmp_path / "undone2"
    fault2.write_text("{}")
    subprocess.run(
        ["/bin/sh", "-c", deadman_script(str(fault2), str(pid2), [["touch", str(undone2)]], 1)],
        env=env,
        check=True,
        timeout=10,
    )
    subprocess.run(["/bin/sh", "-c", disarm_script(str(fault2), str(pid2))], env=env, check=True, timeout=10)
    time.sleep(2.0)
    assert not undone2.exists() and not fault2.exists() and not pid2.exists()


def test_case_26_every_node_side_job_has_its_own_deadline(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.ndjson", RUN_ID)
    node = tc_node(
        ["lab/default-root.json", "lab/harness-t-qdisc.json"],
        ["filter-recorded-empty.json", "lab/harness-t-filter.json"],
    )
    Impairer(RUN_ID, ledger).apply(node, iface="vec1", peer_ip=PEER, profile=QDISC_T, hold_s=120, role="primary")
    apply_script = next(c for c in node.calls if "tc qdisc add" in c)
    # the switch is armed before the first tc change, in the same script
    assert apply_script.index("--on-active=120") < apply_script.index("tc qdisc add")
    assert apply_script.index("sleep 120") < apply_script.index("tc qdisc add")
    fio_node = FakeRunner("a1", scripts=[("", Answer())])
    FioRunner(RUN_ID, ledger).start(fio_node, WorkloadSpec(name="w", rw="write", size=1 << 20), "/dev/drbd0", "c")
    assert "setsid sh -c" in fio_node.calls[0] and "timeout --kill-after=10 600 fio" in fio_node.calls[0]


def test_case_27_ctrl_c_exits_130(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def interrupted(_args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(harness.cli, "_preflight", interrupted)
    assert harness.cli.main(["preflight", "--inventory", "x.yaml"]) == 130
    assert "interrupted" in capsys.readouterr().err


def test_case_27_undo_is_registered_before_anything_changes(tmp_path: Path) -> None:
    """An interrupt landing inside apply/start must still find the fault and the fio job."""
    ledger = Ledger(tmp_path / "ledger.ndjson", RUN_ID)
    node = tc_node(
        ["lab/default-root.json", "lab/harness-t-qdisc.json"],
        ["filter-recorded-empty.json", "lab/harness-t-filter.json"],
    )
    seen: list[list[str]] = []
    Impairer(RUN_ID, ledger).apply(
        node, iface="vec1", peer_ip=PEER, profile=QDISC_T, hold_s=60, role="primary",
        on_planned=lambda _planned: seen.append(mutations(node)),
    )  # fmt: skip
    assert seen == [[]] and mutations(node)
    fio_node = FakeRunner("a1", scripts=[("", Answer())])
    planned: list[int] = []
    FioRunner(RUN_ID, ledger).start(
        fio_node, WorkloadSpec(name="w", rw="write", size=1 << 20), "/dev/drbd0", "c",
        on_planned=lambda _run: planned.append(len(fio_node.calls)),
    )  # fmt: skip
    assert planned == [0] and len(fio_node.calls) == 1


def test_case_28_sigterm_becomes_the_interrupt_path() -> None:
    with pytest.raises(KeyboardInterrupt, match="signal 15"):
        _sigterm_to_interrupt(15, None)


# ---------------------------------------------------------------------------------------------
# 29-31: reboot, clocks, concurrent runs
# ---------------------------------------------------------------------------------------------
def test_case_29_resync_after_a_node_comes_back_is_waited_for_boundedly() -> None:
    """After a reboot (or a crash test's rejoin) the resync is waited for, boundedly."""
    events = ("drbdsetup", "events2", "--now", "--statistics", "single-az")
    resync = [
        "drbd/84-events2-now-secondary-synctarget.txt",
        "drbd/84-events2-now-secondary-after-resync-progress.txt",
        "drbd/84-events2-now-secondary-connected.txt",
    ]
    node = FakeRunner("a2", argv={events: [Answer(data(f)) for f in resync]})
    clock = [0.0]

    def sleep(seconds: float) -> None:
        clock[0] += seconds

    state = DrbdReplication(node, "single-az", clock=lambda: clock[0], sleep=sleep).wait_healthy(60)
    assert state.healthy and clock[0] == 2.0 and len(node.calls) == 3
    stuck = FakeRunner("a2", argv={events: [Answer(data(resync[0]))]})
    with pytest.raises(DrbdNotReady, match="not healthy after 3 s"):
        DrbdReplication(stuck, "single-az", clock=lambda: clock[0], sleep=sleep).wait_healthy(3)


BOOT_A, BOOT_B = "0b8a4f5e-1c2d-4e3f-9a0b-1c2d3e4f5a6b", "7d6c5b4a-3f2e-4d1c-8b0a-9f8e7d6c5b4a"


def test_case_29_a_changed_boot_id_is_a_reboot() -> None:
    assert reboot_error({"a1": BOOT_A, "a2": BOOT_B}, {"a1": BOOT_A, "a2": BOOT_B}) is None
    assert reboot_error({"a1": BOOT_A}, {"a1": BOOT_B}) == (
        f"node a1 rebooted during the cell (boot_id {BOOT_A} → {BOOT_B}): tc state and fio are gone"
    )
    assert reboot_error({"a1": BOOT_A}, {}) == "node a1: no boot_id read after the cell"
    # a crash test: the crashed node must have rebooted, the others must not
    assert reboot_error({"a1": BOOT_A, "a2": BOOT_B}, {"a1": BOOT_B, "a2": BOOT_B}, crashed={"a1"}) is None
    assert reboot_error({"a1": BOOT_A}, {"a1": BOOT_A}, crashed={"a1"}) == (
        f"node a1 was crashed but did not reboot (boot_id {BOOT_A} unchanged)"
    )


@given(st.uuids(), st.uuids(), st.sampled_from(["", "\n", "  \n"]))
def test_case_29_boot_ids_are_compared_as_uuids(first: object, second: object, tail: str) -> None:
    before = parse_boot_id(f"{first}{tail}")
    after = parse_boot_id(str(second).upper() + tail)  # case and whitespace do not make a reboot
    assert (reboot_error({"n": before}, {"n": after}) is None) == (first == second)


def test_case_29_garbage_is_not_a_boot_id() -> None:
    with pytest.raises(HarnessError, match=f"a1: {BOOT_ID_PATH} printed 'cat: .*', not a boot id"):
        parse_boot_id("cat: /proc/sys/kernel/random/boot_id: No such file or directory\n", "a1")


def boot_node(name: str, *boot_ids: str | BaseException) -> FakeRunner:
    """A node answering `cat boot_id` with these values in turn (the last repeats)."""
    answers = [b if isinstance(b, BaseException) else Answer(f"{b}\n") for b in boot_ids]
    return FakeRunner(name, argv={("cat", BOOT_ID_PATH): answers})


def test_case_29_a_reboot_during_the_cell_is_an_error() -> None:
    a1, a2 = boot_node("a1", BOOT_A), boot_node("a2", BOOT_B, BOOT_A)
    message = re.escape(f"node a2 rebooted during the cell (boot_id {BOOT_B} → {BOOT_A}): tc state and fio are gone")
    with pytest.raises(NodeRebooted, match=message), watch_reboots([a1, a2]):
        pass
    # the primary's id can come from a batch the cell runs anyway (raw `cat` output)
    a1 = boot_node("a1", BOOT_A)
    with watch_reboots([a1, boot_node("a2", BOOT_B)], known={"a1": f"{BOOT_A}\n"}):
        pass
    assert len(a1.calls) == 1  # read once, on the way out


def test_case_29_a_reboot_explains_the_failure_it_caused() -> None:
    lost = ConnectionLost("a2", "during `tc qdisc del dev vec1 root`: EOFError")
    nodes = [boot_node("a1", BOOT_A), boot_node("a2", BOOT_B, BOOT_A)]
    with pytest.raises(NodeRebooted, match="node a2 rebooted during the cell") as info, watch_reboots(nodes):
        raise lost
    assert info.value.__cause__ is lost
    # still booting: the boot_id cannot be read, so the original failure is what is reported
    still_down = ConnectionLost("a2", "cannot connect to 10.213.0.12:22: [Errno 113] No route to host")
    nodes = [boot_node("a1", BOOT_A), boot_node("a2", BOOT_B, still_down)]
    with pytest.raises(ConnectionLost) as original, watch_reboots(nodes):
        raise lost
    assert original.value is lost
    # a failure without a reboot stays itself
    with pytest.raises(FioFailed), watch_reboots([boot_node("a1", BOOT_A), boot_node("a2", BOOT_B)]):
        raise FioFailed("a1: fio exited 1")


def test_case_29_a_crashed_node_must_come_back_with_a_new_boot_id_and_drbd_up() -> None:
    events = ("drbdsetup", "events2", "--now", "--statistics", "single-az")
    down = ConnectionLost("a1", "cannot connect to 10.213.0.11:22: [Errno 113] No route to host")
    node = crash_node("a1", boot=f"{BOOT_A}\n")
    node.argv = {
        ("cat", BOOT_ID_PATH): [down, down, Answer(f"{BOOT_B}\n")],
        # the node's boot did not bring DRBD up: events2 knows no resource
        events: [Answer(data("drbd/9-events2-no-resources.txt"))],
        ("drbdadm", "up", "single-az"): [Answer()],
    }
    pool = FakePool({"a1": node})
    clock = [0.0]

    def sleep(seconds: float) -> None:
        clock[0] += seconds

    crasher = SysrqCrasher(cast(ConnectionPool, pool), LAB.pairs["single-az"], sleep=sleep, clock=lambda: clock[0])
    crasher.prepare("a1")
    crasher.recover("a1")
    assert node.calls[-1] == "drbdadm up single-az" and clock[0] == 10.0  # two polls of 5 s
    assert forbidden(node) == []
    # never back: bounded, then an error naming what was last seen
    gone = crash_node("a1", boot=f"{BOOT_A}\n")
    gone.argv = {("cat", BOOT_ID_PATH): [Answer(f"{BOOT_A}\n")]}
    crasher = SysrqCrasher(
        cast(ConnectionPool, FakePool({"a1": gone})),
        LAB.pairs["single-az"],
        boot_timeout_s=60,
        sleep=sleep,
        clock=lambda: clock[0],
    )
    crasher.prepare("a1")
    with pytest.raises(HarnessError, match=r"a1 did not come back with a new boot_id within 60 s .* the crash did not"):
        crasher.recover("a1")


def test_case_30_durations_never_mix_clocks() -> None:
    # fio's wall time comes from two stamps of the *node's* clock, whatever its offset from ours
    skewed = f"{time.time() + 3600:.9f}\n{time.time() + 3612.25:.9f}\n"
    seconds = FioRunner.process_seconds(skewed)
    assert seconds is not None and abs(seconds - 12.25) < 0.01
    assert FioRunner.process_seconds("1763718300.5\n") is None  # fio never ended: no duration
    # the lock lease compares the node's `date` with the node's file mtime
    watchdog = ClusterLock(local_owner(RUN_ID, "inv.yaml"))._watchdog()
    assert "$(date +%s) - $(stat -c %Y /run/harness/lock/owner.json)" in watchdog


def _holder(*, host: str = "ctl-other", boot_id: str = "b0", pid: int = 4242) -> LockOwner:
    """The owner record another run's harness wrote (LockOwner's own JSON format)."""
    return LockOwner(OTHER_RUN_ID, "ci", host, boot_id, pid, time.time() - 120, "inventories/lab.yaml")


def lock_node(name: str, try_answer: str) -> FakeRunner:
    return FakeRunner(name, scripts=[("if mkdir /run/harness/lock", Answer(try_answer)), ("grep -qF", Answer())])


def test_case_31_concurrent_run_is_refused_naming_the_holder() -> None:
    a1 = lock_node("a1", "ACQUIRED\n")
    a2 = lock_node("a2", "HELD\n" + _holder().to_json() + "\n")
    lock = ClusterLock(local_owner(RUN_ID, "inv.yaml"))
    with pytest.raises(LockHeld) as info:
        lock.acquire([a2, a1])  # any order: nodes are locked in sorted order
    assert str(info.value) == (
        f"a2 is locked by run {OTHER_RUN_ID} by ci@ctl-other pid 4242, 2 min ago (inventories/lab.yaml); "
        "wait for it to finish, or stop it"
    )
    assert info.value.exit_code == 3
    assert "if mkdir /run/harness/lock" in a1.calls[0] and len(a2.calls) == 1
    # what this run took is given back, and only if it is still ours
    assert f'"run_id": "{RUN_ID}"' in a1.calls[1] and "rm -rf /run/harness/lock" in a1.calls[1]
    assert lock.held == []


def test_case_31_stale_lock_is_named_stale_and_never_taken_over() -> None:
    me = local_owner(RUN_ID, "inv.yaml")
    dead = _holder(host=me.host, boot_id=me.boot_id, pid=2**30)  # beyond pid_max: no such process
    a1 = lock_node("a1", "HELD\n" + dead.to_json() + "\n")
    with pytest.raises(LockHeld, match=r"its owner process is gone \(stale\): .*--break-lock"):
        ClusterLock(me).acquire([a1])
    assert len(a1.calls) == 1
    garbled = lock_node("a1", "HELD\n<no owner file>\n")
    with pytest.raises(LockHeld, match="exists with no readable owner"):
        ClusterLock(me).acquire([garbled])


def test_case_31_preflight_shows_the_lock_holder() -> None:
    holder = _holder()
    a1 = lab_node("a1")
    a1.scripts[1] = ("owner.json 2>/dev/null ||", Answer(holder.to_json() + "\n"))
    report = preflight({"a1": a1, "a2": lab_node("a2")})
    lock = finding(report, "a1", "lock")
    assert lock.status == "BLOCK" and lock.detail.startswith(f"held: run {OTHER_RUN_ID} by ci@ctl-other pid 4242")
    assert read_lock(FakeRunner("a1", scripts=[("owner.json", Answer(holder.to_json() + "\n"))])) == holder


# ---------------------------------------------------------------------------------------------
# 32-35: split brain, verification, secrets, identity
# ---------------------------------------------------------------------------------------------
def test_case_32_standalone_after_a_partition_is_reported_not_resolved() -> None:
    events = ("drbdsetup", "events2", "--now", "--statistics", "single-az")
    node = FakeRunner("a1", argv={events: [Answer(data("drbd/84-events2-now-primary-standalone-outofsync.txt"))]})
    with pytest.raises(DrbdNotReady, match=r"StandAlone does not reconnect by itself.*never forces a connection"):
        DrbdReplication(node, "single-az").wait_healthy(2)
    assert set(node.calls) == {shlex.join(events)}  # no connect, no --discard-my-data


def test_case_32_split_brain_flag_is_a_problem_and_fails_at_once() -> None:
    standalone = resource_from_events2(data("drbd/84-events2-now-primary-standalone.txt"), "single-az")
    assert standalone is not None
    split = replace(standalone, connections=(Connection(0, "peer", "StandAlone", sync_state="SplitBrain"),))
    assert "split brain with peer" in split.problems() and split.describe().endswith("SplitBrain")

    class SplitBrained(DrbdReplication):
        def state(self, *, timeout: float | None = None) -> ResourceState:
            return split

    node = FakeRunner("a1")
    with pytest.raises(DrbdNotReady, match=r"split brain .*the harness does not resolve it"):
        SplitBrained(node, "single-az", sleep=lambda _s: None).wait_healthy(300)
    assert node.calls == []


def test_case_33_lost_acknowledged_writes_fail_verification(tmp_path: Path) -> None:
    result = parse_fio_json(data("fio/fio-3.33-verify-only-lost-writes.json"))
    assert result.error == 84 and not result.ok  # EILSEQ
    runner = cell_runner(tmp_path)
    spec = verify_workload(16 << 20, seed=4321, iodepth=4).replace(
        verify=VerifySpec(alg="crc32c", verify_only=True, state_save=False), number_ios=2000
    )
    node = fio_run_node(data("fio/fio-3.33-verify-only-lost-writes.json"), "1\n")
    notes: list[str] = []
    run_log = f"/run/harness/{RUN_ID}/fio-failover-verify-4321.log"
    _tail_answers(node, run_log, LOST_WRITES_STDERR + "\n")
    # fio logs one `verify:` line per bad block; the recorded stderr of that run has one
    node.argv[("grep", "-c", "^verify: ", run_log)] = [Answer(f"{LOST_WRITES_STDERR.count('verify: ')}\n")]
    verified = _verify(runner, node, spec, device="/dev/drbd0", cell="failover-verify-4321", notes=notes)
    assert verified == (False, 1)
    assert len(notes) == 1 and "fio error 84" in notes[0] and "offset 1011712" in notes[0]
    assert not any(re.search(r"\bdrbdadm (?:invalidate|connect|primary)", c) for c in node.calls)
    outcome = FailoverResult("single-az", "C", 2000, 1996, False, 1, True, 1.0, 0.1, 10.0, True, 3, notes)
    assert outcome.lost_writes == 1  # never reported as zero


def test_case_33_clean_verify_passes(tmp_path: Path) -> None:
    runner = cell_runner(tmp_path)
    spec = verify_workload(16 << 20, seed=4321, iodepth=4).replace(
        verify=VerifySpec(alg="crc32c", verify_only=True, state_save=False), number_ios=2000
    )
    node = fio_run_node(data("fio/fio-3.33-verify-only-phase.json"), "0\n")
    notes: list[str] = []
    assert _verify(runner, node, spec, device="/dev/drbd0", cell="failover-verify-4321", notes=notes) == (True, 0)
    assert notes == []


PEM_SNIPPET = "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAA\\n-----END OPENSSH PRIVATE KEY-----"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            MINI.replace("    az: az-a\n", "    az: az-a\n    instance_type: 'password=hunter2'\n", 1),
            "nodes.a1.instance_type looks like a secret",
        ),
        (
            MINI.replace("    az: az-a\n", f'    az: az-a\n    volume: "{PEM_SNIPPET}"\n', 1),
            "nodes.a1.volume looks like a secret",
        ),
        (
            MINI.replace("known_hosts: /run/harness-lab/known_hosts}", "known_hosts: /k, password: hunter2}", 1),
            "nodes.a1.ssh.password",
        ),
    ],
    ids=["password-literal", "private-key", "password-key"],
)
def test_case_34_literal_secrets_are_refused(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_inventory(text, "inv.yaml")
    assert message in str(info.value)
    assert "hunter2" not in str(info.value) and "b3BlbnNzaC1rZXkt" not in str(info.value)


def test_case_34_node_output_and_ledgers_are_redacted(tmp_path: Path) -> None:
    failed = CommandFailed(CommandResult("a1", "mysql -e 'select 1'", 1, "", "login failed: password=hunter2", 0.1))
    assert "hunter2" not in str(failed) and REDACTED in str(failed)
    ledger = Ledger(tmp_path / "ledger.ndjson", RUN_ID)
    ledger.record("fio-start", {"node": "a1", "argv": "env TOKEN=abcdef123456 fio --name=w"})
    text = (tmp_path / "ledger.ndjson").read_text()
    assert "abcdef123456" not in text and json.loads(text)["node"] == "a1"


@given(
    st.sampled_from(["password", "passwd", "secret", "token", "api_key", "API-KEY"]), st.from_regex(r"\A[0-9]{6,20}\Z")
)
def test_case_34_redaction_property(word: str, value: str) -> None:
    assert value not in redact(f"{word}={value}") and value not in redact(f"{word}: {value}")
    assert redact("plain 1234567 text") == "plain 1234567 text"


def test_case_35_wrong_cluster_identity_blocks() -> None:
    text = (
        (ROOT / "inventories" / "lab.yaml")
        .read_text()
        .replace("    ssh: {<<: *ssh, host: 10.213.0.11}", "    hostname: a1\n    ssh: {<<: *ssh, host: 10.213.0.11}")
    )
    inv = parse_inventory(text)
    wrong = lab_node("a1", hostname=Answer("a2\n"))  # the address answers, but it is another machine
    report = preflight({"a1": wrong, "a2": lab_node("a2")}, inv)
    assert finding(report, "a1", "identity") == Finding(
        "a1", "identity", "BLOCK", "uname -n is 'a2', inventory expects 'a1'"
    )
    assert not report.ok and mutations(wrong) == []
    right = preflight({"a1": lab_node("a1"), "a2": lab_node("a2")}, inv)
    assert finding(right, "a1", "identity").status == "ok"
