"""The bonnie++ command line of a disk-study cell, sized by bonnie++'s own rule.

bonnie++ refuses a file size under twice the RAM it is told about, so that the page cache
cannot hold the file and the sequential figures are the disk's, not memory's.  The harness
keeps that rule: it reads the node's ``MemTotal`` and asks for a file of twice that, never a
smaller ``-r`` than the machine has.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass
from typing import Final

from harness.errors import ConfigError
from harness.units import MIB

__all__ = ["BonnieJob", "job_for_memory", "meminfo_total_kib"]

_MEMTOTAL_RE: Final = re.compile(r"^MemTotal:\s+(\d+)\s+kB\s*$", re.MULTILINE)
_LABEL_RE: Final = re.compile(r"\A[A-Za-z0-9_.-]{1,64}\Z")
_DIR_RE: Final = re.compile(r"\A/[A-Za-z0-9/_.-]{1,200}\Z")


@dataclass(frozen=True)
class BonnieJob:
    """``bonnie++ -d DIR -s SIZE -r RAM -n FILES -m LABEL -u 0:0 -q``: CSV on stdout."""

    directory: str
    size_mib: int
    ram_mib: int
    #: files for the create/stat/delete phases, in units of 1024 (bonnie++'s ``-n``)
    files_k: int
    label: str

    def __post_init__(self) -> None:
        if not _DIR_RE.match(self.directory) or ".." in self.directory:
            raise ConfigError(f"bonnie++ directory {self.directory!r} is not a plain absolute path")
        if not _LABEL_RE.match(self.label):
            raise ConfigError(f"bonnie++ label {self.label!r} must be 1-64 of [A-Za-z0-9_.-]")
        if self.ram_mib < 1 or self.size_mib < 2 * self.ram_mib:
            raise ConfigError(
                f"bonnie++ file size {self.size_mib} MiB must be at least twice the RAM ({self.ram_mib} MiB)"
            )
        if not 0 <= self.files_k <= 1024:
            raise ConfigError(f"bonnie++ file count must be 0..1024 (×1024 files), got {self.files_k}")

    @property
    def footprint_bytes(self) -> int:
        """What the run needs on the filesystem: the I/O file, plus room for the small files."""
        return self.size_mib * MIB + self.files_k * 1024 * 4096

    def argv(self) -> list[str]:
        # -u 0:0: bonnie++ refuses to run as root without being told whom to run as; the
        # directory is the harness's own, on a filesystem it just made.
        return [
            "bonnie++",
            "-d",
            self.directory,
            "-s",
            str(self.size_mib),
            "-r",
            str(self.ram_mib),
            "-n",
            str(self.files_k),
            "-m",
            self.label,
            "-u",
            "0:0",
            "-q",
        ]

    def script(self) -> str:
        """Make the directory, run bonnie++ (CSV on stdout; its text table goes to stderr)."""
        return f"mkdir -p {shlex.quote(self.directory)} && {shlex.join(self.argv())}"


def meminfo_total_kib(meminfo: str) -> int:
    """``MemTotal`` of ``/proc/meminfo`` in KiB."""
    match = _MEMTOTAL_RE.search(meminfo)
    if not match:
        raise ConfigError("no 'MemTotal: N kB' line in /proc/meminfo")
    return int(match[1])


def job_for_memory(directory: str, label: str, mem_total_kib: int, files_k: int = 16) -> BonnieJob:
    """The job bonnie++'s rule asks for on a node with ``mem_total_kib`` of RAM: ``-r`` the RAM
    (rounded up to MiB) and a file of twice that."""
    if mem_total_kib < 1:
        raise ConfigError(f"node memory must be positive, got {mem_total_kib} KiB")
    ram = math.ceil(mem_total_kib / 1024)
    return BonnieJob(directory, 2 * ram, ram, files_k, label)
