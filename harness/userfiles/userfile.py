"""Reading a file the user named (an inventory, a mapping, a catalog, a baseline's metadata).

Whatever the path points at, the answer is the file's text or a :class:`ConfigError` in one
line: never a traceback, a hang or the whole memory.  So the file must be a regular file (not
``/dev/zero``, a FIFO that blocks until a writer comes, or a directory), no larger than
:data:`~harness.limits.MAX_FILE_BYTES` (checked on the open file before reading, and again while reading, so a
file that grows meanwhile is cut off too), and UTF-8: a UTF-16 or Latin-1 file is named for
what it is, with the line and offset of the first byte that is not UTF-8.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO, Final

from harness.errors import ConfigError
from harness.limits import MAX_FILE_BYTES, describe_bytes

__all__ = ["MAX_FILE_BYTES", "read_config_text"]

_STEP: Final = 1 << 20
_KINDS: Final = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _read_up_to(f: BinaryIO, most: int, expected: int) -> bytes:
    # read(n) allocates n bytes before it reads: ask for what the file holds, then on in steps,
    # so a 1 GiB limit never costs 1 GiB for a file of kilobytes
    data = f.read(min(most, expected + 1))
    while len(data) < most:
        more = f.read(min(most - len(data), _STEP))
        if not more:
            break
        data += more
    return data


def _read_bounded(path: Path, what: str, limit: int) -> bytes:
    # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ConfigError(f"{path}: cannot read the {what}: file not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the {what}: {exc.strerror}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise ConfigError(f"{path}: the {what} is {_kind(info.st_mode)}, not a regular file")
    with os.fdopen(fd, "rb") as f:
        too_big = f"{path}: the {what} is larger than {describe_bytes(limit)}; the harness refuses to read it"
        if info.st_size > limit:
            raise ConfigError(f"{too_big} ({info.st_size} bytes)")
        try:
            data = _read_up_to(f, limit + 1, info.st_size)
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read the {what}: {exc.strerror}") from None
    if len(data) > limit:
        raise ConfigError(f"{too_big} (it grew while being read)")
    return data


def _not_utf8(path: Path, exc: UnicodeDecodeError) -> ConfigError:
    data: bytes = exc.object
    line = data[: exc.start].count(b"\n") + 1
    column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
    if data[:4] in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"):
        cause = " (it starts with a UTF-32 byte-order mark: save it as UTF-8)"
    elif data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        cause = " (it starts with a UTF-16 byte-order mark: save it as UTF-8)"
    elif b"\x00" in data[:64]:
        cause = " (NUL bytes between the characters: UTF-16 or UTF-32 without a byte-order mark? save it as UTF-8)"
    elif 0xA0 <= data[exc.start] <= 0xFF:
        cause = f" ({bytes([data[exc.start]]).decode('latin-1')!r} in Latin-1: save the file as UTF-8)"
    else:
        cause = ""
    return ConfigError(
        f"{path}:{line}:{column}: not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start}{cause}; "
        "the harness reads its files as UTF-8"
    )


def read_config_text(path: Path, what: str = "file", *, limit: int = MAX_FILE_BYTES) -> str:
    """The text of the regular UTF-8 file ``path`` of at most ``limit`` bytes; otherwise a
    ConfigError saying which of these it is not (``what`` names the file in the message)."""
    data = _read_bounded(path, what, limit)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, exc) from None
    nul = text.find("\0")
    if nul >= 0:  # valid UTF-8, but no text file holds NUL: UTF-16/32 of ASCII text, or binary
        line = text.count("\n", 0, nul) + 1
        column = nul - text.rfind("\n", 0, nul)
        raise ConfigError(
            f"{path}:{line}:{column}: a NUL byte: the file is UTF-16, UTF-32 or binary, not UTF-8 text; "
            "save it as UTF-8"
        )
    return text
