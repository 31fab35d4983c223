"""A cell's validity certificate from both ends of its window: the recorded pressure prints
(tests/data/pressure: this machine quiet and under a stress-ng hog, with and without PSI), the
snippet and the host probe run for real on this machine, the path's pings against the
calibration, and what the judge makes of a failed bound on a disturbed window."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cell.certificate import Readings, cell_certificate, read_ends, read_host, rtt_check
from harness.cell.judge import judge
from harness.cell.measure import Measurement
from harness.cell.spec import CellSpec
from harness.errors import ConfigError, InfraError
from harness.fio.outcome import FioOutcome
from harness.fio.report import parse_fio_json
from harness.fio.spec import WorkloadSpec
from harness.impair.profile import NetemProfile
from harness.inventory import parse_inventory
from harness.inventory.models import ThresholdSpec
from harness.lab.hostload import LabHostProbe, process_ticks
from harness.probes.hostload import HostReading, host_figures
from harness.probes.pressure import parse_snapshot
from harness.probes.rtt import RttStats
from harness.rules.validitythresholds import DEFAULT_THRESHOLDS, ValidityThresholds
from tests.doubles import LocalRunner, data

DATA = Path(__file__).resolve().parents[1] / "data" / "pressure"
QD1_4K = WorkloadSpec(name="w", rw="randwrite", bs=4096, size=1 << 20, runtime_s=5)
FIO = parse_fio_json(data("fio/fio-3.33-randwrite-4k-libaio.json"))


def prints(end: str, **cases: str) -> dict[str, str]:
    """Each node's recorded print at one end of its window: ``a1="psi/r2-quiet1"``."""
    return {node: (DATA / f"{case}-{end}.txt").read_text() for node, case in cases.items()}


def ends(**cases: str) -> tuple[Readings, Readings]:
    return Readings(prints("before", **cases)), Readings(prints("after", **cases))


def host_reading(case: str, end: str, ticks: dict[str, dict[int, int]]) -> HostReading:
    return HostReading(parse_snapshot((DATA / f"{case}-{end}.txt").read_text(), "host"), ticks)


def test_a_quiet_pair_is_clean_and_each_node_has_its_figures() -> None:
    start, end = ends(a1="psi/r2-quiet1", a2="psi/r3-quiet2")
    cell = cell_certificate(start, end, DEFAULT_THRESHOLDS)
    assert cell.certificate.status == "clean" and cell.unread == ()
    props = cell.properties()
    assert props["validity"] == "clean" and props["validity.reason"] == "clean"
    assert props["validity.a2.cpu_pressure_pct.source"] == "/proc/pressure/cpu some"
    assert props["validity.a1.cpu_pressure_pct.max"] == "10"
    assert float(props["validity.a1.window_s"]) == pytest.approx(8.0, abs=0.1)


def test_a_hog_on_the_peer_disturbs_the_cell_with_its_figure() -> None:
    start, end = ends(a1="psi/r2-quiet1", a2="psi/r1-hog-cpu1-load50-nice")
    cell = cell_certificate(start, end, DEFAULT_THRESHOLDS)
    assert cell.certificate.reason == "cpu pressure 41 % on a2 > 10 %"
    assert cell.properties()["validity.a2.cpu_pressure_pct.disturbed"] == "yes"


def test_the_lab_guests_without_psi_are_judged_by_their_run_queue() -> None:
    start, end = ends(a1="no-psi/quiet", a2="no-psi/hog-cpu2-load100-nice")
    assert cell_certificate(start, end, DEFAULT_THRESHOLDS).certificate.reason == "run queue per cpu 2 on a2 > 1.75"


def test_the_lab_host_psi_is_recorded_and_each_guests_share_too() -> None:
    start, end = ends(a1="no-psi/quiet", a2="no-psi/quiet")
    # a1's guest: its kernel process used 300 ticks, a stub that started meanwhile 100, one that
    # ended meanwhile nothing; a2's guest 40 ticks; b1 was not running at the start
    before = {"a1": {10: 5000, 11: 700}, "a2": {20: 100}}
    after = {"a1": {10: 5300, 12: 100}, "a2": {20: 140}, "b1": {30: 9}}
    hog = "psi/r3-hog-cpu2-load100-nice"
    start = Readings(start.nodes, host_reading(hog, "before", before))
    end = Readings(end.nodes, host_reading(hog, "after", after))
    # the host's PSI counts the guests' own demand: recorded, judged only when an inventory asks
    assert cell_certificate(start, end, DEFAULT_THRESHOLDS).certificate.status == "clean"
    strict = ValidityThresholds(max_host_cpu_pressure_pct=10)
    cert = cell_certificate(start, end, strict).certificate
    assert cert.reason == "cpu pressure 71 % on host > 10 %"
    shares = {f.name: f for f in cert.fields if f.name.startswith("guest_")}
    assert set(shares) == {"guest_a1_cpu_pct", "guest_a2_cpu_pct"}
    assert start.host is not None and end.host is not None
    jiffies = end.host.host.cpu.total - start.host.host.cpu.total
    assert shares["guest_a1_cpu_pct"].figure == pytest.approx(100 * 400 / jiffies)
    assert shares["guest_a2_cpu_pct"].figure == pytest.approx(100 * 40 / jiffies)
    assert all(f.threshold is None and f.source == "host /proc/PID/stat" for f in shares.values())
    loose = ValidityThresholds(max_host_cpu_pressure_pct=80)
    assert cell_certificate(start, end, loose).certificate.status == "clean"


def test_the_other_programs_cpu_on_the_lab_host_is_judged() -> None:
    """The hog's own processes (not a guest's, not the harness's) took the host's CPU: that is
    the disturbance, whatever the host's PSI says."""
    start, end = ends(a1="no-psi/quiet", a2="no-psi/quiet")
    hog = "psi/r3-hog-cpu2-load100-nice"
    snap_before = parse_snapshot((DATA / f"{hog}-before.txt").read_text(), "host")
    snap_after = parse_snapshot((DATA / f"{hog}-after.txt").read_text(), "host")
    jiffies = snap_after.cpu.total - snap_before.cpu.total
    guests = {"a1": {10: 5000}}, {"a1": {10: 5000 + jiffies // 4}}
    # the stress-ng workers: one that ran through the window, one that started meanwhile
    others = {700: 100}, {700: 100 + jiffies // 5, 701: jiffies // 10}
    first = Readings(start.nodes, HostReading(snap_before, guests[0], others[0]))
    last = Readings(end.nodes, HostReading(snap_after, guests[1], others[1]))
    cert = cell_certificate(first, last, DEFAULT_THRESHOLDS).certificate
    other = next(f for f in cert.fields if f.name == "other_cpu_pct")
    assert other.figure == pytest.approx(100 * (jiffies // 5 + jiffies // 10) / jiffies)
    assert cert.reason == f"other programs' cpu {other.figure:.0f} % on host > 5 %"
    quiet = Readings(end.nodes, HostReading(snap_after, guests[1], {700: 101}))
    assert cell_certificate(first, quiet, DEFAULT_THRESHOLDS).certificate.status == "clean"
    # not read at one end: no figure, never a guess
    unread = Readings(end.nodes, HostReading(snap_after, guests[1], None))
    fields = cell_certificate(first, unread, DEFAULT_THRESHOLDS).certificate.fields
    assert all(f.name != "other_cpu_pct" for f in fields)


def test_what_could_not_be_read_costs_its_figures_and_is_named() -> None:
    start, end = ends(a1="psi/r2-quiet1", a2="psi/r2-quiet1")
    garbled = Readings({"a1": end.nodes["a1"], "a2": "==> /proc/uptime <==\nsoon\n"}, problems=("b9: lost",))
    cell = cell_certificate(start, garbled, DEFAULT_THRESHOLDS)
    assert cell.certificate.status == "clean"
    assert {f.where for f in cell.certificate.fields} == {"a1"}
    assert cell.unread[0] == "b9: lost" and "a2: /proc/stat missing" in cell.unread[1]
    assert cell.properties()["validity.unread"] == "; ".join(cell.unread)
    # a node that rebooted between the ends: its counters went backwards
    rebooted = Readings({"a1": start.nodes["a1"]})
    later = cell_certificate(Readings({"a1": end.nodes["a1"]}), rebooted, DEFAULT_THRESHOLDS)
    assert "rebooted" in later.unread[0]


def test_the_snippet_and_the_host_probe_run_for_real_on_this_machine() -> None:
    first = read_ends([LocalRunner("a1"), LocalRunner("a2")], LabHostProbe("hlab-none", Path("/run/no-such-lab")))
    second = read_ends([LocalRunner("a1"), LocalRunner("a2")], LabHostProbe("hlab-none", Path("/run/no-such-lab")))
    assert first.problems == () and set(first.nodes) == {"a1", "a2"}
    assert first.host is not None and first.host.guest_ticks == {}  # no lab of that name runs
    assert first.host.other_ticks is not None and os.getpid() not in first.host.other_ticks
    cell = cell_certificate(first, second, DEFAULT_THRESHOLDS)
    assert cell.unread == ()
    assert {f.where for f in cell.certificate.fields} == {"a1", "a2", "host"}


def test_a_host_probe_that_fails_costs_the_host_only() -> None:
    def broken() -> HostReading:
        raise InfraError("host: the pressure probe did not run")

    assert read_host(broken) == (None, ("host: the pressure probe did not run",))
    assert read_host(None) == (None, ())


def test_a_process_cpu_ticks_are_read_from_its_stat_and_grow_as_it_works() -> None:
    before = process_ticks(os.getpid())
    deadline = process_ticks(os.getpid())
    spins = 0
    while deadline is not None and before is not None and deadline - before < 2 and spins < 50_000_000:
        spins += 1
        if spins % 100_000 == 0:
            deadline = process_ticks(os.getpid())
    assert before is not None and deadline is not None and deadline >= before + 2
    assert process_ticks(2**22 + 12345) is None  # above pid_max: never a process


@given(
    start=st.dictionaries(st.integers(1, 50), st.integers(0, 10**6), max_size=6),
    grown=st.dictionaries(st.integers(1, 50), st.integers(-(10**6), 10**6), max_size=6),
)
def test_a_guests_share_never_goes_below_zero_or_above_the_host(start: dict[int, int], grown: dict[int, int]) -> None:
    snap = parse_snapshot((DATA / "psi/r2-quiet1-before.txt").read_text(), "host")
    later = parse_snapshot((DATA / "psi/r2-quiet1-after.txt").read_text(), "host")
    after = {pid: max(0, start.get(pid, 0) + delta) for pid, delta in grown.items()}
    figures = host_figures(HostReading(snap, {"g": start}, start), HostReading(later, {"g": after}, after))
    assert 0.0 <= figures.guest_shares["g"] <= 1.0
    assert figures.other_share is not None and 0.0 <= figures.other_share <= 1.0


# -- the replication path's pings against the calibration -----------------------------------------
def test_the_busy_lab_ping_is_disturbed_and_a_cross_az_jitter_is_not() -> None:
    spec = CellSpec("s", "single-az", QD1_4K)
    # a busy lab host turned the same-AZ 0.06 ms round trip into 0.38-0.50 ms
    busy = rtt_check(spec, "a1-a2", 0.06, RttStats((0.38,) * 10, 10, 10), RttStats((0.50,) * 10, 10, 10))
    start, end = ends(a1="psi/r2-quiet1", a2="psi/r2-quiet1")
    cert = cell_certificate(start, end, DEFAULT_THRESHOLDS, rtt=busy).certificate
    assert cert.reason == "RTT before fio 0.38 ms on a1-a2 > 0.16 ms; RTT after fio 0.5 ms on a1-a2 > 0.16 ms"
    cross = rtt_check(spec, "a3-b1", 2.35, RttStats((2.5,) * 10, 10, 10), None)
    assert cell_certificate(start, end, DEFAULT_THRESHOLDS, rtt=cross).certificate.status == "clean"


def test_an_impaired_cell_expects_its_added_delay() -> None:
    impaired = CellSpec("s", "single-az", QD1_4K, impairment=NetemProfile.from_rtt("rtt10ms", 0.010))
    check = rtt_check(impaired, "a1-a2", 0.06, RttStats((10.1,) * 10, 10, 10), RttStats((10.2,) * 10, 10, 10))
    assert check is not None and check.calibration_ms == pytest.approx(10.06)
    assert rtt_check(impaired, "a1-a2", None, RttStats((10.1,), 1, 1), None) is None
    assert rtt_check(impaired, "a1-a2", 0.06, None, None) is None


# -- the judge -------------------------------------------------------------------------------------
def _judged(case: str, policy: str = "skip") -> tuple[str, str]:
    start, end = ends(a1="psi/r2-quiet1", a2=case)
    certificate = cell_certificate(start, end, DEFAULT_THRESHOLDS).certificate
    measurement = Measurement(FioOutcome(FIO, QD1_4K, wall_s=6.0), None, None)
    # the recorded job's IOPS below the floor: the bound fails
    floor = ThresholdSpec(min_iops={"*": math.ceil(FIO.write.iops) + 1000})
    spec = CellSpec("s", "single-az", QD1_4K, mode="disconnected")
    verdict = judge(spec, measurement, wall=8.0, limits=floor, certificate=certificate, policy=policy).verdict  # type: ignore[arg-type]
    return verdict.verdict, verdict.reason


def test_a_bound_that_failed_on_a_disturbed_window_is_inconclusive_naming_both() -> None:
    verdict, reason = _judged("psi/r2-hog-cpu2-load100-nice")
    assert verdict == "inconclusive"
    assert reason.startswith("disturbed: cpu pressure 82 % on a2 > 10 %; the bound that failed: ")
    assert "IOPS" in reason


def test_a_bound_that_failed_on_a_quiet_window_still_fails() -> None:
    assert _judged("psi/r3-quiet1")[0] == "fail"


def test_the_fail_policy_keeps_the_bound_as_it_failed() -> None:
    assert _judged("psi/r2-hog-cpu2-load100-nice", policy="fail")[0] == "fail"


# -- the inventory's validity section ------------------------------------------------------------------
LAB_YAML = Path(__file__).resolve().parents[2] / "inventories" / "lab.yaml"


def test_the_inventory_sets_the_thresholds_and_names_a_bad_one() -> None:
    text = LAB_YAML.read_text()
    # the lab states the defaults but for the run queue of its one-cpu guests and its same-AZ pings
    lab = {"max_runnable_per_cpu": 3.25, "min_rtt_excess_ms": 0.25}
    assert parse_inventory(text).validity == DEFAULT_THRESHOLDS.model_copy(update=lab)
    stated = "  max_host_cpu_pressure_pct: off\n"
    looser = parse_inventory(text.replace(stated, "  max_host_cpu_pressure_pct: 40\n"))
    assert looser.validity.max_host_cpu_pressure_pct == 40
    other = parse_inventory(text.replace(stated, stated + "  max_host_other_cpu_pct: 12\n"))
    assert other.validity.max_host_other_cpu_pct == 12
    with pytest.raises(ConfigError, match=r"validity\.max_steal_pct: Input should be less than or equal to 100"):
        parse_inventory(text.replace(stated, "  max_steal_pct: 250\n"))
