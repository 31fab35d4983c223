"""Command rendering: every argv element stays exactly one shell word."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.remote import render_command


@given(st.lists(st.text(min_size=0, max_size=30), min_size=1, max_size=8), st.booleans())
def test_argv_round_trips_through_the_shell(argv: list[str], sudo: bool) -> None:
    # NUL cannot be in a command line at all
    argv = [a.replace("\x00", "") for a in argv]
    text = render_command(argv, timeout=12.5, sudo=sudo)
    words = shlex.split(text)
    prefix = ["sudo", "-n", "--"] if sudo else []
    assert words == [*prefix, "timeout", "--kill-after=5", "12.5", *argv]


def test_injection_stays_data() -> None:
    text = render_command(["echo", "$(reboot); rm -rf /"], timeout=5, sudo=False)
    assert shlex.split(text)[-1] == "$(reboot); rm -rf /"


@pytest.mark.parametrize("timeout", [0, -1])
def test_bad_timeout(timeout: float) -> None:
    with pytest.raises(ValueError):
        render_command(["true"], timeout=timeout, sudo=False)


def test_empty_command() -> None:
    with pytest.raises(ValueError):
        render_command([], timeout=1, sudo=False)
