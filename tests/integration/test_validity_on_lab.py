"""The validity certificate on the real lab: a CPU hog on the host fails no cell, a real regression
on a quiet lab still does.

The hog is ``stress-ng`` from Debian, two workers at 50 % and at 100 % load, niced and not,
started by the test itself under ``timeout`` (so it ends even if the test dies) in a session of
its own, and stopped by its pid when the test ends.  Under it every cell either passes or is
inconclusive with the host's disturbance named; on the quiet lab a bound the path cannot meet
(a tbf cap below the cell's rate bound, a delay beyond its latency bound) fails with a clean
certificate.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.cell import CellContext, CellResult, CellRunner, CellSpec
from harness.fio.profiles import PROFILES
from harness.fio.workloads import for_profile, write_job
from harness.impair.profile import NetemProfile
from harness.inventory import Inventory
from harness.probes.hostload import local_snapshot
from harness.rules.bounds import BoundResult, check_rate_cap

from .conftest import ROOT, make_runner

pytestmark = [pytest.mark.lab]

#: the longest a hog may run, whatever happens to the test
HOG_LIMIT_S = 1800
#: (workers' load %, niced): the niced half-load is how a busy host was met; full load is the worst
HOGS = [(50, True), (100, False)]
#: the other two, as an extended variant
MORE_HOGS = [(50, False), (100, True)]
QUICK = PROFILES["quick"]


def _hog_id(hog: tuple[int, bool]) -> str:
    return f"load{hog[0]}{'-nice' if hog[1] else ''}"


@pytest.fixture
def hog(request: pytest.FixtureRequest) -> Iterator[str]:
    """Two stress-ng CPU workers at the parametrized load, running until the test ends."""
    if shutil.which("stress-ng") is None:
        pytest.skip("stress-ng is not installed (apt-get install stress-ng)")
    load, niced = request.param
    argv = ["timeout", str(HOG_LIMIT_S), *(["nice", "-n", "19"] if niced else []), "stress-ng"]
    argv += ["--cpu", "2", "--cpu-load", str(load), "--quiet"]
    proc = subprocess.Popen(argv, start_new_session=True)
    time.sleep(3)  # the workers up and the host's pressure risen
    try:
        yield " ".join(argv)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the session this test started, by its id
        proc.wait(timeout=30)


def _quick(rw: str, bs: int, **job: int) -> CellSpec:
    return CellSpec("itest", "single-az", for_profile(QUICK, write_job(rw, bs, **job)))  # type: ignore[arg-type]


def _cap_check(cap_bits: float, band: tuple[float, float]) -> Callable[[CellContext], list[BoundResult]]:
    def check(ctx: CellContext) -> list[BoundResult]:
        return [check_rate_cap(ctx.stats.bytes_per_s * 8, cap_bits, band)]

    return check


def _model_check(ctx: CellContext) -> list[BoundResult]:
    """QD1 protocol C under a delay: one round trip plus a write per I/O (as the cells test)."""
    product = ctx.stats.iops * ctx.rtt.median_ms / 1000
    ok = 0.5 <= product <= 1.1
    return [BoundResult("pass" if ok else "fail", f"iops × RTT {product:.2f} {'in' if ok else 'outside'} [0.5, 1.1]")]


def _cells(runner: CellRunner, inventory: Inventory) -> list[CellResult]:
    """The cells that turned red on a busy host, each with its bound."""
    band = inventory.thresholds.rate_cap_band
    capped = NetemProfile.from_text("cap-128mbit", rate="128mbit", direction="primary")
    return [
        runner.run(_quick("randwrite", 4096)),  # min 150 IOPS, p99 ≤ 50 ms (the inventory's)
        runner.run(
            CellSpec(
                "itest", "single-az", _quick("randwrite", 4096).workload, impairment=NetemProfile.from_rtt("r4", 0.004)
            ),
            extra_checks=_model_check,
        ),
        runner.run(
            CellSpec("itest", "single-az", _quick("write", 1 << 20, iodepth=4).workload, impairment=capped),
            extra_checks=_cap_check(128e6, band),
        ),
    ]


def _describe(result: CellResult) -> str:
    cert = "-" if result.certificate is None else result.certificate.reason
    return f"{result.spec.id}: {result.verdict.verdict} ({result.verdict.reason}); certificate: {cert}"


@pytest.mark.parametrize(
    "hog",
    [*HOGS, *(pytest.param(h, marks=pytest.mark.extended) for h in MORE_HOGS)],
    ids=[_hog_id(h) for h in (*HOGS, *MORE_HOGS)],
    indirect=True,
)
def test_a_cpu_hog_on_the_host_fails_no_cell(lab_inventory: Inventory, tmp_path: Path, hog: str) -> None:
    runner = make_runner(lab_inventory, tmp_path, health_timeout_s=60.0)
    try:
        results = _cells(runner, lab_inventory)
    finally:
        runner.pool.close_all()
    lines = [_describe(r) for r in results]
    print(f"hog: {hog}", *lines, sep="\n")  # `pytest -s` shows the figures
    for result, line in zip(results, lines, strict=True):
        assert result.verdict.verdict != "fail", line
        assert result.certificate is not None
        host = [f for f in result.certificate.fields if f.where == "host" and f.name == "cpu_pressure_pct"]
        assert host, f"no host pressure read: {line}"
        assert any(f.name == "other_cpu_pct" for f in result.certificate.fields), f"no other programs read: {line}"
        if result.verdict.verdict == "inconclusive" and result.validity.passed:
            assert result.verdict.reason.startswith("disturbed: "), line


def test_a_tbf_cap_below_the_bound_still_fails_on_a_quiet_lab(lab_inventory: Inventory, tmp_path: Path) -> None:
    quiet = local_snapshot()
    runner = make_runner(lab_inventory, tmp_path, health_timeout_s=60.0)
    try:
        # the path capped at 128 Mbit/s, the bound asking for 80-100 % of 256
        capped = NetemProfile.from_text("cap-128mbit", rate="128mbit", direction="primary")
        spec = CellSpec("itest", "single-az", _quick("write", 1 << 20, iodepth=4).workload, impairment=capped)
        result = runner.run(spec, extra_checks=_cap_check(256e6, lab_inventory.thresholds.rate_cap_band))
    finally:
        runner.pool.close_all()
    print(_describe(result), f"host cpu some avg10 at the start: {quiet.psi.get('cpu')}", sep="\n")
    assert result.certificate is not None and result.certificate.status == "clean", _describe(result)
    assert result.verdict.verdict == "fail" and "of the 256 Mbit/s cap" in result.verdict.reason


def test_a_delay_beyond_the_latency_bound_still_fails_on_a_quiet_lab(lab_inventory: Inventory, tmp_path: Path) -> None:
    runner = make_runner(lab_inventory, tmp_path, health_timeout_s=60.0)

    def p99_bound(ctx: CellContext) -> list[BoundResult]:
        p99 = (ctx.stats.clat_p99_us or 0) / 1000
        return [BoundResult("pass" if p99 <= 10 else "fail", f"p99 {p99:.1f} ms {'≤' if p99 <= 10 else '>'} 10 ms")]

    try:
        delayed = NetemProfile.from_rtt("rtt20ms", 0.020)
        result = runner.run(
            CellSpec("itest", "single-az", _quick("randwrite", 4096).workload, impairment=delayed),
            extra_checks=p99_bound,
        )
    finally:
        runner.pool.close_all()
    print(_describe(result))
    # the RTT check expects the calibration plus the 20 ms added: the delay is no disturbance
    assert result.certificate is not None and result.certificate.status == "clean", _describe(result)
    assert result.verdict.verdict == "fail" and "> 10 ms" in result.verdict.reason


@pytest.mark.parametrize(
    "hog",
    [(50, True), pytest.param((100, False), marks=pytest.mark.extended)],
    ids=["load50-nice", "load100"],
    indirect=True,
)
def test_scenarios_under_a_cpu_hog_have_no_failed_cell(default_lab: object, tmp_path: Path, hog: str) -> None:
    """The cells that turned red on a busy host (the bandwidth cap on every pair, the latency
    sweep at its longest delay), run by the user's command under the hog."""
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "scenarios/test_bandwidth_cap.py",
            "scenarios/test_latency_sweep.py",
            "-k",
            "test_bandwidth_cap or rtt10ms",
            "-n",
            "2",
            "--reports",
            str(tmp_path),
            "-p",
            "no:cacheprovider",
            "-q",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=HOG_LIMIT_S - 60,
    )
    run = (tmp_path / "latest").resolve()
    junit = ET.parse(run / "junit.xml")
    failed = [tc.get("name") for tc in junit.iter("testcase") if tc.find("failure") is not None]
    skipped = {
        str(tc.get("name")): str(mark.get("message") or "")
        for tc in junit.iter("testcase")
        if (mark := tc.find("skipped")) is not None
    }
    print(f"hog: {hog}", *(f"skipped {n}: {m}" for n, m in skipped.items()), sep="\n")
    assert failed == [], res.stdout[-3000:]
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    # what the report's first screen says: certified clean, disturbed (by what), inconclusive
    comparison = (run / "comparison.md").read_text()
    assert "- **validity**: " in comparison
