"""What every hostile-input test of a surface checks, in one place: the command run in-process
under a time guard (a hang) and an address-space guard (a memory blow-up), its answer (an
exit code the README gives bad input, never an internal error or a traceback), the files it
left (nothing written or changed outside where it may write) and its words and files (no
secret), plus the settings that keep every surface's fuzz target within a few seconds.

A new surface gets its fuzz target by calling :func:`run_cli` over a hypothesis strategy of
its format with :data:`FUZZ` and asserting :meth:`Outcome.clean`, :func:`unchanged` and
:func:`no_secret` on what it did.
"""

from __future__ import annotations

import contextlib
import io
import os
import resource
import signal
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Final

from hypothesis import HealthCheck, settings

from harness.cli import main

__all__ = ["FUZZ", "GUARD_S", "Outcome", "Tree", "no_secret", "run_cli", "unchanged"]

#: Seconds one command may take before it counts as a hang.
GUARD_S: Final = 10
#: Address space one command may add before it counts as a memory blow-up.
MEMORY_GUARD: Final = 1 << 30
#: Each fuzz target's examples: the whole set of targets stays within about a minute
#: (HARNESS_FUZZ_EXAMPLES=N runs N each, for a longer search by hand).
FUZZ = settings(
    max_examples=int(os.environ.get("HARNESS_FUZZ_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


class Hang(Exception):
    """The command did not answer within :data:`GUARD_S`."""


@dataclass(frozen=True)
class Outcome:
    """What one command did: exit code, what it printed, how long it took."""

    argv: tuple[str, ...]
    code: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def internal_error(self) -> bool:
        return self.code == 70 or "Traceback" in self.stderr or "internal error" in self.stderr

    def clean(self, codes: Sequence[int] = (0, 2)) -> Outcome:
        """Assert a handled answer: one of ``codes``, no internal error, errors start ``error:``."""
        assert not self.internal_error, f"harness {' '.join(self.argv)}: internal error\n{self.stderr}"
        assert self.code in codes, f"harness {' '.join(self.argv)}: exit {self.code}\n{self.stderr}"
        if self.code == 2:
            first = self.stderr.lstrip().splitlines()[0] if self.stderr.strip() else ""
            assert first.startswith(("error: ", "harness ")), self.stderr
        return self

    def refusal(self) -> str:
        """The one-line refusal (exit 2) the command printed; asserts it is one line."""
        self.clean((2,))
        lines = [line for line in self.stderr.splitlines() if line.strip() and not line.startswith("note: ")]
        assert len(lines) == 1, f"expected one line, got:\n{self.stderr}"
        return lines[0]


@contextlib.contextmanager
def _guarded() -> Iterator[None]:
    def expired(signum: int, frame: FrameType | None) -> None:
        raise Hang(f"no answer within {GUARD_S} s")

    with Path("/proc/self/statm").open() as statm:
        pages = int(statm.read().split()[0])
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = pages * os.sysconf("SC_PAGE_SIZE") + MEMORY_GUARD
    resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(GUARD_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def run_cli(argv: Iterable[str]) -> Outcome:
    """``harness ARGV`` in this process, under the time and memory guards (a hang raises :class:`Hang`;
    a blow-up is the MemoryError the guard provokes: an internal error)."""
    args = tuple(argv)
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    with _guarded(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's own refusals
            code = int(exc.code or 0)
    return Outcome(args, code, out.getvalue(), err.getvalue(), time.monotonic() - started)


Tree = dict[str, tuple[int, int, bool]]


def _state(root: Path) -> Tree:
    state: Tree = {}
    for path in [root, *root.rglob("*")]:
        info = path.lstat()
        if path.is_dir() and not path.is_symlink():  # a directory changes when a file in it is made
            state[str(path.relative_to(root))] = (0, 0, False)
            continue
        state[str(path.relative_to(root))] = (info.st_size, info.st_mtime_ns, path.is_symlink())
    return state


@contextlib.contextmanager
def unchanged(*roots: Path, allowed: Iterable[str] = ()) -> Iterator[None]:
    """Assert that nothing under ``roots`` is made, changed or removed by the block, except the
    paths (relative to their root) in ``allowed``."""
    before = {root: _state(root) for root in roots}
    yield
    keep = set(allowed)
    for root, state in before.items():
        after = _state(root)
        moved = {p for p in set(state) | set(after) if state.get(p) != after.get(p)} - keep - {"."}
        assert not moved, f"written without a flag under {root}: {sorted(moved)}"


def no_secret(secret: str, texts: Iterable[str] = (), files: Iterable[Path] = ()) -> None:
    """Assert ``secret`` is in none of ``texts`` nor in any file (or file under a directory) of ``files``."""
    for text in texts:
        assert secret not in text, f"the secret leaked: {text[:300]}"
    for path in files:
        for file in [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]:
            assert secret.encode() not in file.read_bytes(), f"the secret leaked into {file}"
