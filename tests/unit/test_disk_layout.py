"""Disk-study layouts: command builders and the scratch-device guard (pure parts)."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.disk.cell import DiskCellSpec
from harness.disk.layout import MD_PREFIX, DiskLayout, fill_argv
from harness.errors import ConfigError
from harness.fio.workloads import io_job
from harness.safety.device import DeviceFacts, evaluate_scratch_target

devices = st.lists(
    st.sampled_from([f"/dev/ubd{c}" for c in "bcdefgh"] + ["/dev/nvme1n1", "/dev/xvdf"]),
    min_size=1,
    max_size=8,
    unique=True,
)
tokens = st.from_regex(r"\A[a-z0-9][a-z0-9-]{0,23}\Z")


@given(members=devices, token=tokens)
def test_raid0_create_names_every_member_once_and_a_harness_array(members: list[str], token: str) -> None:
    layout = DiskLayout("raid0", tuple(members))
    argv = layout.md_create_argv(token)
    assert argv[:3] == ["mdadm", "--create", f"/dev/md/{MD_PREFIX}{token}"]
    assert argv[-len(members) :] == members
    assert f"--raid-devices={len(members)}" in argv and "--level=0" in argv
    assert layout.label == f"raid0x{len(members)}"
    # teardown stops our array and wipes exactly the members
    script = layout.md_teardown_script(token)
    assert f"mdadm --stop {layout.md_path(token)}" in script
    loop = script.split(" for d in ", 1)[1].split(";", 1)[0]
    assert loop.split() == members


@given(bad=st.sampled_from(["/dev/../etc/passwd", "/tmp/x", "/dev/sda;rm", "/dev/sd a", ""]))
def test_layouts_refuse_anything_but_plain_device_paths(bad: str) -> None:
    with pytest.raises(ConfigError):
        DiskLayout("raw", (bad,))


def test_layout_shapes_are_checked() -> None:
    with pytest.raises(ConfigError, match="exactly one device"):
        DiskLayout("raw", ("/dev/ubdb", "/dev/ubdc"))
    with pytest.raises(ConfigError, match="repeat"):
        DiskLayout("raid0", ("/dev/ubdb", "/dev/ubdb"))
    with pytest.raises(ConfigError, match="fstype"):
        DiskLayout("fs", ("/dev/ubdb",), fstype="btrfs")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="chunk"):
        DiskLayout("raid0", ("/dev/ubdb",), chunk_kib=3)
    with pytest.raises(ConfigError, match="token"):
        DiskLayout("raid0", ("/dev/ubdb",)).md_create_argv("../x")


@pytest.mark.parametrize("fstype", ["xfs", "ext4"])
def test_filesystem_layout_mounts_only_under_run_harness(fstype: str) -> None:
    layout = DiskLayout("fs", ("/dev/ubdb",), fstype=fstype)  # type: ignore[arg-type]
    assert layout.label == fstype
    assert layout.mkfs_argv()[0] == f"mkfs.{fstype}" and layout.mkfs_argv()[-1] == "/dev/ubdb"
    script = layout.mount_script("/run/harness/r1/mnt-x", "/run/harness/r1/mnt-x/fio.dat", 64 << 20)
    assert shlex.split(script.split("&&")[1]) == ["mount", "-t", fstype, "/dev/ubdb", "/run/harness/r1/mnt-x"]
    assert "fallocate -l 67108864" in script
    for bad in ("/mnt", "/run/harness/../../etc", "/run/harness/a b"):
        with pytest.raises(ConfigError):
            layout.mount_script(bad, bad + "/f", 1)
        with pytest.raises(ConfigError):
            layout.fs_teardown_script(bad)


@given(mib=st.integers(1, 1 << 20))
def test_fill_writes_whole_mebibytes_sequentially_and_never_creates_files(mib: int) -> None:
    argv = fill_argv("/dev/ubdb", mib * (1 << 20) + 123, "/run/harness/r/fill.json")
    assert f"--size={mib}M" in argv and "--rw=write" in argv and "--allow_file_create=0" in argv
    with pytest.raises(ConfigError):
        fill_argv("/dev/ubdb", 1000, "/run/harness/r/fill.json")


def test_precondition_is_for_block_layouts_and_named_in_the_column() -> None:
    job = io_job("randwrite", 4096)
    spec = DiskCellSpec("p", "a1", DiskLayout("raw", ("/dev/ubdb",)), job, fill_pct=99)
    assert spec.mode == "raw-fill99" and spec.id.startswith("a1-raw-fill99-randwrite-4k")
    with pytest.raises(ConfigError):
        DiskCellSpec("p", "a1", DiskLayout("fs", ("/dev/ubdb",), fstype="xfs"), job, fill_pct=99)
    with pytest.raises(ConfigError):
        DiskCellSpec("p", "a1", DiskLayout("raw", ("/dev/ubdb",)), job, fill_pct=0)


def _facts(**changes: object) -> DeviceFacts:
    base: dict[str, object] = {
        "path": "/dev/ubdb",
        "realpath": "/dev/ubdb",
        "is_block": True,
        "size_bytes": 2 << 30,
        "mounted_at": (),
        "holders": (),
        "partitions": (),
        "signature": "",
        "sh_dev": None,
        "backing": (),
        "probe_errors": (),
    }
    base.update(changes)
    return DeviceFacts(**base)  # type: ignore[arg-type]


def test_a_clean_scratch_device_passes_the_guard() -> None:
    assert evaluate_scratch_target(_facts(), backing=["/dev/ubda"], needed_bytes=1 << 30) == []


@pytest.mark.parametrize(
    ("changes", "backing", "reason"),
    [
        ({"realpath": "/dev/ubda"}, ["/dev/ubda"], "backs a DRBD resource"),
        ({"realpath": "/dev/drbd0"}, [], "is a DRBD device"),
        ({"mounted_at": ("/data",)}, [], "is mounted at /data"),
        ({"holders": ("md127",)}, [], "is held by md127"),
        ({"partitions": ("/sys/class/block/ubdb/ubdb1",)}, [], "has partitions ubdb1"),
        ({"signature": "TYPE=xfs"}, [], "carries a signature"),
        ({"size_bytes": 1 << 20}, [], "smaller than"),
        ({"is_block": False}, [], "not a block device"),
        ({"probe_errors": ("size: exit 1",)}, [], "probe failed"),
    ],
)
def test_the_scratch_guard_refuses_devices_in_use(changes: dict[str, object], backing: list[str], reason: str) -> None:
    problems = evaluate_scratch_target(_facts(**changes), backing=backing, needed_bytes=64 << 20)
    assert any(reason in p for p in problems), problems
