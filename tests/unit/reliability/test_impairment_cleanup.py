"""Leftovers and cleanup: owned leftovers are found and removed, node-side deadlines and undo
survive a killed or interrupted harness (cases 19, 26-28).

Cases of tests/RELIABILITY_CASES.md, the fault and bad-input map; each test is marked
``reliability_row(N)`` and named ``test_case_NN_*``; select a case with ``-k rowNN``.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pytest

import harness.cli
import harness.remote.pool
from harness.errors import (
    ConfigError,
    RefusedError,
)
from harness.fio.runner import FioRunner
from harness.fio.spec import WorkloadSpec
from harness.impair.apply import Impairer, deadman_script, disarm_script
from harness.plugin.interrupt import InterruptGuard
from harness.runfiles.ledger import Ledger
from harness.safety.leftovers import find_leftovers, parse_listing, remove_leftovers
from tests.doubles import (
    Answer,
    FakeRunner,
    mutations,
)
from tests.unit.reliability.support import (
    OTHER_RUN_ID,
    PEER,
    QDISC_T,
    RUN_ID,
    finding,
    lab_node,
    preflight,
    tc_node,
)


@pytest.mark.reliability_row(19)
def test_case_19_leftover_harness_qdisc_refuses_a_new_fault(tmp_path: Path) -> None:
    node = tc_node(["lab/harness-t-qdisc.json"], ["lab/harness-t-filter.json"])
    with pytest.raises(RefusedError, match=r"already carries a harness qdisc .*run `harness cleanup"):
        Impairer(RUN_ID, Ledger(tmp_path / "l", RUN_ID)).apply(
            node, iface="vec1", peer_ip=PEER, profile=QDISC_T, hold_s=60, role="primary"
        )
    assert mutations(node) == []


LISTING = (  # the leftover finder's own output format (KIND, RUN-ID, DETAIL)
    f"fault\t{OTHER_RUN_ID}\t/run/harness/{OTHER_RUN_ID}/faults/a1-vec1-1-1763718300.json\n"
    f"fio\t{OTHER_RUN_ID}\t4242 /run/harness/{OTHER_RUN_ID}/fio-single-az-x.pid\n"
    "qdisc\t-\tvec1\n"
    'lock\t-\t{"run_id": "' + OTHER_RUN_ID + '"}\n'
)


@pytest.mark.reliability_row(19)
def test_case_19_leftovers_are_reported_and_removed_only_when_owned() -> None:
    a1 = lab_node("a1")
    a1.scripts[0] = ("/faults/*.json", Answer(LISTING))
    report = preflight({"a1": a1, "a2": lab_node("a2")})
    left = finding(report, "a1", "leftovers")
    assert left.status == "BLOCK"
    assert left.detail.endswith("run `harness cleanup --inventory FILE`, or preflight with --clean-leftovers")
    assert left.detail.startswith(f"a1: fault (run {OTHER_RUN_ID}): /run/harness/{OTHER_RUN_ID}/faults/")
    items = parse_listing("a1", LISTING)
    node = FakeRunner("a1", scripts=[("", Answer())])
    done = remove_leftovers(node, [*items, replace(items[2], node="a2")])
    assert len(done) == 3  # fault, fio, qdisc; not the lock, not a2's item
    assert "tc qdisc del dev vec1 root handle 4842:" in node.calls[2]
    assert "pkill -TERM -s 4242" in node.calls[1]
    assert not any("/run/harness/lock" in c for c in node.calls)
    remove_leftovers(node, items, break_lock=True)
    assert node.calls[-1].startswith("rm -rf /run/harness/lock")


@pytest.mark.reliability_row(19)
def test_case_19_find_leftovers_filters_by_run() -> None:
    node = FakeRunner("a1", scripts=[("/faults/*.json", Answer(LISTING))])
    assert [i.kind for i in find_leftovers(node, run_id=RUN_ID)] == ["qdisc", "lock"]  # unknown run: always shown
    assert len(find_leftovers(node, run_id=OTHER_RUN_ID)) == 4
    with pytest.raises(ConfigError):
        find_leftovers(node, run_id="x; rm -rf /")
    assert mutations(node) == []


def _sh_bin(tmp: Path, *tools: str) -> Path:
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for tool in tools:
        found = shutil.which(tool)
        if found is None:
            pytest.skip(f"needs {tool}")
        (bin_dir / tool).symlink_to(found)
    return bin_dir


def _wait_for(condition: object, seconds: float) -> bool:
    assert callable(condition)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


@pytest.mark.reliability_row(26)
def test_case_26_dead_man_switch_fires_without_the_harness(tmp_path: Path) -> None:
    """The switch's no-systemd branch (setsid + sleep), run for real with a harmless undo."""
    bin_dir = _sh_bin(tmp_path, "sh", "sleep", "rm", "touch", "setsid", "cat", "pkill")
    env = {"PATH": str(bin_dir)}  # no systemd-run in PATH: the setsid branch
    fault, pid_file, undone = tmp_path / "f.json", tmp_path / "f.deadman", tmp_path / "undone"
    fault.write_text("{}")
    subprocess.run(
        ["/bin/sh", "-c", deadman_script(str(fault), str(pid_file), [["touch", str(undone)]], 1)],
        env=env,
        check=True,
        timeout=10,
    )
    # the arming shell (our stand-in for the harness) has exited; the node undoes the fault alone
    assert _wait_for(lambda: undone.exists() and not fault.exists(), 10)
    # disarmed in time (the harness cleared the fault itself): the undo never runs
    fault2, pid2, undone2 = tmp_path / "g.json", tmp_path / "g.deadman", tmp_path / "undone2"
    fault2.write_text("{}")
    subprocess.run(
        ["/bin/sh", "-c", deadman_script(str(fault2), str(pid2), [["touch", str(undone2)]], 1)],
        env=env,
        check=True,
        timeout=10,
    )
    subprocess.run(["/bin/sh", "-c", disarm_script(str(fault2), str(pid2))], env=env, check=True, timeout=10)
    time.sleep(2.0)
    assert not undone2.exists() and not fault2.exists() and not pid2.exists()


@pytest.mark.reliability_row(26)
def test_case_26_every_node_side_job_has_its_own_deadline(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.ndjson", RUN_ID)
    node = tc_node(
        ["lab/default-root.json", "lab/harness-t-qdisc.json"],
        ["lab/harness-t-filter.json"],
    )
    Impairer(RUN_ID, ledger).apply(node, iface="vec1", peer_ip=PEER, profile=QDISC_T, hold_s=120, role="primary")
    apply_script = next(c for c in node.calls if "tc -batch -" in c)
    # the switch is armed before the first tc change, in the same script
    assert apply_script.index("--on-active=120000ms") < apply_script.index("tc -batch -")
    assert apply_script.index("sleep 120.000") < apply_script.index("tc -batch -")
    # systemd's default timer accuracy (1 min) would let a 2 min switch fire at 3 min
    assert "--timer-property=AccuracySec=100ms" in apply_script
    fio_node = FakeRunner("a1", scripts=[("", Answer())])
    FioRunner(RUN_ID, ledger).start(fio_node, WorkloadSpec(name="w", rw="write", size=1 << 20), "/dev/drbd0", "c")
    assert "setsid sh -c" in fio_node.calls[0] and "timeout --kill-after=10 600 fio" in fio_node.calls[0]


@pytest.mark.reliability_row(27)
def test_case_27_ctrl_c_exits_130(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def interrupted(_args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(harness.cli, "_preflight", interrupted)
    assert harness.cli.main(["preflight", "--inventory", "x.yaml"]) == 130
    assert "interrupted" in capsys.readouterr().err


@pytest.mark.reliability_row(27)
def test_case_27_undo_is_registered_before_anything_changes(tmp_path: Path) -> None:
    """An interrupt landing inside apply/start must still find the fault and the fio job."""
    ledger = Ledger(tmp_path / "ledger.ndjson", RUN_ID)
    node = tc_node(
        ["lab/default-root.json", "lab/harness-t-qdisc.json"],
        ["lab/harness-t-filter.json"],
    )
    seen: list[list[str]] = []
    Impairer(RUN_ID, ledger).apply(
        node, iface="vec1", peer_ip=PEER, profile=QDISC_T, hold_s=60, role="primary",
        on_planned=lambda _planned: seen.append(mutations(node)),
    )  # fmt: skip
    assert seen == [[]] and mutations(node)
    fio_node = FakeRunner("a1", scripts=[("", Answer())])
    planned: list[int] = []
    FioRunner(RUN_ID, ledger).start(
        fio_node, WorkloadSpec(name="w", rw="write", size=1 << 20), "/dev/drbd0", "c",
        on_planned=lambda _run: planned.append(len(fio_node.calls)),
    )  # fmt: skip
    assert planned == [0] and len(fio_node.calls) == 1


@pytest.mark.reliability_row(28)
def test_case_28_sigterm_becomes_the_interrupt_path() -> None:
    with pytest.raises(KeyboardInterrupt, match="SIGTERM: interrupted"):
        InterruptGuard().handle(15, None)
