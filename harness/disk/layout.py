"""What a disk-study cell puts fio on: a raw scratch device, a RAID0 stripe over several, or a
file on a fresh xfs/ext4 filesystem — and the node commands that build and tear it down.

Everything here is pure (argv lists and shell text); :mod:`harness.disk.cell` runs them with
the undo registered before each change.  Names carry the run id's token so a leftover is
recognisable (``harness cleanup`` and preflight look for ``/dev/md/harness-*`` and mounts
under ``/run/harness``).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Literal

from harness.errors import ConfigError
from harness.remote.nodefiles import MD_PREFIX
from harness.units import MIB

__all__ = ["MD_PREFIX", "DiskLayout", "LayoutKind", "fill_argv"]

LayoutKind = Literal["raw", "raid0", "fs"]
FsType = Literal["xfs", "ext4"]

# md names (metadata 1.2) hold 32 characters, "harness-" takes 8
_TOKEN = re.compile(r"\A[a-z0-9-]{1,24}\Z")
_DEVICE = re.compile(r"\A/dev/[A-Za-z0-9/_.-]{1,64}\Z")
#: tries of ``mdadm --stop`` before the teardown gives up (mdadm itself retries a busy array
#: for about 5 s each time)
MD_STOP_ATTEMPTS = 3


@dataclass(frozen=True)
class DiskLayout:
    """``raw``: fio on ``devices[0]``; ``raid0``: an md RAID0 over ``devices``; ``fs``: a file on
    ``fstype`` made on ``devices[0]``."""

    kind: LayoutKind
    devices: tuple[str, ...]
    fstype: FsType | None = None
    chunk_kib: int = 512

    def __post_init__(self) -> None:
        if not self.devices:
            raise ConfigError("a disk layout needs at least one scratch device")
        for dev in self.devices:
            if not _DEVICE.match(dev) or ".." in dev:
                raise ConfigError(f"scratch device {dev!r} is not a plain /dev path")
        if len(set(self.devices)) != len(self.devices):
            raise ConfigError(f"scratch devices repeat: {', '.join(self.devices)}")
        if self.kind == "fs" and self.fstype not in ("xfs", "ext4"):
            raise ConfigError(f"filesystem layout needs fstype xfs or ext4, got {self.fstype!r}")
        if self.kind != "fs" and self.fstype is not None:
            raise ConfigError("only a filesystem layout has an fstype")
        if self.kind != "raid0" and len(self.devices) != 1:
            raise ConfigError(f"a {self.kind} layout uses exactly one device, got {len(self.devices)}")
        if not 4 <= self.chunk_kib <= 65536 or self.chunk_kib & (self.chunk_kib - 1):
            raise ConfigError(f"RAID chunk must be a power of two between 4 and 65536 KiB, got {self.chunk_kib}")

    @property
    def label(self) -> str:
        """Column name in the comparison tables: ``raw``, ``raid0x4``, ``xfs``."""
        if self.kind == "raid0":
            return f"raid0x{len(self.devices)}"
        if self.kind == "fs":
            assert self.fstype is not None
            return self.fstype
        return "raw"

    # -- RAID0 ---------------------------------------------------------------------------
    def md_path(self, token: str) -> str:
        _check_token(token)
        return f"/dev/md/{MD_PREFIX}{token}"

    def md_create_argv(self, token: str) -> list[str]:
        # --force: mdadm refuses a one-device RAID0 without it, and the 1-volume point of the
        # scaling curve must go through the same md layer as the others.  --run: no prompt.
        return [
            "mdadm",
            "--create",
            self.md_path(token),
            "--run",
            "--force",
            "--quiet",
            "--level=0",
            f"--chunk={self.chunk_kib}",
            "--metadata=1.2",
            f"--raid-devices={len(self.devices)}",
            *self.devices,
        ]

    def md_teardown_script(self, token: str) -> str:
        """Stop the array, wipe its members' superblocks and remove its name link (idempotent)."""
        md = shlex.quote(self.md_path(token))
        members = " ".join(shlex.quote(d) for d in self.devices)
        # An array still busy after mdadm's own retries is tried again, then reported: left
        # assembled, it holds its members and the next cell would be refused them.
        return (
            f"n=0; while [ -e {md} ] && ! mdadm --stop {md} >/dev/null 2>&1; do "
            f"n=$((n + 1)); if [ $n -ge {MD_STOP_ATTEMPTS} ]; then "
            f'echo "mdadm --stop {md} failed {MD_STOP_ATTEMPTS} times: the array is still in use" >&2; '
            f"exit 1; fi; sleep 0.25; done; "
            f'for d in {members}; do mdadm --zero-superblock "$d" >/dev/null 2>&1; wipefs -a -q "$d"; done; '
            # without udev (the lab, minimal images) nobody else removes the name link
            f"rm -f {md}; true"
        )

    # -- filesystems ---------------------------------------------------------------------
    def mkfs_argv(self) -> list[str]:
        if self.fstype == "xfs":
            return ["mkfs.xfs", "-f", "-q", self.devices[0]]
        if self.fstype == "ext4":
            # lazy init would keep zeroing inode tables in the background during the cell
            return ["mkfs.ext4", "-F", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0", self.devices[0]]
        raise ConfigError("not a filesystem layout")

    def mount_script(self, mountpoint: str, file: str | None = None, file_bytes: int = 0) -> str:
        """Mount the new filesystem and pre-allocate the fio file (fio's own default
        ``fallocate=native``; fio then never creates files: ``allow_file_create=0``).  Without
        ``file``, only mount: an engine that makes its own files (bonnie++) gets the directory."""
        _check_under_run(mountpoint)
        mp, dev = shlex.quote(mountpoint), shlex.quote(self.devices[0])
        mount = f"mkdir -p {mp} && mount -t {self.fstype} {dev} {mp}"
        if file is None:
            return mount
        return f"{mount} && fallocate -l {int(file_bytes)} {shlex.quote(file)}"

    def fs_teardown_script(self, mountpoint: str) -> str:
        _check_under_run(mountpoint)
        mp, dev = shlex.quote(mountpoint), shlex.quote(self.devices[0])
        return (
            f"if mountpoint -q {mp}; then umount {mp} || umount -l {mp}; fi; "
            f"rmdir {mp} 2>/dev/null; wipefs -a -q {dev}; true"
        )


def fill_argv(device: str, fill_bytes: int, output: str) -> list[str]:
    """fio that writes the first ``fill_bytes`` of ``device`` sequentially (preconditioning a
    device before random writes, as the studies filled theirs to 99 %)."""
    if not _DEVICE.match(device):
        raise ConfigError(f"fill target {device!r} is not a plain /dev path")
    if fill_bytes < MIB:
        raise ConfigError(f"fill size {fill_bytes} is below 1 MiB")
    return [
        "fio",
        "--name=precondition",
        f"--filename={device}",
        "--allow_file_create=0",
        "--allow_mounted_write=0",
        "--direct=1",
        "--ioengine=libaio",
        "--rw=write",
        "--bs=1M",
        "--iodepth=16",
        f"--size={fill_bytes // MIB}M",
        "--output-format=json",
        f"--output={output}",
    ]


def _check_token(token: str) -> None:
    if not _TOKEN.match(token):
        raise ConfigError(f"layout token {token!r} must be 1-24 of [a-z0-9-]")


def _check_under_run(path: str) -> None:
    if not path.startswith("/run/harness/") or ".." in path or not re.fullmatch(r"[A-Za-z0-9/_.-]+", path):
        raise ConfigError(f"mount point {path!r} must be a plain path under /run/harness/")
