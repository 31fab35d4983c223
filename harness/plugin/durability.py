"""The options of the randomized crash trials (scenarios/test_durability.py): how many, and the
plan's seed (the same seed draws the same trials, a longer plan starting with a shorter one's)."""

from __future__ import annotations

import pytest

from harness.argtypes import number

__all__ = ["DEFAULT_SEED", "DEFAULT_TRIALS"]

DEFAULT_SEED = 31
#: about a minute on the lab (20 trials a minute measured, plus a protocol switch per group)
DEFAULT_TRIALS = 16


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness")
    group.addoption(
        "--durability-trials",
        type=number(int, 0, 100000, what="trials"),
        default=DEFAULT_TRIALS,
        help="randomized crash trials of the durability map (default: %(default)s; 0: the map is not drawn)",
    )
    group.addoption(
        "--durability-seed",
        type=number(int, 0, 2**62, what="seed"),
        default=DEFAULT_SEED,
        help="the seed the durability trials are drawn from (default: %(default)s)",
    )
    group.addoption(
        "--durability-crash",
        choices=["cut", "sigkill"],
        default="cut",
        help="how a durability trial's fault strikes: cut, the replication path cut and the survivor read "
        "(fast); sigkill, the lab's SIGKILL of the node and its reboot (the reference) (default: %(default)s)",
    )
