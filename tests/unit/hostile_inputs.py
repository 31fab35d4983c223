"""What every hostile-input test of a surface checks, in one place: the command run in-process
under a time guard (a hang) and an address-space guard (a memory blow-up), its answer (an
exit code the README gives bad input, never an internal error or a traceback), the files it
left (nothing written or changed outside where it may write, nor in the working and temporary
directories it was given) and its words and files (no secret), plus the settings that keep
every surface's fuzz target within a few seconds.

A new surface gets its fuzz target by calling :func:`run_cli` (or, for a parser, :func:`probe`)
over a hypothesis strategy of its format with :data:`FUZZ`, the example wrapped in
:func:`~tests.unit.fuzz_tally.surface`, and asserting :meth:`Outcome.clean`, :func:`unchanged`
and :func:`no_secret` on what it did.  Each check notes what it looked for and found into the
surface's tally (tests/unit/fuzz_tally.py).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import resource
import secrets
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Final

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.errors import HarnessError
from tests.unit.fuzz_tally import note

__all__ = [
    "FUZZ",
    "GUARD_S",
    "SENTINEL",
    "Outcome",
    "Tree",
    "fuzz",
    "no_secret",
    "no_sentinel",
    "probe",
    "run_cli",
    "secret_forms",
    "unchanged",
]

#: Seconds one command may take before it counts as a hang.
GUARD_S: Final = 10
#: Address space one command may add: past it the allocation fails (a MemoryError).
MEMORY_GUARD: Final = 1 << 30
#: Memory one command may take above what the process held before it, in MiB, before it
#: counts as a blow-up even when the code caught the MemoryError the guard provoked.
MEMORY_BLOWUP_MIB: Final = 256


def fuzz(default: int = 25) -> settings:
    """A fuzz target's settings: ``default`` examples (the whole set of targets stays within
    about a minute), or HARNESS_FUZZ_EXAMPLES=N each, for a longer search by hand."""
    return settings(
        max_examples=int(os.environ.get("HARNESS_FUZZ_EXAMPLES", str(default))),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )


#: The settings of a target whose example runs a command (a fraction of a second each).
FUZZ: Final = fuzz()

#: A password a target plants in its input, in the forms of :func:`secret_forms`; found in any
#: output, it leaked.  Drawn when the tests start: hypothesis feeds a module's own string
#: constants to its text strategies, and a bare sentinel is a name, not a password.
SENTINEL: Final = f"Qz9{secrets.token_hex(6)}Pw7"
#: What of the sentinel counts as leaked: its first two thirds (a value quoted by its start,
#: cut inside the password, leaks most of it).
_SENTINEL_HEAD: Final = SENTINEL[:12]
_TRACEBACK_FILE: Final = re.compile(r"\Aharness-traceback-")


#: The sentinel as a user could paste it where it does not belong (every form is one the
#: redactor knows; none holds a blank, so it fits a YAML scalar or an INI value).
_FORMS: Final = (
    f"postgresql://ci:{SENTINEL}@db.example.com/harness",
    f"https://u:{SENTINEL}@pushgateway.example.com:9091/",
    f"password={SENTINEL}",
    f"DB_PASSWORD={SENTINEL}",
    f"--results-db=postgres://ci:{SENTINEL}@h/d",
)


def secret_forms() -> st.SearchStrategy[str]:
    """The sentinel in one of its secret forms."""
    return st.sampled_from(_FORMS)


@dataclass
class _Measure:
    """What the guards saw of one call: a hang, the peak memory above the start."""

    hung: bool = False
    peak_mib: float = 0.0


def _status_kib(field_name: str) -> int:
    text = Path("/proc/self/status").read_text()
    match = re.search(rf"^{field_name}:\s+(\d+) kB", text, re.M)
    return int(match[1]) if match else 0


@contextlib.contextmanager
def _guarded() -> Iterator[_Measure]:
    measure = _Measure()

    def expired(signum: int, frame: FrameType | None) -> None:
        measure.hung = True
        raise Hang(f"no answer within {GUARD_S} s")

    with contextlib.suppress(OSError):  # the peak (VmHWM) starts again from what is resident now
        Path("/proc/self/clear_refs").write_text("5")
    resident = _status_kib("VmRSS")
    with Path("/proc/self/statm").open() as statm:
        pages = int(statm.read().split()[0])
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = pages * os.sysconf("SC_PAGE_SIZE") + MEMORY_GUARD
    resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(GUARD_S)
    try:
        yield measure
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        measure.peak_mib = max(0, _status_kib("VmHWM") - resident) / 1024


class Hang(Exception):
    """The command did not answer within :data:`GUARD_S`."""


@dataclass(frozen=True)
class Outcome:
    """What one command did: exit code, what it printed, how long it took, what the guards saw
    and what it left in the working and temporary directories it was given."""

    argv: tuple[str, ...]
    code: int
    stdout: str
    stderr: str
    seconds: float
    hung: bool = False
    peak_mib: float = 0.0
    strays: tuple[str, ...] = field(default=())

    @property
    def blew_up(self) -> bool:
        """More memory than the bound, or a MemoryError nobody handled (a handled one, such as
        paramiko asking for a packet a server announced, is a refusal that took no memory)."""
        crashed = self.code == 70 and "MemoryError" in self.stderr
        return crashed or self.peak_mib > MEMORY_BLOWUP_MIB

    @property
    def internal_error(self) -> bool:
        return self.code == 70 or "Traceback" in self.stderr or "internal error" in self.stderr

    def clean(self, codes: Sequence[int] = (0, 2)) -> Outcome:
        """Assert a handled answer: one of ``codes``, no hang, blow-up or internal error, nothing
        left in the working or temporary directory; errors start ``error:``."""
        command = f"harness {' '.join(self.argv)}"
        assert not self.hung, f"{command}: no answer within {GUARD_S} s"
        assert not self.blew_up, f"{command}: {self.peak_mib:.0f} MiB more memory\n{self.stderr}"
        assert not self.internal_error, f"{command}: internal error\n{self.stderr}"
        assert not self.strays, f"{command}: wrote {list(self.strays)} into its working or temporary directory"
        assert self.code in codes, f"{command}: exit {self.code}\n{self.stderr}"
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


def _note(outcome: Outcome) -> None:
    found = {"hang"} if outcome.hung else {"memory"} if outcome.blew_up else set()
    if not found and outcome.internal_error:
        found = {"internal"}
    note(("internal", "hang", "memory", "write"), found | ({"write"} if outcome.strays else set()), outcome.peak_mib)


@contextlib.contextmanager
def _scratch() -> Iterator[Path]:
    """A fresh working directory and temporary directory for one command; what it leaves in
    them is what it wrote without being asked (relative defaults, temporary files kept)."""
    scratch = Path(tempfile.mkdtemp(prefix="harness-fuzz-"))
    (scratch / "cwd").mkdir()
    (scratch / "tmp").mkdir()
    cwd, tmpdir = os.getcwd(), tempfile.tempdir
    os.chdir(scratch / "cwd")
    tempfile.tempdir = str(scratch / "tmp")
    try:
        yield scratch
    finally:
        os.chdir(cwd)
        tempfile.tempdir = tmpdir
        shutil.rmtree(scratch, ignore_errors=True)


def _strays(scratch: Path) -> tuple[str, ...]:
    """What a call left in its :func:`_scratch` (the crash handler's traceback file aside)."""
    left = [p for p in scratch.rglob("*") if p.is_file() or p.is_symlink()]
    return tuple(str(p.relative_to(scratch)) for p in left if not _TRACEBACK_FILE.match(p.name))


def run_cli(argv: Iterable[str]) -> Outcome:
    """``harness ARGV`` in this process, in a fresh working and temporary directory, with a
    closed standard input (as in CI), under the time and memory guards (a hang is the alarm's
    exception, a blow-up the MemoryError the guard provokes; both also end in an internal
    error, which the Outcome tells apart)."""
    args = tuple(argv)
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    stdin, sys.stdin = sys.stdin, io.StringIO()
    with _scratch() as scratch:
        try:
            with _guarded() as measure, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main(list(args))
                except SystemExit as exc:  # argparse's own refusals
                    code = int(exc.code or 0)
        finally:
            sys.stdin = stdin
        strays = _strays(scratch)
    seconds = time.monotonic() - started
    outcome = Outcome(args, code, out.getvalue(), err.getvalue(), seconds, measure.hung, measure.peak_mib, strays)
    _note(outcome)
    return outcome


@contextlib.contextmanager
def probe() -> Iterator[None]:
    """A call into one of the harness's parsers under the guards, in a fresh working and
    temporary directory: an exception out of the block that is no
    :class:`~harness.errors.HarnessError` is an internal error (it is re-raised), a file left
    in either directory a write nobody asked for."""
    found: set[str] = set()
    measure = _Measure()
    with _scratch() as scratch:
        try:
            with _guarded() as measure:
                yield
        except HarnessError:
            raise
        except MemoryError:
            found.add("memory")
            raise
        except Exception:
            found.add("hang" if measure.hung else "internal")
            raise
        finally:
            blew_up = measure.peak_mib > MEMORY_BLOWUP_MIB
            strays = _strays(scratch)
            found |= {"memory"} if blew_up else set()
            note(("internal", "hang", "memory", "write"), found | ({"write"} if strays else set()), measure.peak_mib)
    assert not blew_up, f"{measure.peak_mib:.0f} MiB more memory"
    assert not strays, f"wrote {list(strays)} into its working or temporary directory"


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
    paths (relative to their root) in ``allowed``, a directory with everything in it."""
    before = {root: _state(root) for root in roots}
    yield
    keep = {".", *allowed}
    moved: set[str] = set()
    for root, state in before.items():
        after = _state(root)
        changed = {p for p in set(state) | set(after) if state.get(p) != after.get(p)}
        moved |= {f"{root}/{p}" for p in changed if not any(p == k or p.startswith(f"{k}/") for k in keep)}
    note(("write",), {"write"} if moved else ())
    assert not moved, f"written without a flag: {sorted(moved)}"


def no_sentinel(inputs: Iterable[str], texts: Iterable[str] = (), files: Iterable[Path] = ()) -> None:
    """:func:`no_secret` of the sentinel (of its first two thirds, so a quote cut inside it
    counts), when the inputs hold it only in its secret forms: hypothesis reuses a string one
    draw made in another, and a bare sentinel (an inventory named ``Qz9…Pw7``) is no password,
    so the harness may print it."""
    bare = "".join(inputs)
    for form in _FORMS:
        bare = bare.replace(form, "")
    if _SENTINEL_HEAD in bare:
        note(("leak",))
        return
    no_secret(_SENTINEL_HEAD, texts, files)


def no_secret(secret: str, texts: Iterable[str] = (), files: Iterable[Path] = ()) -> None:
    """Assert ``secret`` is in none of ``texts`` nor in any file (or file under a directory) of ``files``."""
    leaks = [text[:300] for text in texts if secret in text]
    for path in files:
        for file in [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]:
            if secret.encode() in file.read_bytes():
                leaks.append(str(file))
    note(("leak",), {"leak"} if leaks else ())
    assert not leaks, f"the secret leaked: {leaks}"
