"""The write target: only the resource's own, unused, large-enough DRBD device, reached by a safe
path (cases 6, 7, 8, 16).

Cases of tests/RELIABILITY_CASES.md, the fault and bad-input map; each test is marked
``reliability_row(N)`` and named ``test_case_NN_*``; select a case with ``-k rowNN``.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.drbd.replication import DEVICE_PROBE, DrbdReplication
from harness.errors import (
    ConfigError,
    RefusedError,
)
from harness.fio.command import build_fio_argv, check_safe_path
from harness.fio.spec import LABEL_ZONE_BYTES, WorkloadSpec
from harness.inventory import parse_inventory
from harness.inventory.models import PairSpec
from harness.remote import render_command
from harness.safety.device import DeviceFacts, evaluate_drbd_target, guard_replicated_device, probe_device
from tests.doubles import (
    SH_DEV,
    SH_LL_DEV,
    Answer,
    FakeRunner,
    LocalRunner,
    mutations,
    recorded_replication,
)
from tests.unit.reliability.support import (
    DRBD0_BYTES,
    MINI,
    device_probe,
)


@pytest.mark.reliability_row(6)
@pytest.mark.parametrize(
    "device",
    ["/dev/vda", "/dev/sda", "/dev/nvme0n1", "/dev/mapper/vg-scratch", "/dev/ubda", "/dev/drbd/by-res/single-az/0",
     "/dev/disk/by-id/virtio-abc", "/dev/drbd", "/dev/drbd00000"],
)  # fmt: skip
def test_case_06_non_drbd_target_is_refused_at_parse_time(device: str) -> None:
    with pytest.raises(ConfigError, match=r"inv.yaml:16: pairs.single-az.device: String should match pattern"):
        parse_inventory(MINI.replace("/dev/drbd0", device), "inv.yaml")


@pytest.mark.reliability_row(6)
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


@pytest.mark.reliability_row(6)
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


@pytest.mark.reliability_row(6)
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


@pytest.mark.reliability_row(6)
@pytest.mark.parametrize(
    ("resource", "why"),
    [
        ("all", "'all' means every resource to drbdadm; name one resource"),
        # a leading '-' would be read by drbdadm as an option
        ("--discard-my-data", "String should match pattern"),
        ("-x", "String should match pattern"),
    ],
)
def test_case_06_reserved_resource_names_are_refused_at_parse_time(resource: str, why: str) -> None:
    text = MINI.replace("resource: single-az", f'resource: "{resource}"')
    assert text != MINI
    # refused naming the line and key of the resource, and why
    with pytest.raises(ConfigError, match=r"<string>:\d+: pairs\.single-az\.resource: " + re.escape(why)):
        parse_inventory(text)


METACHARACTERS = [":", " ", "'", '"', ";", "\n", "$(", "`", "|", "&", ">", "\\", "\t", "*", "#"]


@pytest.mark.reliability_row(7)
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


@pytest.mark.reliability_row(7)
@given(st.text(min_size=1, max_size=20))
def test_case_07_a_path_that_renders_stays_one_shell_token(value: str) -> None:
    if "\x00" in value:
        return  # no argv can carry NUL
    command = render_command(["blkid", "-p", "--", value], timeout=30, sudo=True)
    assert shlex.split(command)[-1] == value


@pytest.mark.reliability_row(8)
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


@pytest.mark.reliability_row(8)
def test_case_08_typoed_absent_device_probed_for_real(tmp_path: Path) -> None:
    """/dev/drbd10 does not exist: the probe runs for real here (read-only shell builtins and
    sysfs), with a stand-in drbdadm."""
    node = _absent_device_runner(tmp_path)
    with pytest.raises(RefusedError, match="not a block device"):
        guard_replicated_device(node, recorded_replication(node), device="/dev/drbd10", needed_bytes=1)


@pytest.mark.reliability_row(16)
def test_case_16_device_smaller_than_the_job() -> None:
    node = FakeRunner("a1", batch=device_probe())
    with pytest.raises(RefusedError, match=rf"is {DRBD0_BYTES} bytes, smaller than the {8 << 30} bytes the job writes"):
        guard_replicated_device(node, recorded_replication(node), needed_bytes=8 << 30)
    guard_replicated_device(node, recorded_replication(node), needed_bytes=DRBD0_BYTES)  # exactly fits


@pytest.mark.reliability_row(16)
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
    # no job writes the label zone: the layout starts after it
    fits = LABEL_ZONE_BYTES + (offset_mib + numjobs * size_mib) * mib <= device
    if fits:
        spec.check_fits(device)
    else:
        with pytest.raises(ConfigError, match="but the target holds only 134217728 bytes"):
            spec.check_fits(device)
