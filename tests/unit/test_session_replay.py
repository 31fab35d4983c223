"""Live DRBD 9 runs of the lab, replayed: the quorum and failover scenarios on the three-node and
tie-breaker resources, and the partition of the three-node one, run again through
``--replay-session`` against their recordings, with no lab, no modules and no SSH, and must
reach the verdicts the live runs reached, test by test; a recording that lacks one command
fails the replay naming it.  The recordings and the live runs' JUnit files are the embedded
lab's on DRBD 9.2.19 (tests/data/replay/README.md gives the commands that made them)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.doubles import DATA

ROOT = Path(__file__).resolve().parents[2]
REPLAY = DATA / "replay"
#: each recording, and what its live run selected (the README's commands)
SESSIONS = {
    "9219-lab-quorum-failover": (
        "scenarios/test_quorum.py",
        "scenarios/test_failover_integrity.py",
        "-k",
        "(three-node or tiebreaker) and not protocol-A and not protocol-B",
    ),
    "9219-lab-partition-three-node": ("scenarios/test_partition.py", "-k", "three-node"),
}


def verdicts(junit: Path) -> dict[str, tuple[str, str]]:
    """Each test's outcome (passed, failed, skipped) and, unless passed, its one-line reason."""
    found: dict[str, tuple[str, str]] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        test = f"{case.get('classname')}::{case.get('name')}"
        outcome, reason = "passed", ""
        for kind, name in (("failure", "failed"), ("error", "failed"), ("skipped", "skipped")):
            element = case.find(kind)
            if element is not None:
                outcome, reason = name, (element.get("message") or "").splitlines()[0] if element.get("message") else ""
                break
        found[test] = (outcome, reason)
    return found


def replay(name: str, recording: Path, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], Path, float]:
    junit = tmp_path / "junit.xml"
    env = {k: v for k, v in os.environ.items() if k != "HARNESS_LAB_DRBD_MODULES"}
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *SESSIONS[name], "--no-predict"]
    argv += ["--replay-session", str(recording), "--reports", str(tmp_path / "reports"), "--junitxml", str(junit)]
    start = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    return done, junit, time.monotonic() - start


@pytest.mark.parametrize(("name", "tests"), [("9219-lab-quorum-failover", 5), ("9219-lab-partition-three-node", 2)])
def test_the_replayed_run_reaches_the_live_runs_verdicts(tmp_path: Path, name: str, tests: int) -> None:
    done, junit, took = replay(name, REPLAY / f"{name}.json", tmp_path)
    assert junit.is_file(), done.stdout[-2000:] + done.stderr[-2000:]
    live, replayed = verdicts(REPLAY / f"{name}.junit.xml"), verdicts(junit)
    assert len(live) == tests
    assert replayed == live, done.stdout[-3000:]
    print(f"{name}: replayed {len(replayed)} tests in {took:.1f} s")  # the figure the README gives


def test_a_recording_without_one_command_fails_the_replay_naming_it(tmp_path: Path) -> None:
    name = "9219-lab-quorum-failover"
    data = json.loads((REPLAY / f"{name}.json").read_text())
    commands = data["commands"]
    # the first failover's fio, streamed on a1: asked once, so nothing else can answer it
    index = next(i for i, c in enumerate(commands) if c.get("stream") and c["node"] == "a1")
    removed = commands.pop(index)
    for entry in commands:  # outputs kept beside the recording stay where they are
        for key in ("stdout_file", "stderr_file"):
            if key in entry:
                entry[key] = str(REPLAY / entry[key])
    cut = tmp_path / "cut.json"
    cut.write_text(json.dumps(data))
    done, junit, _ = replay(name, cut, tmp_path)
    assert done.returncode != 0
    command = shlex.join(removed["argv"])
    failed = {test: reason for test, (outcome, reason) in verdicts(junit).items() if outcome == "failed"}
    first = "scenarios.test_failover_integrity::test_failover_integrity[three-node-protocol-C]"
    # the harness's writer thread swallowed the error; the test still fails naming the command
    said = f"the replay diverged from the recorded session: a1: the recording has no answer to `{command[:197]}..."
    assert failed[first].startswith(said), failed


def test_a_file_that_is_no_session_recording_is_a_one_line_usage_error(tmp_path: Path) -> None:
    # a recording of single commands, made without --record-session: no run id to replay as
    bare = REPLAY / "84-a1-single-az.json"
    done, junit, _ = replay("9219-lab-partition-three-node", bare, tmp_path)
    assert done.returncode == 4 and not junit.exists()  # pytest's usage error, before any test
    said = [line for line in done.stderr.splitlines() if "--replay-session" in line]
    assert said == [
        f"ERROR: --replay-session: {bare}: session must give the recorded run's run_id and started (its start time)"
    ], done.stderr


@pytest.mark.parametrize(
    ("where", "said"),
    [("exists.json", "the file exists; choose another file"), ("no/such/r.json", "does not exist")],
    ids=["existing-file", "missing-directory"],
)
def test_a_recording_that_cannot_be_written_is_refused_before_any_test(tmp_path: Path, where: str, said: str) -> None:
    (tmp_path / "exists.json").write_text("kept\n")
    target = tmp_path / where
    argv = [sys.executable, "-m", "pytest", "scenarios/", "--record-session", str(target), "-p", "no:cacheprovider"]
    argv += ["--reports", str(tmp_path / "reports"), "-q"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if "--record-session" in line]
    assert len(lines) == 1 and lines[0].startswith(f"ERROR: --record-session {target}: "), done.stderr
    assert lines[0].endswith(said), lines[0]
    assert (tmp_path / "exists.json").read_text() == "kept\n"
    assert not (tmp_path / "reports").exists()
