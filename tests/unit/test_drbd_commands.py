"""DRBD argv builders, name validation, no repair command, and version parsing (harness.drbd.commands)."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.drbd import commands
from harness.drbd.commands import (
    FORBIDDEN_TOKENS,
    READ_ONLY_BUILDERS,
    STATE_CHANGE_BUILDERS,
    DrbdVersion,
    check_resource_name,
    parse_drbdadm_version,
    parse_proc_drbd_version,
)
from harness.drbd.errors import DrbdOutputError
from harness.errors import ConfigError

DATA = Path(__file__).resolve().parent.parent / "data" / "drbd"
ALL_BUILDERS: dict[str, Callable[[str], list[str]]] = {**READ_ONLY_BUILDERS, **STATE_CHANGE_BUILDERS}
names = st.from_regex(r"\A[A-Za-z0-9_.+][A-Za-z0-9_.+-]{0,63}\Z").filter(lambda n: n.lower() != "all")


def read(name: str) -> str:
    return (DATA / name).read_text()


@pytest.mark.parametrize(
    ("builder", "argv"),
    [
        ("events2_now", ["drbdsetup", "events2", "--now", "--statistics", "single-az"]),
        ("events2_watch", ["drbdsetup", "events2", "--timestamps", "--statistics", "single-az"]),
        ("sh_dev", ["drbdadm", "sh-dev", "single-az"]),
        ("sh_ll_dev", ["drbdadm", "sh-ll-dev", "single-az"]),
        ("show", ["drbdsetup", "show", "single-az"]),
        ("show_defaults", ["drbdsetup", "show", "--show-defaults", "single-az"]),
        ("dump", ["drbdadm", "-v", "dump", "single-az"]),
        ("status_json", ["drbdsetup", "status", "--json", "--verbose", "--statistics", "single-az"]),
        ("cstate", ["drbdadm", "cstate", "single-az"]),
        ("dstate", ["drbdadm", "dstate", "single-az"]),
        ("role", ["drbdadm", "role", "single-az"]),
        ("get_gi", ["drbdadm", "get-gi", "single-az"]),
        ("primary", ["drbdadm", "primary", "single-az"]),
        ("secondary", ["drbdadm", "secondary", "single-az"]),
        ("disconnect", ["drbdadm", "disconnect", "single-az"]),
        ("connect", ["drbdadm", "connect", "single-az"]),
        ("down", ["drbdadm", "down", "single-az"]),
        ("up", ["drbdadm", "up", "single-az"]),
        ("verify", ["drbdadm", "--", "--start=0", "verify", "single-az"]),
    ],
)
def test_exact_argv(builder: str, argv: list[str]) -> None:
    assert ALL_BUILDERS[builder]("single-az") == argv


def test_argv_without_resource() -> None:
    assert commands.version_argv() == ["drbdadm", "--version"]
    assert commands.proc_drbd_argv() == ["cat", "/proc/drbd"]


@pytest.mark.parametrize(
    "name",
    [
        "",
        "a b",
        "a;b",
        "a/b",
        "../etc",
        "$(reboot)",
        "`id`",
        "r0\n",
        "x" * 65,
        "-x",
        "--discard-my-data",
        "--force",
        "all",
        "ALL",
        "rés",
    ],
)
def test_bad_resource_names_are_refused_by_every_builder(name: str) -> None:
    with pytest.raises(ConfigError):
        check_resource_name(name)
    for build in ALL_BUILDERS.values():
        with pytest.raises(ConfigError):
            build(name)


@given(names)
def test_valid_names_become_exactly_one_last_token(name: str) -> None:
    for build in ALL_BUILDERS.values():
        argv = build(name)
        assert argv[-1] == name
        assert argv[:-1] == build("r0")[:-1]  # the name never changes the command itself


# -- no repair or override command can be built ----------------------------------------------
@given(names)
def test_no_builder_emits_a_forbidden_token(name: str) -> None:
    emitted = [tok for build in ALL_BUILDERS.values() for tok in build(name)]
    emitted += commands.version_argv() + commands.proc_drbd_argv()
    assert not FORBIDDEN_TOKENS & set(emitted)
    assert not any(tok.startswith("--force") or "discard" in tok for tok in emitted)


def test_forbidden_token_list_covers_safe5() -> None:
    assert {"--discard-my-data", "invalidate", "--force", "resume-io"} <= FORBIDDEN_TOKENS


def test_every_argv_builder_is_registered_and_none_is_a_repair_command() -> None:
    # A builder added later cannot dodge the test above: all *_argv functions taking a
    # resource must be in the registries the test walks.
    builders = {
        n: f
        for n, f in inspect.getmembers(commands, inspect.isfunction)
        if n.endswith("_argv") and f.__module__ == commands.__name__
    }
    with_resource = {n for n, f in builders.items() if inspect.signature(f).parameters}
    assert with_resource == {f.__name__ for f in ALL_BUILDERS.values()}
    assert not [n for n in builders if re.search(r"invalidate|discard|force|resume|new_current_uuid", n)]


# -- versions ----------------------------------------------------------------------------------
def test_lab_drbdadm_version() -> None:
    # 84-drbdadm-oneliners.txt lines 6-8 are `drbdadm --version` on a1 (drbdadm-84).
    text = "\n".join(read("84-drbdadm-oneliners.txt").splitlines()[5:8])
    version = parse_drbdadm_version(text)
    assert version == DrbdVersion(
        kernel="8.4.11",
        kernel_code=0x08040B,
        utils=None,
        api=1,
        build_tag="GIT-hash: 409097fe02187f83790b88ac3e0d94f3c167adab reproducible build, 2023-01-09 14:51:18",
    )
    assert version.kernel_major == 8
    assert not version.is_drbd9


def test_drbd9_version() -> None:
    version = parse_drbdadm_version(read("9-drbdadm-version.txt"))
    assert (version.kernel, version.kernel_code, version.utils, version.api) == ("9.0.16", 0x090010, "9.7.0", 2)
    assert version.is_drbd9


def test_upper_case_code_and_code_only() -> None:
    version = parse_drbdadm_version(read("9-drbdadm-version-84-kernel.txt"))
    assert (version.kernel, version.kernel_code, version.utils) == ("8.4.11", 0x08040B, "9.7.0")
    code_only = "\n".join(
        line for line in read("9-drbdadm-version.txt").splitlines() if not line.startswith("DRBD_KERNEL_VERSION=")
    )
    assert parse_drbdadm_version(code_only).kernel == "9.0.16"


@pytest.mark.parametrize(
    "text",
    ["", "drbdadm: command not found\n", "DRBD_KERNEL_VERSION_CODE=0xthisIsNotParsable\n"],
)
def test_bad_version_output(text: str) -> None:
    with pytest.raises(DrbdOutputError):
        parse_drbdadm_version(text)


@pytest.mark.parametrize(
    ("name", "version"),
    [
        ("84-proc-drbd-connected.txt", "8.4.11"),
        ("84-proc-drbd-primary-syncsource.txt", "8.4.11"),
        ("9-proc-drbd.txt", "9.2.8"),
    ],
)
def test_proc_drbd_version(name: str, version: str) -> None:
    assert parse_proc_drbd_version(read(name)) == version


def test_proc_drbd_version_rejects_other_text() -> None:
    with pytest.raises(DrbdOutputError):
        parse_proc_drbd_version("cat: /proc/drbd: No such file or directory\n")
