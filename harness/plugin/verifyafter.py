"""``--verify-after``: once a process has run its last test, compare both replicas of every pair
its tests used (online verify) and fail that test's teardown when they differ.

Each pair is verified from its primary, after all of its cells, whatever they were; the result
is a sample (scenario ``verify_after``, metric ``verify_out_of_sync``) like every other figure.
A full verify reads the whole device on both nodes (on the lab, 2 GiB take about a minute);
``--verify-after=SIZE`` verifies only the first SIZE bytes, where the scenarios write.
"""

from __future__ import annotations

import argparse

import pytest

from harness.errors import HarnessError
from harness.plugin.session import SESSION_KEY
from harness.runfiles.samples import METRICS, Sample
from harness.units import UnitError, parse_size

__all__ = ["VERIFY_DEADLINE_S"]

#: the slowest verify worth waiting for: 1 TiB at ~300 MiB/s
VERIFY_DEADLINE_S = 3600.0
_PAIRS_USED = pytest.StashKey[set[str]]()


def _verify_size(text: str) -> int:
    if text == "all":
        return 0
    try:
        size = parse_size(text)
    except UnitError as exc:
        raise argparse.ArgumentTypeError(f"--verify-after: {exc}") from None
    if size <= 0:
        raise argparse.ArgumentTypeError("--verify-after: the size must be positive (or 'all')")
    return size


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("harness").addoption(
        "--verify-after",
        dest="verify_after",
        nargs="?",
        const="all",
        default=None,
        type=_verify_size,
        metavar="SIZE",
        help="after the last test, online-verify both replicas of every pair the tests used "
        "(the whole device, or its first SIZE bytes) and fail when any block differs",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_PAIRS_USED] = set()


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.config.getoption("verify_after") is None:
        return
    callspec = getattr(item, "callspec", None)
    pair = callspec.params.get("pair") if callspec is not None else None
    if isinstance(pair, str):
        item.config.stash[_PAIRS_USED].add(pair)


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    size = item.config.getoption("verify_after")
    pairs = item.config.stash[_PAIRS_USED]
    if size is None or nextitem is not None or not pairs:
        return
    session = item.config.stash[SESSION_KEY]
    runner = session.runner
    failures = []
    for name in sorted(pairs):
        pair = session.inventory.pairs[name]
        replication = runner.replication(name, pair.primary)
        try:
            replication.wait_healthy(runner.health_timeout_s)
            # DRBD starts comparing the replicas: a state change, so the ledger records it
            runner.ledger.record("verify-start", {"pair": name, "node": pair.primary, "bytes": size or "all"})
            report = replication.verify(VERIFY_DEADLINE_S, start_bytes=0, stop_bytes=size or None)
        except HarnessError as exc:
            failures.append(f"{name}: online verify could not run: {exc}")
            continue
        meta = {
            "scenario": "verify_after",
            "pair": name,
            "mode": "replicated",
            "workload": "online-verify",
            "impairment": "none",
            "run_id": runner.run_id,
            "verdict": "pass" if report.identical else "fail",
        }
        runner.store.append(
            [Sample("verify_out_of_sync", float(report.out_of_sync_kib), METRICS["verify_out_of_sync"], meta)]
        )
        runner.progress(report.describe())
        if not report.identical:
            failures.append(report.describe())
    pairs.clear()
    if failures:
        pytest.fail(
            "--verify-after: the replicas differ or could not be compared:\n" + "\n".join(failures), pytrace=False
        )
