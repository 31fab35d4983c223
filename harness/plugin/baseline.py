"""pytest options for saved baselines: ``--baseline-save``, ``--baseline-compare``, ``--baseline-overwrite``.

Registered by :mod:`harness.plugin` (``pytest_plugins``).  Names are checked at configure
time, before the lab boots or any cell runs: a bad name, a save that would overwrite without
``--baseline-overwrite``, or a comparison with a baseline that does not exist is a usage
error, not an hour of measuring followed by a failure.

At the end of the run (controller only, after :func:`harness.plugin.summary.finish_run` has
written run.json, hence ``trylast``), the run is first compared with the named baseline —
``reports/<run-id>/baseline-compare.md``, shown in the terminal summary; a regression makes
the session exit non-zero — and then saved, so ``--baseline-compare main --baseline-save
main --baseline-overwrite`` gates on the old baseline and rolls it forward.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.baseline.gate import run_gate
from harness.baseline.refs import Side
from harness.baseline.store import BaselineStore, NameTaken, validate_name
from harness.errors import ConfigError, HarnessError
from harness.plugin import SESSION_KEY
from harness.report.run_dir import RunDir

__all__: list[str] = []

_LINES = pytest.StashKey[list[str]]()
# pytest exit statuses after which a run is complete enough to become a baseline.
_SAVEABLE = (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "HA storage harness")
    group.addoption(
        "--baseline-save",
        metavar="NAME",
        default=None,
        help="save this run's samples as baseline NAME of the inventory (reports/baselines/<inventory>/NAME)",
    )
    group.addoption(
        "--baseline-compare",
        metavar="NAME",
        default=None,
        help="compare this run with baseline NAME per cell (tolerances: the inventory's baseline_tolerances); "
        "a regression fails the session",
    )
    group.addoption(
        "--baseline-overwrite", action="store_true", help="let --baseline-save replace an existing baseline"
    )


def _names(config: pytest.Config) -> tuple[str | None, str | None]:
    return config.getoption("--baseline-save"), config.getoption("--baseline-compare")


def pytest_configure(config: pytest.Config) -> None:
    save, compare = _names(config)
    if save is None and compare is None:
        return
    for option, name in (("--baseline-save", save), ("--baseline-compare", compare)):
        try:
            if name is not None:
                validate_name(name)
        except ConfigError as exc:
            raise pytest.UsageError(f"{option}: {exc}") from None
    hs = config.stash.get(SESSION_KEY, None)
    if hs is None or not hs.is_controller:
        return
    store, inventory = BaselineStore(hs.reports_root), hs.inventory.name
    if save is not None:
        try:
            store.check_save(inventory, save, overwrite=bool(config.getoption("--baseline-overwrite")))
        except NameTaken as exc:
            raise pytest.UsageError(f"--baseline-save: {exc.with_hint('--baseline-overwrite')}") from None
        except ConfigError as exc:
            raise pytest.UsageError(f"--baseline-save: {exc}") from None
    if compare is not None:
        try:
            store.load(inventory, compare)
        except ConfigError as exc:
            raise pytest.UsageError(f"--baseline-compare: {exc}") from None


def _fail(session: pytest.Session, code: int) -> None:
    if session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = code


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    save, compare = _names(config)
    hs = config.stash.get(SESSION_KEY, None)
    if (save is None and compare is None) or hs is None or not hs.is_controller or config.option.collectonly:
        return
    lines: list[str] = []
    config.stash[_LINES] = lines
    run = RunDir(hs.run_dir)
    if not run.samples_ndjson.exists():
        lines.append("no samples were recorded in this run: nothing to compare or save")
        return
    store = BaselineStore(hs.reports_root)
    inventory = hs.inventory.name
    if compare is not None:
        try:
            reference = Side.of_baseline(store.load(inventory, compare))
            result = run_gate(reference, Side.of_run(run), hs.inventory.baseline_tolerances, write_to=run.path)
        except HarnessError as exc:
            lines.append(f"--baseline-compare {compare}: error: {exc}")
            _fail(session, exc.exit_code)
        else:
            lines += result.summary.splitlines()
            lines.append(f"written: {result.written}")
            if result.exit_code:
                _fail(session, pytest.ExitCode.TESTS_FAILED)
                if save is not None:
                    # Rolling a regression forward would make it the new normal.
                    lines.append(f"--baseline-save {save}: not saved, the run regressed against {compare!r}")
                    return
    if save is not None:
        if session.exitstatus not in _SAVEABLE:
            # An interrupted or broken run is not a reference anyone should gate on.
            lines.append(
                f"--baseline-save {save}: not saved, the run did not complete (exit {int(session.exitstatus)})"
            )
            return
        try:
            info = store.save(
                save,
                run,
                inventory=inventory,
                overwrite=bool(config.getoption("--baseline-overwrite")),
                exitstatus=int(session.exitstatus),
            )
        except HarnessError as exc:
            lines.append(f"--baseline-save {save}: error: {exc}")
            _fail(session, exc.exit_code)
        else:
            note = " (from a run with failures)" if info.exitstatus else ""
            lines.append(f"saved baseline {info.name!r} of inventory {info.inventory!r}: {info.cells} cells{note}")
            lines.append(f"  {info.path}")


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    lines = config.stash.get(_LINES, None)
    if not lines:
        return
    terminalreporter.write_sep("=", "baseline")
    for line in lines:
        terminalreporter.write_line(line)
