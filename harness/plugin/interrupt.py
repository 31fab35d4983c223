"""Ctrl-C, SIGTERM and SIGHUP in the controller.

* The **first** signal becomes pytest's Ctrl-C path (``KeyboardInterrupt``, which pytest does
  not raise for SIGTERM itself): each cell's undo runs (fio stopped, faults removed
  and verified gone), then the fixtures' teardown, the lock's release, the run's record.
* A **second** signal during that cleanup does not abandon it: it says "cleaning up, please
  wait" and the cleanup goes on (a CI runner sends SIGTERM after SIGINT; an impatient person
  presses Ctrl-C twice).
* A **third** forces the exit (130) at once, naming what the run's ledger says is left on the
  nodes and the command that removes it; the node-side dead-man switches remove it anyway.

The test the interrupt landed in is reported as such: a ``<testcase>`` with an ``interrupted``
error in the JUnit file (pytest writes none for it) and an ``interrupted`` line in the report's
header (run.json's ``interrupted``).
"""

from __future__ import annotations

import os
import signal
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, Final, NoReturn

import pytest

__all__ = ["INTERRUPTING_SIGNALS", "INTERRUPT_KEY", "InterruptGuard", "mark_interrupted"]

INTERRUPTING_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
EXIT_INTERRUPTED: Final = 130


def _say(message: str) -> None:
    print(f"\n[harness] {message}", file=sys.stderr, flush=True)


def _exit_now(code: int) -> NoReturn:
    os._exit(code)


@dataclass(eq=False)  # a pytest plugin object: hashed by identity
class InterruptGuard:
    """The controller's handler of the interrupting signals: one interrupt, then patience."""

    #: what is still left on the nodes, and how to remove it (read when a third signal forces the exit)
    leftovers: Callable[[], tuple[list[str], str]] = lambda: ([], "")
    say: Callable[[str], None] = _say
    force_exit: Callable[[int], Any] = _exit_now
    signals: list[str] = field(default_factory=list)
    #: the test that was running when the first signal came (its node id)
    running: str | None = None
    interrupted_test: str | None = None

    @property
    def interrupted(self) -> bool:
        return bool(self.signals)

    def describe(self) -> str:
        """``tests/x.py::test_y by SIGTERM`` (or ``between tests``)."""
        where = self.interrupted_test or "between tests"
        return f"{where} by {self.signals[0] if self.signals else 'KeyboardInterrupt'}"

    def handle(self, signum: int, _frame: FrameType | None = None) -> None:
        name = signal.Signals(signum).name
        self.signals.append(name)
        if len(self.signals) == 1:
            self.interrupted_test = self.running
            raise KeyboardInterrupt(f"{name}: interrupted, cleaning up")
        if len(self.signals) == 2:
            self.say(
                f"{name}: cleaning up, please wait (faults, fio and the lock are being removed); "
                "a third interrupt exits at once and leaves them to the nodes' dead-man switches"
            )
            return
        left, command = self.leftovers()
        what = "; ".join(left) if left else "nothing the run's ledger knows of (the cluster lock may remain)"
        self.say(f"{name}: exiting without finishing the cleanup. Left: {what}. Remove with: {command}")
        self.force_exit(EXIT_INTERRUPTED)

    def install(self) -> None:
        for sig in INTERRUPTING_SIGNALS:
            signal.signal(sig, self.handle)

    # -- pytest hooks (registered as a plugin object in the controller) ------------------------
    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self.running = nodeid

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        self.running = None

    def pytest_keyboard_interrupt(self) -> None:
        # Ctrl-C before install() (or a KeyboardInterrupt raised by other code): still one
        if not self.signals:
            self.signals.append("SIGINT")
            self.interrupted_test = self.running


#: where the controller keeps its guard (``config.stash``)
INTERRUPT_KEY = pytest.StashKey[InterruptGuard]()


def mark_interrupted(xml: bytes, nodeid: str | None, reason: str) -> bytes:
    """pytest's JUnit document with the interrupted test added as a testcase whose error is of
    type ``interrupted`` (pytest writes no testcase for a test a KeyboardInterrupt ended)."""
    from _pytest.junitxml import mangle_test_address

    root = ET.fromstring(xml)
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    if suite is None:
        return xml
    names = mangle_test_address(nodeid) if nodeid else ["run", "interrupted"]
    classname = ".".join(names[:-1])
    # interrupted in its teardown, the test has its testcase; interrupted in its call, pytest
    # left an empty <testcase/> (its setup was logged, its call never): either element becomes
    # the interrupted test, else a new one is added
    cases = list(suite.iter("testcase"))
    case = next((c for c in cases if (c.get("classname"), c.get("name")) == (classname, names[-1])), None)
    if case is None:
        case = next((c for c in cases if not c.get("name")), None)
    if case is None:  # (an Element without children is falsy: no `or` here)
        case = ET.SubElement(suite, "testcase")
    case.attrib.update({"classname": classname, "name": names[-1], "time": case.get("time", "0")})
    error = ET.SubElement(case, "error", {"type": "interrupted", "message": f"interrupted: {reason}"})
    error.text = f"the run was interrupted ({reason}); its cleanup ran before the exit"
    for key in ("tests", "errors"):
        suite.set(key, str(int(suite.get(key, "0")) + 1))
    return bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True))
