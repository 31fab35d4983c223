"""The run directory of a pytest run, decided while configuring, before anything else happens.

``--run-id`` is judged by the one rule (:mod:`harness.runfiles.runid`): a bad one is a usage error
before the inventory is read or the lab boots.  A run never reuses ``reports/<run-id>/``:
whatever is there (an earlier run's results, a user's notes) is kept, and the run is refused.
Only the xdist controller decides, and a run that writes reports makes its directory here, at
once (:meth:`harness.runfiles.rundir.RunDir.create`); workers receive the id from it, after that.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.runfiles.rundir import RunDir, RunExists
from harness.runfiles.runid import new_run_id, validate_run_id

__all__ = ["controller_run_dir", "worker_run_dir"]


class _DropIfEmpty:
    """Removes this run's directory at the end when nothing was written to it.

    A run refused later while configuring (``--baseline-save`` over a saved baseline, say) has
    already made it; left behind empty, it would refuse the corrected retry with the same id.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self) -> None:
        # rmdir removes only an empty directory: anything written there stays
        with contextlib.suppress(OSError):
            self.path.rmdir()


def controller_run_dir(config: pytest.Config, reports: Path, *, writes_reports: bool) -> RunDir:
    """``--run-id`` checked (or a fresh id) and its directory: made now when the run writes
    reports; refused with a UsageError if a run of that id exists."""
    given: str | None = config.getoption("--run-id")
    if given is not None:
        try:
            validate_run_id(given)
        except ConfigError as exc:
            raise pytest.UsageError(f"--run-id: {exc}") from None
    if config.getoption("collectonly", False):
        # collecting writes nothing: an earlier run is no conflict
        return RunDir.of(reports, given or new_run_id())
    try:
        run = RunDir.create(reports, given) if writes_reports else RunDir.unused(reports, given)
    except RunExists:
        raise pytest.UsageError(
            f"--run-id {given}: {reports / str(given)} already exists (an earlier run); "
            "choose another --run-id or delete that directory"
        ) from None
    except ConfigError as exc:
        raise pytest.UsageError(f"--reports: {exc}") from None
    config.pluginmanager.register(_DropIfEmpty(run.path), f"harness-run-dir-{run.run_id}")
    return run


def worker_run_dir(config: pytest.Config, reports: Path) -> RunDir:
    """An xdist worker's run directory: the controller's, whose id it was handed."""
    return RunDir.of(reports, config.workerinput["harness_run_id"])  # type: ignore[attr-defined]
