"""Controller-only: a run on the embedded lab that had failures ends with the lab doctor's
verdict (:mod:`harness.lab.doctor`), before the lab goes down.

A failed cell on the lab has two kinds of cause, the harness or the lab under it (a guest that
died, a replication path that stopped carrying traffic).  The doctor says which, and keeps its
evidence in ``reports/<run-id>/lab-doctor.txt``; its findings end the terminal report, where a
CI log's tail shows them.  Not run after an interrupt (the undo's time budget is for the undo)
nor off the lab (a real cluster's network is not ours to judge).
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.plugin.interrupt import INTERRUPT_KEY
from harness.plugin.session import HarnessSession

__all__ = ["LabDoctorAtEnd"]


class LabDoctorAtEnd:
    def __init__(self, hs: HarnessSession, config: pytest.Config) -> None:
        self.hs = hs
        self.config = config
        self.lines: list[str] = []

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        guard = self.config.stash.get(INTERRUPT_KEY, None)
        if self.hs.inventory.lab is None or not session.testsfailed or (guard is not None and guard.interrupted):
            return
        from harness.lab.doctor import diagnose_and_keep
        from harness.lab.lifecycle import Lab

        kept = self.hs.run.ensure().lab_doctor_txt
        _fit, findings = diagnose_and_keep(Lab(self.hs.inventory, self.hs.inventory_path), kept)
        self.lines = [*findings.splitlines(), f"(evidence: {kept})"]

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.lines:
            terminalreporter.write_sep("-", "lab doctor (the run had failures)")
            for line in self.lines:
                terminalreporter.write_line(line)
