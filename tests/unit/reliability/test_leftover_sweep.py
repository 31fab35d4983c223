"""Preflight removes a crashed run's leftovers only when asked, and restores the pre-state (case 19).

Cases of tests/RELIABILITY_CASES.md, the fault and bad-input map; each test is marked
``reliability_row(N)`` and named ``test_case_NN_*``; select a case with ``-k rowNN``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import cast

import pytest

from harness.remote import CommandResult
from harness.remote.pool import ConnectionPool
from harness.safety.preflight import run_preflight
from harness.safety.sweep import leftover_check
from tests.doubles import LAB, Answer, FakePool, FakeRunner, data
from tests.unit.reliability.support import finding, lab_node

LISTING = data("leftovers/listing-fault-qdisc-a1.txt")  # recorded on lab3's a1
RECORD = data("leftovers/fault-record-a1.json")
RECORD_PATH = LISTING.split("\t")[2].split("\n")[0]
DEFAULT_ROOT = data("tc/lab/default-root.json")
HARNESS_ROOT = data("tc/lab/harness-t-qdisc.json")


@dataclass
class CrashedNode(FakeRunner):
    """a1 with a SIGKILLed run's fault on it: the finder lists it until an undo ran (unless the
    node is ``stubborn``), and vec1's root is the harness's until then."""

    removed: bool = False
    stubborn: bool = False

    def run_script(self, script: str, *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        if "for f in $root/*/faults/*.json" in script:  # the leftover finder
            self.calls.append("list leftovers")
            return CommandResult(self.name, "list", 0, "" if self.removed else LISTING, "", 0.01)
        if "tc qdisc del dev" in script and not self.stubborn:
            self.removed = True
        # preflight's batch reads vec1's qdiscs as they are at that moment
        self.batch["qdisc"] = Answer(DEFAULT_ROOT if self.removed else HARNESS_ROOT)
        return super().run_script(script, timeout=timeout, check=check, sudo=sudo)

    def run(self, argv: object, *, timeout: float, check: bool = True, sudo: bool = True) -> CommandResult:
        if argv == ["tc", "-j", "qdisc", "show", "dev", "vec1"]:
            self.calls.append("tc -j qdisc show dev vec1")
            return CommandResult(self.name, "tc", 0, DEFAULT_ROOT if self.removed else HARNESS_ROOT, "", 0.01)
        return super().run(cast(list[str], argv), timeout=timeout, check=check, sudo=sudo)


def _crashed(*, stubborn: bool = False) -> CrashedNode:
    base = lab_node("a1")
    node = CrashedNode(
        "a1",
        batch=base.batch,
        argv={("cat", RECORD_PATH): [Answer(RECORD)]},
        scripts=[("", Answer())],
        stubborn=stubborn,
    )
    return node


@pytest.mark.reliability_row(19)
def test_case_19_without_the_flag_leftovers_block_and_nothing_is_removed() -> None:
    node = _crashed()
    status, detail = leftover_check(node, clean=False)
    assert status == "BLOCK" and detail.startswith(
        f"a1: fault (run 20261125-153500-a1b2): {RECORD_PATH}; a1: qdisc: vec1"
    )
    assert detail.endswith("or preflight with --clean-leftovers")
    assert node.calls == ["list leftovers"]  # read only


@pytest.mark.reliability_row(19)
def test_case_19_the_flag_removes_them_and_checks_the_recorded_pre_state() -> None:
    assert json.loads(RECORD)["pre_root"] == "default root pfifo_fast 0: root"
    node = _crashed()
    status, detail = leftover_check(node, clean=True)
    assert status == "warn"
    assert detail == (
        f"removed a1: fault (run 20261125-153500-a1b2): {RECORD_PATH}; a1: qdisc: vec1; "
        "vec1 restored to the default root pfifo_fast 0: root recorded before the fault"
    )
    assert any("tc qdisc del dev vec1 root handle 4842:" in c for c in node.calls)
    assert not any("/run/harness/lock" in c for c in node.calls)  # the lock is never broken here


@pytest.mark.reliability_row(19)
def test_case_19_what_cannot_be_removed_still_blocks() -> None:
    status, detail = leftover_check(_crashed(stubborn=True), clean=True)
    assert status == "BLOCK" and "; STILL THERE: a1: fault (run 20261125-153500-a1b2)" in detail
    assert detail.endswith("vec1 not restored: harness root prio 4842: root")


@pytest.mark.reliability_row(19)
def test_case_19_preflight_cleans_before_it_reads_the_qdiscs_and_the_run_goes_on() -> None:
    a1 = _crashed()
    pool = cast(ConnectionPool, FakePool({"a1": a1, "a2": lab_node("a2")}))
    blocked = run_preflight(LAB, pool, pairs=["single-az"])
    assert finding(blocked, "a1", "leftovers").status == "BLOCK" and not blocked.ok
    report = run_preflight(LAB, pool, pairs=["single-az"], clean_leftovers=True)
    assert finding(report, "a1", "leftovers").status == "warn"
    assert finding(report, "a1", "qdisc").status == "ok"  # read after the removal
    assert report.ok, report.render()
