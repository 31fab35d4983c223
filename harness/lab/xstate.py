"""Keep guest FPU/vector state whole on hosts with a large XSAVE area (AVX-512, AMX).

Debian 12's UML kernel (6.1) saves each guest process's FPU state with
``PTRACE_GETREGSET(NT_X86_XSTATE)`` into a fixed 832-byte buffer and restores it with
``PTRACE_SETREGSET``.  The host kernel accepts only a SET of its full XSAVE size
(``xstateregs_set`` returns ``-EFAULT`` when ``count != fpu_user_cfg.max_size``): on a CPU with
AVX-512 and AMX (about 11 KiB) the first guest process dies ("userspace - ptrace set fp regs
failed, errno = 14") and the guest kernel panics.  Making UML fall back to the x87/SSE-only
``PTRACE_SETFPREGS`` is not enough: every guest page fault runs UML's stub signal handler in the
process, which resets the vector registers, and glibc's AVX string functions then return wrong
results (Python fails to start, ``insmod`` reports "Invalid parameters", sudo garbles its
messages).

``guest/uml_xstate.c`` is preloaded into ``linux.uml`` and gives UML what it assumes: a GET hands
UML as much of the full area it keeps per process as UML's buffer holds; a SET writes UML's bytes
over that area and hands the host exactly its own size.  The sizes differ both ways: the 832
bytes above on a host with AMX (about 11 KiB), and on a host whose kernel enables AVX-512 without
PKRU a UML buffer of 2,696 bytes (the CPU's full XSAVE size) against the kernel's 2,432, which
the host refused the same way ("ptrace set fp regs failed, errno = 22" from an earlier shim that
only handled the smaller buffer).
It is built at every ``lab up`` (a fraction of a second) with the
host's C compiler, which ``scripts/bootstrap`` installs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Final

from harness.errors import InfraError

__all__ = ["SHIM_SOURCE", "XSTATE_SHIM", "build_xstate_shim"]

XSTATE_SHIM: Final = "uml_xstate.so"
SHIM_SOURCE: Final = Path(__file__).with_name("guest") / "uml_xstate.c"


def build_xstate_shim(target: Path, *, compiler: str | None = None) -> Path:
    """Compile the preload library to ``target`` (world-readable: guests load it as the lab uid)."""
    cc = compiler or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise InfraError(
            "no C compiler: the lab builds a small library for linux.uml at start (harness/lab/xstate.py); "
            "run scripts/bootstrap, which installs gcc"
        )
    argv = [cc, "-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-o", str(target), str(SHIM_SOURCE), "-ldl"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise InfraError(f"building {target.name} failed ({' '.join(argv)}): {done.stderr.strip()[-500:]}")
    os.chmod(target, 0o644)
    return target
