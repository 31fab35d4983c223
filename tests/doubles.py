"""The test doubles every unit test shares: nodes that answer with recorded output.

Nodes are played by :class:`FakeRunner`, which implements the :class:`~harness.remote.Runner`
protocol, answers with outputs recorded in ``tests/data`` (DRBD, tc, fio), unpacks
:func:`~harness.remote.run_batch` round trips into their single commands, and records every
command the code asked for, so a test can assert that nothing mutating was sent.  Behind the
replication seam the real :class:`~harness.drbd.replication.DrbdReplication` runs over such a
node (:func:`recorded_replication`): DRBD's output is never made up, only replayed.
:class:`LocalRunner` runs commands for real with this machine's ``/bin/sh`` (read-only probes
and the watcher scripts with a stand-in ``drbdsetup``).  :class:`FakeClock` stands in for
``time.monotonic``/``time.sleep``; :class:`FakePool` for a connection pool.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from harness.drbd.commands import FORBIDDEN_TOKENS
from harness.drbd.replication import DrbdReplication
from harness.errors import CommandFailed, HarnessError
from harness.inventory import load_inventory
from harness.remote import CommandResult
from harness.remote.pool import ConnectionPool

__all__ = [
    "DATA",
    "DRBDADM_VERSION",
    "LAB",
    "ONELINERS",
    "ROOT",
    "SH_DEV",
    "SH_LL_DEV",
    "Answer",
    "FakeClock",
    "FakePool",
    "FakeRunner",
    "LocalRunner",
    "data",
    "forbidden",
    "mutations",
    "recorded_replication",
]

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
#: the embedded lab's inventory: the node, pair and resource names the recordings were made with
LAB = load_inventory(ROOT / "inventories" / "lab.yaml")


def data(rel: str) -> str:
    """A recorded output, by its path under ``tests/data``."""
    return (DATA / rel).read_text()


#: drbdadm one-liners recorded on a1 (tests/data/drbd/README.md): sh-dev, sh-ll-dev, ...
ONELINERS = data("drbd/84-drbdadm-oneliners.txt").splitlines()
SH_DEV, SH_LL_DEV = ONELINERS[0], ONELINERS[1]  # /dev/drbd0, /dev/ubda
DRBDADM_VERSION = "\n".join(ONELINERS[5:8]) + "\n"


@dataclass(frozen=True)
class Answer:
    """What a node printed for one command."""

    stdout: str = ""
    rc: int = 0
    stderr: str = ""


_MARK = "@@harness-batch@@"
_BATCH_PART = re.compile(r"echo @@harness-batch@@begin:(\w+); (.*?) 2>\"\$d\.\d+\"; rc=\$\?;", re.S)


def _batch_text(name: str, answer: Answer) -> str:
    """Exactly what the batch script prints for one command (echo, output, printf, rc)."""
    err = "".join(f"{line}\n" for line in answer.stderr.splitlines())
    return f"{_MARK}begin:{name}\n{answer.stdout}\n{_MARK}stderr:{name}\n{err}{_MARK}rc:{name}:{answer.rc}\n"


@dataclass
class FakeRunner:
    """A node that answers from tables and records every command it was asked to run.

    ``argv``: replies per argv, in order (the last one repeats); ``batch``: replies per
    ``run_batch`` command name; ``scripts``: (needle, reply) for other scripts, first match
    wins; ``script_queue``: replies, in order, to scripts no needle matches.  ``calls`` holds
    every command as shell text, batch commands unpacked; ``timeouts`` the timeout of each
    ``run``/``run_script`` call.
    """

    name: str
    argv: dict[tuple[str, ...], list[Answer | BaseException]] = field(default_factory=dict)
    batch: dict[str, Answer] = field(default_factory=dict)
    scripts: list[tuple[str, Answer]] = field(default_factory=list)
    script_queue: list[Answer] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    timeouts: list[float] = field(default_factory=list)

    def _result(self, command: str, answer: Answer, check: bool) -> CommandResult:
        result = CommandResult(self.name, command, answer.rc, answer.stdout, answer.stderr, 0.01)
        if check and answer.rc != 0:
            raise CommandFailed(result)
        return result

    def run(self, argv: Sequence[str], *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        text = shlex.join(argv)
        self.calls.append(text)
        self.timeouts.append(timeout)
        queue = self.argv.get(tuple(argv))
        if not queue:
            raise AssertionError(f"{self.name}: unexpected command {text}")
        reply = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(reply, BaseException):
            raise reply
        return self._result(text, reply, check)

    def run_script(self, script: str, *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        self.timeouts.append(timeout)
        parts = _BATCH_PART.findall(script)
        if parts:
            out = []
            for name, command in parts:
                if name in self.batch:
                    self.calls.append(command)
                    out.append(_batch_text(name, self.batch[name]))
                else:
                    # a command the node also answers alone (an argv or a script it knows)
                    out.append(_batch_text(name, self._alone(command)))
            return CommandResult(self.name, "batch", 0, "".join(out), "", 0.01)
        self.calls.append(script)
        for needle, answer in self.scripts:
            if needle in script:
                return self._result(script[:80], answer, check)
        if self.script_queue:
            return self._result(script[:80], self.script_queue.pop(0), check)
        raise AssertionError(f"{self.name}: unexpected script {script[:300]!r}")

    def _alone(self, command: str) -> Answer:
        """The answer a batch part gets from the argv and script tables (recorded in ``calls``)."""
        # a shell snippet the batch runs in its own shell (`{ ...\n}`) or in an `sh -c` of its own
        inline = command[2:-2] if command.startswith("{ ") and command.endswith("\n}") else None
        argv = shlex.split(command) if inline is None else []
        script = inline if inline is not None else (argv[2] if len(argv) == 3 and argv[:2] == ["sh", "-c"] else None)
        if script is not None:
            try:
                result = self.run_script(script, timeout=0, check=False)
            except AssertionError:
                raise AssertionError(f"{self.name}: unexpected batch script {script[:300]!r}") from None
            return Answer(result.stdout, result.exit_code, result.stderr)
        result = self.run(argv, timeout=0, check=False)
        return Answer(result.stdout, result.exit_code, result.stderr)

    def ran(self, text: str) -> bool:
        """Whether a command containing ``text`` was sent."""
        return any(text in call for call in self.calls)


#: Commands that change a node (tc, DRBD roles/connections, files, processes, fio itself).
_MUTATING = re.compile(
    r"\btc (?:qdisc|filter|class) (?:add|del|delete|replace|change)\b|\btc -batch\b"
    r"|\bdrbdadm (?:primary|secondary|disconnect|connect|down|up|adjust|invalidate\S*|resume-io)\b"
    r"|--discard-my-data|--force\b|\bmkdir\b|\brm -|\bsystemd-run\b|\bsetsid\b|\bpkill\b"
    r"|\bkill -(?:s )?(?:TERM|KILL|9)\b|\bfio --name|\bwipefs\b|\bmkfs|\btouch\b"
)


def mutations(*runners: FakeRunner) -> list[str]:
    return [c for r in runners for c in r.calls if _MUTATING.search(c)]


def forbidden(*runners: FakeRunner) -> list[str]:
    """Commands carrying a DRBD repair/override token (the harness never repairs DRBD by itself)."""
    return [c for r in runners for c in r.calls if set(c.split()) & FORBIDDEN_TOKENS]


@dataclass
class LocalRunner:
    """Runs commands for real with this machine's /bin/sh (read-only probes and scripts under
    test only).  Removes the stderr files a batch leaves in /tmp when it dies half-way."""

    name: str = "local"
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    calls: list[str] = field(default_factory=list)

    def run(self, argv: Sequence[str], *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        return self.run_script(shlex.join(argv), timeout=timeout, check=check, sudo=sudo)

    def run_script(self, script: str, *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        self.calls.append(script)
        with subprocess.Popen(
            ["/bin/sh", "-c", script], env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        ) as proc:
            try:
                stdout, stderr = proc.communicate(timeout=timeout)
            finally:
                for leftover in Path("/tmp").glob(f".harness-batch.{proc.pid}.*"):
                    leftover.unlink(missing_ok=True)
        result = CommandResult(self.name, script[:80], proc.returncode, stdout, stderr, 0.0)
        if check and proc.returncode != 0:
            raise CommandFailed(result)
        return result


class FakeClock:
    """``time.monotonic`` and ``time.sleep`` for code that waits: sleeping moves the clock."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class FakePool:
    """What run_preflight (and the crash code) needs from a ConnectionPool: ``get`` (which may
    fail) and ``reset``."""

    def __init__(self, nodes: dict[str, FakeRunner | HarnessError]) -> None:
        self.nodes = nodes
        self.closed = False
        self.resets: list[str] = []

    def get(self, name: str) -> FakeRunner:
        node = self.nodes[name]
        if isinstance(node, HarnessError):
            raise node
        return node

    def open_all(self, names: list[str]) -> dict[str, FakeRunner]:
        return {name: self.get(name) for name in names}

    def close_all(self) -> None:
        self.closed = True

    def reset(self, name: str) -> None:
        self.resets.append(name)

    def as_pool(self) -> ConnectionPool:
        """This pool where the code's signature wants the real one."""
        return cast(ConnectionPool, self)


def recorded_replication(
    node: FakeRunner | LocalRunner, resource: str = "single-az", *, clock: FakeClock | None = None, **options: object
) -> DrbdReplication:
    """The real DRBD implementation of the seam over ``node``, for the lab pair of that resource
    (its device and protocol) unless ``options`` say otherwise; with a fake clock, waiting
    costs no time."""
    clock = clock or FakeClock()
    pair = next((p for p in LAB.pairs.values() if p.resource == resource), None)
    defaults: dict[str, object] = {"device": pair.device, "protocol": pair.protocol} if pair is not None else {}
    return DrbdReplication(node, resource, clock=clock, sleep=clock.sleep, **{**defaults, **options})  # type: ignore[arg-type]
