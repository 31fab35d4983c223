"""End of a run (controller only): render the reports, point ``reports/latest`` at them,
judge the ratios between cells, and print the comparison table in the terminal summary."""

from __future__ import annotations

import os
from typing import Any

import pytest

from harness.plugin.session import HarnessSession
from harness.report.run_dir import RunDir, render_run, update_latest

__all__ = ["finish_run", "print_summary"]

_STASH = pytest.StashKey[list[str]]()


def finish_run(hs: HarnessSession, session: pytest.Session) -> bool:
    """Write the run's reports; returns True when a relative bound failed."""
    from harness.relative import relative_verdicts
    from harness.report.modelfit import model_fit
    from harness.samples import read_samples

    hs.write_run_json({"exitstatus": int(session.exitstatus)})
    paths = render_run(hs.run_dir)
    update_latest(hs.reports_root, RunDir.open(hs.run_dir))
    lines = [f"reports: {hs.run_dir} (reports/latest)"] + [f"  {os.path.relpath(p, hs.run_dir)}" for p in paths]
    failed = False
    samples = read_samples(hs.run_dir / "samples.ndjson")
    for label, result in relative_verdicts(samples, hs.inventory.thresholds):
        lines.append(f"{result.verdict.upper():12} {label}: {result.reason}")
        failed |= result.verdict == "fail"
    lines += model_fit(samples).summary()
    session.config.stash[_STASH] = lines
    return failed


def print_summary(hs: HarnessSession, terminalreporter: Any) -> None:
    lines = terminalreporter.config.stash.get(_STASH, None)
    if lines is None:
        return
    md = hs.run_dir / "comparison.md"
    terminalreporter.write_sep("=", "replication comparison")
    if md.exists():
        for line in md.read_text().splitlines():
            terminalreporter.write_line(line)
    terminalreporter.write_sep("-", "relative bounds and reports")
    for line in lines:
        terminalreporter.write_line(line)
