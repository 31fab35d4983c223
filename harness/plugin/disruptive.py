"""pytest glue for disruptive tests: the ``--allow-disruptive`` option and the ``disruptive`` marker.

The rules are :mod:`harness.safety.disruptive`'s; this module only applies them: a wrong
inventory name is a usage error at start-up, a missing opt-in skips the test with the flag
that would enable it, and risky configuration fails the test in setup, before its body (and
so before any change) runs.
"""

from __future__ import annotations

import pytest

from harness.errors import RefusedError
from harness.plugin.session import SESSION_KEY
from harness.safety.disruptive import OPTION, opt_in_error, refuse_risky, skip_reason


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("harness").addoption(
        OPTION,
        dest="allow_disruptive",
        nargs="?",
        const="",
        default=None,
        metavar="INVENTORY",
        help="run tests marked disruptive (node crash, replication link cut, latency at DRBD's timeouts) "
        "on an inventory other than the embedded lab; an inventory with `production: true` must be named: "
        f"{OPTION}=NAME",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "disruptive: crashes a node, cuts the replication link or adds latency at DRBD's timeouts; "
        f"outside the embedded lab it runs only with {OPTION}",
    )
    session = config.stash.get(SESSION_KEY, None)
    if session is not None:
        error = opt_in_error(session.inventory, config.getoption("allow_disruptive"))
        if error:
            raise pytest.UsageError(error)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("disruptive") is None:
        return
    session = item.config.stash[SESSION_KEY]
    reason = skip_reason(session.inventory, item.config.getoption("allow_disruptive"))
    if reason:
        pytest.skip(reason)
    callspec = getattr(item, "callspec", None)
    pairs = [callspec.params["pair"]] if callspec and "pair" in callspec.params else sorted(session.inventory.pairs)
    if not all(isinstance(pair, str) for pair in pairs):
        return  # the placeholder of an empty parametrization: its skip mark says why
    try:
        for pair in pairs:
            refuse_risky(session.inventory, session.pool, pair)
    except RefusedError as exc:
        pytest.fail(str(exc), pytrace=False)
