"""The run id of a pytest run, decided while configuring, before anything else happens.

``--run-id`` is judged by the one rule (:mod:`harness.runid`): a bad one is a usage error
before the inventory is read or the lab boots.  A run never reuses ``reports/<run-id>/``:
whatever is there (an earlier run's results, a user's notes) is kept, and the run is refused.
Only the xdist controller decides; workers receive the id from it, after it made the directory.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.runid import new_run_id, validate_run_id

__all__ = ["controller_run_id"]


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


def controller_run_id(config: pytest.Config, reports: Path) -> str:
    """``--run-id`` checked (or a fresh id), refused with a UsageError if its run exists."""
    given: str | None = config.getoption("--run-id")
    if given is not None:
        try:
            validate_run_id(given)
        except ConfigError as exc:
            raise pytest.UsageError(f"--run-id: {exc}") from None
    if config.getoption("collectonly", False):
        return given or new_run_id()  # collecting writes nothing: an earlier run is no conflict
    run_id = given or new_run_id()
    while given is None and os.path.lexists(reports / run_id):
        run_id = new_run_id()  # two runs started in the same second with the same random tail
    run_dir = reports / run_id
    if os.path.lexists(run_dir):
        raise pytest.UsageError(
            f"--run-id {run_id}: {run_dir} already exists (an earlier run); "
            "choose another --run-id or delete that directory"
        )
    config.pluginmanager.register(_DropIfEmpty(run_dir), f"harness-run-dir-{run_id}")
    return run_id
