"""The pressure probe on its real prints (tests/data/pressure, recorded quiet and under a stress-ng
hog, with PSI and with /proc/pressure hidden), the snippet run for real on this machine, and the
window arithmetic with hypothesis."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import InfraError
from harness.probes.pressure import (
    CpuTimes,
    NodeSnapshot,
    NodeWindow,
    PsiTotals,
    parse_snapshot,
    pressure_script,
    pressure_window,
)
from harness.remote.batch import run_batch
from tests.doubles import LocalRunner

DATA = Path(__file__).resolve().parents[1] / "data" / "pressure"


def window(kind: str, case: str, node: str = "a1") -> NodeWindow:
    before = parse_snapshot((DATA / kind / f"{case}-before.txt").read_text(), node)
    after = parse_snapshot((DATA / kind / f"{case}-after.txt").read_text(), node)
    return pressure_window(before, after, node)


def test_the_recordings_came_from_this_snippet() -> None:
    assert (DATA / "probe.sh").read_text().rstrip("\n") == pressure_script()


def test_a_recorded_snapshot_reads_every_file() -> None:
    snap = parse_snapshot((DATA / "psi" / "r2-quiet1-before.txt").read_text())
    assert snap.uptime_s == 13649.51
    assert snap.ncpu == 2
    assert snap.cpu.jiffies == (364754, 18057, 111217, 2225332, 1627, 0, 562, 507, 0, 0)
    assert snap.cpu.steal == 507 and snap.cpu.idle == 2225332 + 1627
    assert snap.cpu.total == 364754 + 18057 + 111217 + 2225332 + 1627 + 562 + 507
    assert (snap.procs_running, snap.procs_blocked, snap.load1) == (2, 0, 2.85)
    assert set(snap.psi) == {"cpu", "io", "memory"}
    assert snap.psi["cpu"] == PsiTotals(902560404, 7.05, 0, 0.0)
    assert snap.psi["io"] == PsiTotals(15227573, 0.08, 10369495, 0.08)
    assert (snap.pswpin, snap.pswpout) == (0, 0)


def test_quiet_windows_read_low_cpu_pressure_and_hogs_high() -> None:
    quiet = [window("psi", f"r{r}-quiet{i}") for r in (2, 3) for i in (1, 2)]
    hogs = [window("psi", f"r{r}-hog-{h}") for r in (1, 2, 3) for h in ("cpu1-load50-nice", "cpu2-load100-nice")]
    assert all(w.cpu_some is not None and w.cpu_some < 0.05 for w in quiet)
    assert all(w.cpu_some is not None and w.cpu_some > 0.13 for w in hogs)
    # the window is the node's own clock: 8 s of sleep and the probe's own time
    assert all(8.0 <= w.seconds < 8.2 for w in quiet + hogs)


def test_a_recorded_hog_window_in_figures() -> None:
    w = window("psi", "r1-hog-cpu1-load50-nice")
    assert w.node == "a1" and w.has_psi
    assert w.cpu_some == pytest.approx(0.411, abs=0.001)
    assert w.memory_some == 0 and w.swapin_per_s == 0
    assert w.busy == pytest.approx(0.997, abs=0.001)


def test_without_psi_the_window_still_has_the_run_queue() -> None:
    quiet, hog = window("no-psi", "quiet"), window("no-psi", "hog-cpu2-load100-nice")
    for w in (quiet, hog):
        assert not w.has_psi and w.cpu_some is None and w.io_some is None and w.memory_some is None
        assert w.swapin_per_s == 0
    assert quiet.runnable_per_cpu == 0.5 and hog.runnable_per_cpu == 2.0
    text = (DATA / "no-psi" / "quiet-before.txt").read_text()
    assert "/proc/pressure" not in text
    assert parse_snapshot(text).psi == {}


def test_the_snippet_runs_here_and_parses() -> None:
    out = subprocess.run(["sh", "-c", pressure_script()], capture_output=True, text=True, timeout=10, check=True)
    assert out.stderr == ""
    snap = parse_snapshot(out.stdout, "here")
    assert snap.ncpu >= 1 and snap.uptime_s > 0 and snap.cpu.total > 0
    # the long interrupt line and the rest of vmstat stay on the node
    assert "intr " not in out.stdout and "nr_free_pages" not in out.stdout


def test_the_snippet_shares_a_batch_round_trip_and_two_give_a_window() -> None:
    node = LocalRunner("a1")
    first = run_batch(
        node, {"pressure": pressure_script(), "boot": ["cat", "/proc/sys/kernel/random/boot_id"]}, timeout=10
    )
    time.sleep(0.2)
    second = run_batch(node, {"pressure": pressure_script()}, timeout=10)
    assert first["pressure"].exit_code == 0 and first["pressure"].stderr == "" and first["boot"].stdout.strip()
    w = pressure_window(parse_snapshot(first["pressure"].stdout, "a1"), parse_snapshot(second["pressure"].stdout, "a1"))
    assert 0.1 <= w.seconds < 5 and w.ncpu >= 1 and 0 <= w.steal <= 1 and 0 <= w.busy <= 1
    assert w.has_psi == Path("/proc/pressure/cpu").exists()


def test_the_snippet_skips_a_file_it_cannot_read_without_a_lone_header(tmp_path: Path) -> None:
    script = pressure_script().replace("/proc/pressure/io", str(tmp_path / "absent"))
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=10, check=True)
    assert str(tmp_path) not in out.stdout and out.stderr == ""
    assert "io" not in parse_snapshot(out.stdout).psi


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "/proc/uptime missing"),
        ("==> /proc/uptime <==\n1.0 2.0\n==> /proc/loadavg <==\n0.1 0 0 1/2 3\n", "/proc/stat missing"),
        (
            "==> /proc/uptime <==\nabc\n==> /proc/loadavg <==\n0 0 0\n==> /proc/stat <==\ncpu 1 2\n"
            "procs_running 1\nprocs_blocked 0\n",
            "/proc/uptime: printed 'abc'",
        ),
        (
            "==> /proc/uptime <==\n1\n==> /proc/loadavg <==\n0\n==> /proc/stat <==\ncpu 1 2\n",
            "'procs_running'",
        ),
        (
            "==> /proc/uptime <==\n1\n==> /proc/loadavg <==\n0\n==> /proc/stat <==\ncpu 1 2\n"
            "procs_running 1\nprocs_blocked 0\n==> /proc/pressure/cpu <==\nsome avg10=x total=1\n",
            "/proc/pressure/cpu: 'some avg10=x total=1' is not a PSI line",
        ),
    ],
)
def test_a_garbled_print_names_the_node_and_the_file(text: str, needle: str) -> None:
    with pytest.raises(InfraError, match=r"^b2: ") as err:
        parse_snapshot(text, "b2")
    assert needle in str(err.value)


def _snap(uptime: float, jiffies: tuple[int, ...], psi_us: int, swapin: int, running: int = 2) -> NodeSnapshot:
    psi = {r: PsiTotals(psi_us, 0.0, psi_us, 0.0) for r in ("cpu", "io", "memory")}
    return NodeSnapshot(uptime, CpuTimes(jiffies), 2, running, 0, 0.5, psi, swapin, 0)


counters = st.tuples(*[st.integers(0, 10**9)] * 8)


@given(
    start=counters,
    step=st.tuples(*[st.integers(0, 10**6)] * 8),
    seconds=st.floats(0.01, 1e5),
    stalled=st.floats(0, 1),
    pages=st.integers(0, 10**6),
)
def test_window_shares_are_the_counters_deltas(
    start: tuple[int, ...], step: tuple[int, ...], seconds: float, stalled: float, pages: int
) -> None:
    end = tuple(a + b for a, b in zip(start, step, strict=True))
    stalled_us = int(stalled * seconds * 1e6)
    w = pressure_window(_snap(100.0, start, 0, 0), _snap(100.0 + seconds, end, stalled_us, pages), "n")
    total = sum(step)
    assert w.steal == (step[7] / total if total else 0.0)
    assert w.busy == pytest.approx(1 - (step[3] + step[4]) / total if total else 1.0)
    assert w.cpu_some is not None and w.cpu_some == pytest.approx(stalled_us / (seconds * 1e6), abs=1e-9)
    assert w.io_full == w.io_some == w.memory_some == w.cpu_some
    assert w.swapin_per_s == pytest.approx(pages / (100.0 + seconds - 100.0))
    assert all(0 <= v <= 1 for v in (w.steal, w.busy, w.cpu_some))


def test_a_counter_going_backwards_is_a_reboot() -> None:
    before = _snap(100.0, (5,) * 8, 10, 3)
    with pytest.raises(InfraError, match=r"a1: /proc/stat steal went backwards \(5 → 4\): the node rebooted"):
        pressure_window(before, _snap(101.0, (6,) * 7 + (4,), 10, 3), "a1")
    with pytest.raises(InfraError, match=r"a1: /proc/vmstat pswpin went backwards"):
        pressure_window(before, _snap(101.0, (6,) * 8, 10, 2), "a1")
    with pytest.raises(InfraError, match=r"a1: uptime 100 → 50 s: no window"):
        pressure_window(before, _snap(50.0, (6,) * 8, 10, 3), "a1")
