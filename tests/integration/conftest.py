"""Integration fixtures: the default embedded lab (inventories/lab.yaml), booted once per
session unless already up (then reused and left up), and a cell runner writing to tmp.

After a lab test fails, the lab doctor (:mod:`harness.lab.doctor`) judges the lab.  A lab
that is no longer fit to measure (a dead guest, a pair that stays down, a replication path
that does not answer) is restarted, so one broken lab fails one test and not every test
after it; what the doctor found, and where its evidence is kept, ends the session's report.

Every cell a test's runners measure carries its validity certificate, the lab host's own
pressure included, as a scenario's cell does.  A test whose assertion fails after a cell was
measured in a disturbed window (a busy CI machine) is inconclusive, skipped with the disturbance
and the assertion in its reason (:func:`harness.plugin.verdicts.assertion_verdict`, under the
``--inconclusive`` policy); on a quiet lab the same assertion still fails.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from harness.cell import CellResult, CellRunner, CellSpec
from harness.errors import HarnessError
from harness.fio.profiles import PROFILES
from harness.fio.workloads import for_profile, write_job
from harness.impair.profile import NetemProfile
from harness.inventory import Inventory, load_inventory
from harness.lab.doctor import diagnose_and_keep
from harness.lab.hostload import lab_host_probe
from harness.lab.lifecycle import Lab
from harness.plugin.verdicts import as_skipped, assertion_verdict, failure_text
from harness.runfiles.ledger import Ledger

ROOT = Path(__file__).resolve().parents[2]
# HARNESS_LAB_INVENTORY points the lab tests at another lab instance (its own namespace and
# state directory), so several people can run them on one machine side by side.
LAB_INVENTORY = Path(os.environ.get("HARNESS_LAB_INVENTORY") or ROOT / "inventories" / "lab.yaml")


@pytest.fixture(scope="session")
def default_lab() -> Iterator[Lab]:
    if os.geteuid() != 0:
        pytest.fail("lab integration tests need root (run ./run tests as root)")
    lab = Lab(load_inventory(LAB_INVENTORY), LAB_INVENTORY, progress=print)
    state = lab.state()
    booted = False
    if state is None or state.phase != "up":
        lab.down()
        lab.up()
        booted = True
    yield lab
    if booted:
        assert lab.down() == []


_CALL_FAILED = pytest.StashKey[bool]()
#: what the doctor found after failed lab tests: (test, findings, evidence file)
LAB_FAULTS: list[tuple[str, str, Path]] = []


class CertifiedRunner(CellRunner):
    """A cell runner that keeps the results of the cells it measured, for the test's verdict."""

    measured: list[CellResult]

    def run_series(self, specs: Sequence[CellSpec], **options: Any) -> list[CellResult]:
        results = super().run_series(specs, **options)
        self.measured.extend(results)
        return results


#: the runners the current test made (cleared as each test starts)
_RUNNERS: list[CertifiedRunner] = []


@pytest.fixture(autouse=True)
def _fresh_runners() -> None:
    _RUNNERS.clear()


def _as_cell_verdict(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
    """A failed assertion after a cell measured in a disturbed window: inconclusive, skipped."""
    if not report.failed or call.excinfo is None or not isinstance(call.excinfo.value, AssertionError):
        return
    certificates = [r.certificate for runner in _RUNNERS for r in runner.measured]
    verdict = assertion_verdict(failure_text(call.excinfo), certificates, item.config.getoption("--inconclusive"))
    if verdict.verdict == "inconclusive":
        as_skipped(report, item, f"INCONCLUSIVE: {verdict.reason}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    if report.when == "call":
        _as_cell_verdict(item, call, report)
        item.stash[_CALL_FAILED] = report.failed
    return report


@pytest.fixture(autouse=True)
def _lab_doctor_after_a_failure(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    yield
    if "default_lab" not in request.fixturenames or not request.node.stash.get(_CALL_FAILED, False):
        return
    lab: Lab = request.getfixturevalue("default_lab")
    kept = tmp_path_factory.mktemp("lab-faults") / "doctor.txt"
    fit, findings = diagnose_and_keep(lab, kept)
    if fit:
        return
    LAB_FAULTS.append((request.node.nodeid, findings, kept))
    lab.down()
    lab.up()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for test, findings, kept in LAB_FAULTS:
        terminalreporter.write_sep("-", f"lab restarted after {test} (evidence: {kept})")
        terminalreporter.write_line(findings)


@pytest.fixture
def lab_inventory(default_lab: Lab) -> Inventory:
    return default_lab.inventory


def make_runner(inventory: Inventory, tmp: Path, **kwargs: Any) -> CellRunner:
    """A runner of its own under ``tmp`` that certifies its cells as a scenario's are (the
    lab host read too), and whose cells' certificates decide a failed assertion's verdict."""
    kwargs.setdefault("host_probe", lab_host_probe(inventory))
    runner = CertifiedRunner.standalone(inventory, tmp, **kwargs)
    assert isinstance(runner, CertifiedRunner)
    runner.measured = []
    _RUNNERS.append(runner)
    return runner


@pytest.fixture
def cell_runner(lab_inventory: Inventory, tmp_path: Path) -> Iterator[CellRunner]:
    runner = make_runner(lab_inventory, tmp_path, health_timeout_s=8.0)
    yield runner
    runner.pool.close_all()


def impaired_cell(cell_id: str) -> CellSpec:
    """A quick impaired cell of the single-az pair (a fault on both nodes, fio on a1)."""
    return CellSpec(
        cell_id,
        "single-az",
        for_profile(PROFILES["quick"], write_job("randwrite", 4096)),
        impairment=NetemProfile.from_rtt("rtt2ms", 0.002),
    )


class CellInThread:
    """A cell run in a thread, so a test can hurt its nodes while it runs."""

    def __init__(self, runner: CellRunner, spec: CellSpec) -> None:
        self.runner = runner
        self.outcome: dict[str, object] = {}
        self.worker = threading.Thread(target=self._run, args=(spec,))
        self.worker.start()

    def _run(self, spec: CellSpec) -> None:
        try:
            self.outcome["result"] = self.runner.run(spec)
        except HarnessError as exc:
            self.outcome["error"] = exc

    def wait_for(self, event: str, timeout_s: float = 90) -> None:
        """Until the run's ledger records ``event`` (e.g. ``fio-running``)."""
        ledger = Ledger(self.runner.ledger.path, "x")
        deadline = time.monotonic() + timeout_s
        while event not in [e["event"] for e in ledger.entries()] and time.monotonic() < deadline:
            time.sleep(0.05)

    def error(self, timeout_s: float) -> object:
        """The cell's error (None if it passed), once it ended within ``timeout_s``."""
        self.worker.join(timeout=timeout_s)
        assert not self.worker.is_alive(), "the cell did not end"
        return self.outcome.get("error")
