"""The xstate preload against this host's own kernel: UML's fixed-size XSAVE buffers round-trip.

A small C program plays UML's part: it traces a stopped child, reads its XSAVE area with
``PTRACE_GETREGSET(NT_X86_XSTATE)`` into a buffer of a given size, writes a pattern into XMM0 and
sets the buffer back, then reads the whole area to see the pattern arrived.  UML builds use 832
bytes or the CPU's full XSAVE size, which may be larger than what the host kernel keeps (2,696
against 2,432 on a host without PKRU): both must work through the shim.  Without the shim the
host refuses the smaller buffer (EFAULT) and cuts a larger one to its own size; an earlier shim
refused the larger one itself (EINVAL), which killed the guests on such a host.
"""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

import pytest

from harness.lab.xstate import build_xstate_shim

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="NT_X86_XSTATE is x86-64 only")

# argv[1]: the buffer size UML uses.  Prints "host=<size> set=<0|errno> xmm0=<ok|bad>".
_PROGRAM = r"""
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t size = (size_t)atol(argv[1]);
	pid_t child = fork();
	if (child == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		_exit(0);
	}
	waitpid(child, NULL, 0);
	static unsigned char full[65536];
	struct iovec all = {full, sizeof full};
	if (ptrace(PTRACE_GETREGSET, child, (void *)NT_X86_XSTATE, &all) != 0)
		return 2;
	unsigned char *mine = calloc(1, size);
	struct iovec uml = {mine, size};
	if (ptrace(PTRACE_GETREGSET, child, (void *)NT_X86_XSTATE, &uml) != 0)
		return 3;
	uml.iov_len = size;
	memset(mine + 160, 0x5a, 16); /* XMM0 in the legacy area */
	long r = ptrace(PTRACE_SETREGSET, child, (void *)NT_X86_XSTATE, &uml);
	int err = r == 0 ? 0 : errno;
	memset(full, 0, sizeof full);
	all.iov_len = sizeof full;
	ptrace(PTRACE_GETREGSET, child, (void *)NT_X86_XSTATE, &all);
	unsigned char want[16];
	memset(want, 0x5a, 16);
	printf("host=%zu set=%d xmm0=%s\n", all.iov_len, err, memcmp(full + 160, want, 16) == 0 ? "ok" : "bad");
	kill(child, SIGKILL);
	return 0;
}
"""


@pytest.fixture(scope="module")
def tracer(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    where = tmp_path_factory.mktemp("xstate")
    source = where / "tracer.c"
    source.write_text(_PROGRAM)
    program = where / "tracer"
    subprocess.run(["cc", "-O0", "-o", str(program), str(source)], check=True, capture_output=True)
    return program, build_xstate_shim(where / "uml_xstate.so")


def _run(program: Path, size: int, shim: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    if shim is not None:
        env["LD_PRELOAD"] = str(shim)
    done = subprocess.run([str(program), str(size)], capture_output=True, text=True, env=env, check=True, timeout=30)
    return dict(part.split("=", 1) for part in done.stdout.split())


def test_a_buffer_smaller_or_larger_than_the_hosts_area_round_trips_through_the_shim(
    tracer: tuple[Path, Path],
) -> None:
    program, shim = tracer
    host = int(_run(program, 832, shim)["host"])
    for size in (832, host, host + 264):
        result = _run(program, size, shim)
        assert result == {"host": str(host), "set": "0", "xmm0": "ok"}, f"UML buffer of {size} bytes: {result}"


def test_without_the_shim_the_host_refuses_a_smaller_buffer_and_cuts_a_larger_one(tracer: tuple[Path, Path]) -> None:
    program, _ = tracer
    host = int(_run(program, 832, None)["host"])
    assert _run(program, host, None)["set"] == "0"
    # EFAULT (14) from xstateregs_set: the reason the guests died without the shim
    assert _run(program, 832, None)["set"] == "14"
    # a larger buffer the kernel itself cuts to its size, so the shim must pass it on too
    assert _run(program, host + 264, None) == {"host": str(host), "set": "0", "xmm0": "ok"}
