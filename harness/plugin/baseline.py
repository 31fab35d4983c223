"""pytest options for saved baselines: ``--baseline-save``, ``--baseline-compare``, ``--baseline-overwrite``.

Registered by :mod:`harness.plugin` (``pytest_plugins``).  Names are checked at configure
time, before the lab boots or any cell runs: a bad name, a save that would overwrite without
``--baseline-overwrite``, or a comparison with a baseline that does not exist is a usage
error, not an hour of measuring followed by a failure.

At the end of the run the controller's :class:`~harness.plugin.runend.RunEnd` asks a
:class:`BaselineStep` for both, with the run's results it read once: the run is first compared
with the named baseline — ``reports/<run-id>/baseline-compare.md``, and the baseline-vs-current
plot in the run's report; shown in the terminal summary; a regression makes the session exit
non-zero — and then saved, so ``--baseline-compare main --baseline-save main
--baseline-overwrite`` gates on the old baseline and rolls it forward.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from harness.baseline.gate import GateResult, run_gate
from harness.baseline.history import history_runs, history_side
from harness.baseline.refs import Side
from harness.baseline.store import BaselineStore, NameTaken, validate_name
from harness.errors import ConfigError, HarnessError
from harness.plugin.resultsdb import results_db_of
from harness.plugin.session import SESSION_KEY, HarnessSession, fail_session
from harness.report.results import RunResults
from harness.runfiles.runinfo import RunInfo

__all__ = ["BaselineStep"]

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
        help="compare this run with baseline NAME per cell (tolerances: the inventory's baseline_tolerances), "
        "or with the last N good runs in the results database (history:N); a regression fails the session",
    )
    group.addoption(
        "--baseline-overwrite", action="store_true", help="let --baseline-save replace an existing baseline"
    )


def _names(config: pytest.Config) -> tuple[str | None, str | None]:
    return config.getoption("--baseline-save"), config.getoption("--baseline-compare")


def _parse_names(save: str | None, compare: str | None) -> int | None:
    """Refuse a malformed name before anything else; the ``history:N`` run count, if asked."""
    try:
        history = None if compare is None else history_runs(compare)
    except ConfigError as exc:
        raise pytest.UsageError(f"--baseline-compare: {exc}") from None
    for option, name in (("--baseline-save", save), ("--baseline-compare", None if history else compare)):
        try:
            if name is not None:
                validate_name(name)
        except ConfigError as exc:
            raise pytest.UsageError(f"{option}: {exc}") from None
    return history


def _check_save(config: pytest.Config, store: BaselineStore, inventory: str, save: str) -> None:
    try:
        store.check_save(inventory, save, overwrite=bool(config.getoption("--baseline-overwrite")))
    except NameTaken as exc:
        raise pytest.UsageError(f"--baseline-save: {exc.with_hint('--baseline-overwrite')}") from None
    except ConfigError as exc:
        raise pytest.UsageError(f"--baseline-save: {exc}") from None


def _check_compare(store: BaselineStore, inventory: str, compare: str) -> None:
    try:
        store.load(inventory, compare)
    except ConfigError as exc:
        raise pytest.UsageError(f"--baseline-compare: {exc}") from None


def pytest_configure(config: pytest.Config) -> None:
    save, compare = _names(config)
    if save is None and compare is None:
        return
    history = _parse_names(save, compare)
    hs = config.stash.get(SESSION_KEY, None)
    if hs is None or not hs.is_controller:
        return
    if history is not None:
        _check_history(config, hs, history)
        compare = None
    _check_store(config, hs, save, compare)


def _check_store(config: pytest.Config, hs: HarnessSession, save: str | None, compare: str | None) -> None:
    """``--baseline-save NAME`` may be saved, ``--baseline-compare NAME`` is saved."""
    store, inventory = BaselineStore(hs.reports_root), hs.inventory.name
    if save is not None:
        _check_save(config, store, inventory, save)
    if compare is not None:
        _check_compare(store, inventory, compare)


def _check_history(config: pytest.Config, hs: HarnessSession, runs: int) -> None:
    """``history:N`` needs the results database and a run of the inventory in it (collecting
    reads no database, nor makes one)."""
    if config.getoption("collectonly", False):
        return
    db = results_db_of(config, hs.reports_root)
    if db is None:
        raise pytest.UsageError(f"--baseline-compare history:{runs} needs the results database, not --results-db none")
    try:
        with db.open(create=False) as store:
            history_side(store, hs.inventory.name, runs, exclude=hs.run_id)
    except HarnessError as exc:
        raise pytest.UsageError(f"--baseline-compare history:{runs}: {exc}") from None


@dataclass
class BaselineStep:
    """What ``--baseline-compare`` and ``--baseline-save`` ask of the end of a run, and the
    lines it has to say in the terminal summary's ``baseline`` section."""

    hs: HarnessSession
    config: pytest.Config
    save_as: str | None
    compare_with: str | None
    overwrite: bool
    lines: list[str] = field(default_factory=list)
    regressed: bool = False
    #: why the comparison could not be made, when it could not
    error: str | None = None

    @classmethod
    def of(cls, config: pytest.Config, hs: HarnessSession) -> BaselineStep | None:
        """The step this run's options ask for; ``None`` when they ask for none."""
        save, compare = _names(config)
        if save is None and compare is None:
            return None
        return cls(hs, config, save, compare, bool(config.getoption("--baseline-overwrite")))

    @property
    def _store(self) -> BaselineStore:
        return BaselineStore(self.hs.reports_root)

    def nothing_recorded(self) -> None:
        self.lines.append("no samples were recorded in this run: nothing to compare or save")

    def compare(self, session: pytest.Session, current: Side) -> GateResult | None:
        """Gate ``current`` on the baseline (writes baseline-compare.md); a regression or an
        error fails the session.  The result, for its plot in the report; ``None`` if not asked."""
        name = self.compare_with
        if name is None:
            return None
        inventory = self.hs.inventory
        try:
            reference = self._reference(name)
            result = run_gate(reference, current, inventory.baseline_tolerances, write_to=current.path)
        except HarnessError as exc:
            self.error = f"--baseline-compare {name}: error: {exc}"
            self.lines.append(self.error)
            fail_session(session, exc.exit_code)
            return None
        self.lines += result.summary.splitlines()
        self.lines.append(f"written: {result.written}")
        if result.exit_code:
            self.regressed = True
            fail_session(session, pytest.ExitCode.TESTS_FAILED)
        return result

    def _reference(self, name: str) -> Side:
        runs = history_runs(name)
        if runs is None:
            return Side.of_baseline(self._store.load(self.hs.inventory.name, name))
        db = results_db_of(self.config, self.hs.reports_root)
        if db is None:  # refused at configure time; kept for a caller that skipped it
            raise ConfigError(f"{name}: needs the results database, not --results-db none")
        with db.open(create=False) as store:
            return history_side(store, self.hs.inventory.name, runs, exclude=self.hs.run_id)

    def save(self, session: pytest.Session, results: RunResults, info: RunInfo) -> None:
        """Save the run as the baseline, unless it regressed against the compared one or did
        not complete; an error fails the session."""
        name = self.save_as
        if name is None:
            return
        if self.regressed:
            # Rolling a regression forward would make it the new normal.
            self.lines.append(f"--baseline-save {name}: not saved, the run regressed against {self.compare_with!r}")
            return
        if session.exitstatus not in _SAVEABLE:
            # An interrupted or broken run is not a reference anyone should gate on.
            self.lines.append(
                f"--baseline-save {name}: not saved, the run did not complete (exit {int(session.exitstatus)})"
            )
            return
        try:
            saved = self._store.save(
                name,
                self.hs.run,
                results.samples,
                info,
                inventory=self.hs.inventory.name,
                overwrite=self.overwrite,
                exitstatus=int(session.exitstatus),
            )
        except HarnessError as exc:
            self.lines.append(f"--baseline-save {name}: error: {exc}")
            fail_session(session, exc.exit_code)
        else:
            note = " (from a run with failures)" if saved.exitstatus else ""
            self.lines.append(
                f"saved baseline {saved.name!r} of inventory {saved.inventory!r}: {saved.cells} cells{note}"
            )
            self.lines.append(f"  {saved.path}")
