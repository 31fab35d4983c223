"""What a kernel module file says about itself: its ``.modinfo`` section, read from the ELF file.

``modinfo`` (kmod) prints the same: a module carries ``key=value`` strings, each ended by a NUL
byte, in an ELF section named ``.modinfo`` (``name=drbd``, ``version=9.2.18``,
``vermagic=6.1.176 mod_unload``, ``depends=lru_cache``, one ``alias=``/``parm=`` per line).  The
lab reads them before boot to tell whether a module the user supplied can load into its UML
kernel at all, without running anything on the host and without a kmod build that knows UML.

Only what the check needs is read: the ELF header (class, byte order, type, machine), the
section headers, their name table and ``.modinfo`` itself, each by offset, so a module with
megabytes of debug information costs a few kilobytes of reading.  Compressed modules
(``.ko.xz``, ``.ko.zst``) are not ELF files and are refused as such.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final

from harness.errors import ConfigError

__all__ = ["ModInfo", "ModuleFileError", "parse_modinfo", "read_modinfo"]

_MAGIC: Final = b"\x7fELF"
#: ``e_type`` of a relocatable object: what every kernel module is
_ET_REL: Final = 1
#: a section table this large is no kernel module's (DRBD 9's has about 60 sections)
_MAX_SECTIONS: Final = 4096
#: nor a ``.modinfo`` this large (drbd.ko's is about 2 KiB)
_MAX_MODINFO: Final = 1 << 20
_MACHINES: Final = {3: "i386", 62: "x86-64", 183: "aarch64", 40: "arm", 243: "riscv"}


class ModuleFileError(ConfigError):
    """The file is no kernel module this reader understands (the message names the file)."""


@dataclass(frozen=True)
class _Layout:
    """Where an ELF file keeps its section headers, in its own class and byte order."""

    order: str  # struct's byte-order character
    wide: bool  # ELF64
    shoff: int
    shentsize: int
    shnum: int
    shstrndx: int
    machine: int


@dataclass(frozen=True)
class ModInfo:
    """A module's ``.modinfo``: every key with its values in file order, and its ELF machine."""

    path: Path
    fields: Mapping[str, tuple[str, ...]]
    machine: int

    def first(self, key: str) -> str | None:
        values = self.fields.get(key, ())
        return values[0] if values else None

    @property
    def name(self) -> str:
        """The module's own name (``name=``), else its file name without ``.ko``, as the kernel spells it."""
        return self.first("name") or self.path.name.removesuffix(".ko").replace("-", "_")

    @property
    def version(self) -> str | None:
        return self.first("version")

    @property
    def vermagic(self) -> str | None:
        """The kernel release and options it was built for, without the trailing blank."""
        magic = self.first("vermagic")
        return None if magic is None else " ".join(magic.split())

    @property
    def depends(self) -> tuple[str, ...]:
        """The modules it needs loaded first (``depends=a,b``; empty for none)."""
        return tuple(d for value in self.fields.get("depends", ()) for d in value.split(",") if d)

    @property
    def machine_name(self) -> str:
        return _MACHINES.get(self.machine, f"machine {self.machine}")


def parse_modinfo(data: bytes) -> dict[str, tuple[str, ...]]:
    """The ``key=value`` strings of a ``.modinfo`` section (NUL-separated, NUL padding between)."""
    found: dict[str, list[str]] = {}
    for raw in data.split(b"\0"):
        text = raw.decode("utf-8", errors="replace")
        key, sep, value = text.partition("=")
        if sep and key:
            found.setdefault(key, []).append(value)
    return {key: tuple(values) for key, values in found.items()}


def _read_at(f: BinaryIO, path: Path, offset: int, size: int) -> bytes:
    f.seek(offset)
    data = f.read(size)
    if len(data) != size:
        raise ModuleFileError(f"{path}: truncated ELF file (needs {size} bytes at offset {offset})")
    return data


def _layout(f: BinaryIO, path: Path) -> _Layout:
    ident = f.read(16)
    if len(ident) < 16 or not ident.startswith(_MAGIC):
        raise ModuleFileError(f"{path}: not an ELF file (a kernel module, .ko, uncompressed)")
    if ident[4] not in (1, 2) or ident[5] not in (1, 2):
        raise ModuleFileError(f"{path}: ELF class {ident[4]} / byte order {ident[5]} is not one a module has")
    order, wide = ("<" if ident[5] == 1 else ">"), ident[4] == 2
    rest = _read_at(f, path, 16, 48 if wide else 36)
    if wide:
        e_type, machine, _v, _entry, _phoff, shoff, _flags, _eh, _phe, _phn, shentsize, shnum, shstrndx = struct.unpack(
            order + "HHIQQQIHHHHHH", rest
        )
    else:
        e_type, machine, _v, _entry, _phoff, shoff, _flags, _eh, _phe, _phn, shentsize, shnum, shstrndx = struct.unpack(
            order + "HHIIIIIHHHHHH", rest
        )
    if e_type != _ET_REL:
        raise ModuleFileError(f"{path}: ELF type {e_type} is not a relocatable object: not a kernel module")
    if not 0 < shnum <= _MAX_SECTIONS or shstrndx >= shnum or shentsize < (64 if wide else 40):
        raise ModuleFileError(f"{path}: ELF section table unreadable ({shnum} sections, names in {shstrndx})")
    return _Layout(order, wide, shoff, shentsize, shnum, shstrndx, machine)


def _section(f: BinaryIO, path: Path, layout: _Layout, index: int) -> tuple[int, int, int]:
    """(name offset, file offset, size) of section ``index``."""
    # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size: the first six fields of either class
    fmt = layout.order + ("IIQQQQ" if layout.wide else "IIIIII")
    raw = _read_at(f, path, layout.shoff + index * layout.shentsize, struct.calcsize(fmt))
    name, _type, _flags, _addr, offset, size = struct.unpack(fmt, raw)
    return name, offset, size


def _modinfo_bytes(f: BinaryIO, path: Path, layout: _Layout) -> bytes:
    _, names_at, names_size = _section(f, path, layout, layout.shstrndx)
    names = _read_at(f, path, names_at, min(names_size, _MAX_MODINFO))
    for index in range(layout.shnum):
        name_at, offset, size = _section(f, path, layout, index)
        end = names.find(b"\0", name_at)
        if names[name_at : end if end >= 0 else None] == b".modinfo":
            if size > _MAX_MODINFO:
                raise ModuleFileError(f"{path}: .modinfo of {size} bytes is larger than any module's")
            return _read_at(f, path, offset, size)
    raise ModuleFileError(f"{path}: ELF file without a .modinfo section: not a kernel module")


def read_modinfo(path: Path) -> ModInfo:
    """The ``.modinfo`` of the module file ``path``; :class:`ModuleFileError` names the file
    and what is wrong with it."""
    try:
        with open(path, "rb") as f:
            layout = _layout(f, path)
            fields = parse_modinfo(_modinfo_bytes(f, path, layout))
    except OSError as exc:
        raise ModuleFileError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    return ModInfo(path, fields, layout.machine)
