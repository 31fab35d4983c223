"""Writing a file the user named (``-o``, ``--plot``): never over an input of the same command,
never over an existing file without ``--force``, and never half-written."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from harness.errors import ConfigError

__all__ = ["check_output", "write_replacing"]


def _same_file(a: Path, b: Path) -> bool:
    # samefile sees through symlinks, '..' and hard links; a file that is not there is no input
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_output(output: Path, inputs: dict[str, Path], *, force: bool, option: str = "-o") -> None:
    """Refuse to write ``output`` over an input (ever) or over any existing file (without force);
    ``option`` names the option in the messages."""
    for what, path in inputs.items():
        if _same_file(output, path):
            raise ConfigError(f"{option} {output}: that is the {what} ({path}); write to another file")
    if output.is_dir():
        raise ConfigError(f"{option} {output}: is a directory; name the file to write")
    if output.exists() and not output.is_file():
        # as root, replacing /dev/full or a FIFO by a rename would swap the device node itself
        raise ConfigError(f"{option} {output}: is not a regular file (a device, FIFO or socket); name a file to write")
    if os.path.lexists(output) and not force:
        raise ConfigError(f"{option} {output}: the file exists; pass --force to replace it, or choose another file")
    parent = output.resolve().parent
    if not parent.is_dir():
        what = (
            f"the directory {parent} does not exist" if not os.path.lexists(parent) else f"{parent} is not a directory"
        )
        raise ConfigError(f"{option} {output}: {what}")
    # before any work: a read-only file system, or a directory the user may not write to
    # (os.access does not see a read-only mount for root; statvfs does)
    if not os.access(parent, os.W_OK) or os.statvfs(parent).f_flag & os.ST_RDONLY:
        raise ConfigError(f"{option} {output}: cannot write in {parent} (read-only or no permission)")


def write_replacing(output: Path, content: str | bytes, *, option: str = "-o") -> None:
    # Through a temporary file and a rename: a failed write (full disk) leaves the old file as it
    # was.  A symlink keeps pointing where it did; its target gets the new content.
    target = output.resolve()
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        if isinstance(content, bytes):
            tmp.write_bytes(content)
        else:
            tmp.write_text(content, encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        raise ConfigError(f"{option} {output}: cannot write it: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):  # nothing made (ENOENT, EROFS, ENOTDIR): nothing to remove
            tmp.unlink()
