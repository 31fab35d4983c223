"""The controller's share of a harness run: one object, registered in the controller only.

As pytest-xdist registers its ``DSession`` in the controller and never in a worker, the
:class:`Controller` is registered by the plugin's ``pytest_configure`` in the process that owns
the run (the only one without xdist, or xdist's controller).  It hands the run id to the
workers, boots the lab, runs preflight and takes the cluster lock before the first cell, and
frees the lock and takes down the lab it booted at the end.  Its hooks need not ask which
process they are in: a worker never has them.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest

from harness.errors import HarnessError
from harness.plugin.interrupt import INTERRUPT_KEY, InterruptGuard
from harness.plugin.session import HarnessSession, PreflightBlocked

__all__ = ["Controller", "wants_reports"]


def wants_reports(config: pytest.Config) -> bool:
    """Only runs that measure (scenarios) get a run directory and JUnit file by default."""
    # a path under a scenarios/ directory, not any argument that mentions the word (a test id
    # such as tests/...::test_pytest_scenarios_... is no measuring run)
    return any("scenarios" in Path(str(a).split("::", 1)[0]).parts for a in config.args) or bool(
        config.getoption("--inventory")
    )


class Controller:
    """What only the controller does, from configure to unconfigure."""

    def __init__(self, hs: HarnessSession, config: pytest.Config) -> None:
        self.hs = hs
        self.config = config

    @classmethod
    def register(cls, config: pytest.Config, hs: HarnessSession) -> Controller:
        """Register the controller and the controller-only plugins of a run; while configuring."""
        controller = cls(hs, config)
        config.pluginmanager.register(controller, "harness-controller")
        # Cells of pairs that share nodes must run on one worker: xdist only honours xdist_group
        # marks under --dist loadgroup, so make that the default whenever -n is used (the
        # workers are told through pytest_configure_node).
        if getattr(config.option, "numprocesses", None) and getattr(config.option, "dist", "no") in ("no", "load"):
            config.option.dist = "loadgroup"
        if not config.getoption("collectonly", False):
            controller._register_run_end()
        # Ctrl-C, SIGTERM (a CI runner cancelling) and SIGHUP (a closed terminal or SSH session):
        # one interrupt, then a cleanup no further signal abandons
        guard = InterruptGuard(leftovers=hs.unfinished)
        config.stash[INTERRUPT_KEY] = guard
        config.pluginmanager.register(guard, "harness-interrupt")
        # ValueError: not the main thread (pytester in-process runs)
        with contextlib.suppress(ValueError):
            guard.install()
        return controller

    def _register_run_end(self) -> None:
        from harness.plugin.runend import RunEnd

        config, hs = self.config, self.hs
        config.pluginmanager.register(RunEnd(hs, config), "harness-run-end")
        if hs.inventory.lab is not None and wants_reports(config) and not hs.transport.replaying:
            from harness.plugin.labdoctor import LabDoctorAtEnd

            config.pluginmanager.register(LabDoctorAtEnd(hs, config), "harness-lab-doctor")
        if wants_reports(config):
            if config.getoption("xmlpath", None) is None:
                config.option.xmlpath = str(hs.run.junit_xml)
            from harness.plugin import progress

            progress.register(config)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist controller → worker: share the run id (optional: a run with ``-p no:xdist`` has no such hook)."""
        node.workerinput["harness_run_id"] = self.hs.run_id
        node.workerinput["harness_loadgroup"] = node.config.option.dist == "loadgroup"

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # Before xdist starts its workers (xdist's own sessionstart is trylast): boot the lab
        # once, run the read-only preflight on every node, take the cluster lock.  A blocker
        # ends the run here, before any change.
        if session.config.option.collectonly or not wants_reports(session.config):
            return
        hs = self.hs
        try:
            hs.start_run()
        except PreflightBlocked as exc:
            hs.end_run()
            pytest.exit(f"preflight refused the run; nothing was changed:\n{exc}", returncode=3)
        except HarnessError as exc:
            hs.end_run()
            pytest.exit(f"cannot start the run: {exc}", returncode=exc.exit_code)

    def pytest_unconfigure(self) -> None:
        # Free the lock while the connections are open, then close them, then take down the
        # lab this run booted.  (The plugin's own unconfigure, after this one, closes a
        # worker's connections; here they are closed already.)
        self.hs.end_run()
        self.hs.close()
        self.hs.transport.finish()  # a recording is written once the lock's release is in it
        self.hs.teardown_lab()
