"""tc argv builders: exact commands, token safety, ownership of handles, input validation."""

from __future__ import annotations

import ipaddress
import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.fields import IFACE_PATTERN
from harness.impair.commands import (
    IMPAIRED_CLASS,
    NETEM_HANDLE,
    ROOT_HANDLE,
    TBF_HANDLE,
    TBF_PARENT,
    apply_commands,
    batch_input,
    filter_show_command,
    format_classid,
    format_handle,
    qdisc_show_command,
    readback_commands,
    teardown_commands,
    validate_ifname,
    validate_peer_ip,
)
from harness.impair.profile import Distribution, NetemProfile

# The brief's example: delay 1ms, jitter 0, loss 0, rate 128mbit toward 10.213.1.12 on vec1.
EXPECTED_T2SMALL = [
    ["tc", "qdisc", "add", "dev", "vec1", "root", "handle", "4842:", "prio", "bands", "2",
     "priomap", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0"],
    ["tc", "qdisc", "add", "dev", "vec1", "parent", "4842:2", "handle", "4843:",
     "netem", "limit", "1250", "delay", "1000us"],
    ["tc", "qdisc", "add", "dev", "vec1", "parent", "4843:1", "handle", "4844:",
     "tbf", "rate", "128000000bit", "burst", "160000", "latency", "20000us"],
    ["tc", "filter", "add", "dev", "vec1", "parent", "4842:", "protocol", "ip", "prio", "1",
     "u32", "match", "ip", "dst", "10.213.1.12/32", "flowid", "4842:2"],
]  # fmt: skip

# A token a shell would pass through unchanged, and that no tool reads as an option.
SAFE_TOKEN = re.compile(r"\A[A-Za-z0-9_.:/%][A-Za-z0-9_.:/%-]*\Z")
VALID_IFNAME = r"\A[A-Za-z0-9_.][A-Za-z0-9_.-]{0,14}\Z"
HARNESS_HANDLES = {ROOT_HANDLE, NETEM_HANDLE, TBF_HANDLE, IMPAIRED_CLASS, TBF_PARENT}
HANDLE_LIKE = re.compile(r"\A[0-9a-f]*:[0-9a-f]*\Z")


def test_exact_commands_for_the_t2small_example() -> None:
    profile = NetemProfile("t2small", delay_s=0.001, jitter_s=0, loss_pct=0, rate_bits=128e6)
    assert apply_commands(profile, "vec1", "10.213.1.12") == EXPECTED_T2SMALL


def test_jitter_distribution_and_loss_arguments() -> None:
    profile = NetemProfile("lossy", delay_s=0.01, jitter_s=0.002, distribution="normal", loss_pct=0.5)
    netem = apply_commands(profile, "eth1", "10.0.0.2")[1]
    assert netem[netem.index("netem") :] == [
        "netem", "limit", "15000", "delay", "10000us", "2000us", "distribution", "normal",
        "loss", "random", "0.5%",
    ]  # fmt: skip


@pytest.mark.parametrize("distribution", [None, "uniform"])
def test_uniform_means_no_distribution_table(distribution: Distribution | None) -> None:
    profile = NetemProfile("j", delay_s=0.01, jitter_s=0.002, distribution=distribution)
    netem = apply_commands(profile, "eth1", "10.0.0.2")[1]
    assert "distribution" not in netem
    assert netem[-3:] == ["delay", "10000us", "2000us"]


def test_small_loss_is_fixed_point_and_zero_values_are_omitted() -> None:
    netem = apply_commands(NetemProfile("l", loss_pct=0.000123), "eth1", "10.0.0.2")[1]
    assert netem[-6:] == ["netem", "limit", "1000", "loss", "random", "0.000123%"]
    bare = apply_commands(NetemProfile("zero"), "eth1", "10.0.0.2")[1]
    assert bare[-3:] == ["netem", "limit", "1000"]


def test_no_rate_means_no_tbf() -> None:
    commands = apply_commands(NetemProfile("d", delay_s=0.005), "eth1", "10.0.0.2")
    assert len(commands) == 3
    assert not any("tbf" in cmd for cmd in commands)


def test_tc_path_and_link_parameters() -> None:
    profile = NetemProfile("d", delay_s=0.02)
    commands = apply_commands(profile, "eth1", "10.0.0.2", link_rate_bits=1e9, tc="/usr/sbin/tc")
    assert all(cmd[0] == "/usr/sbin/tc" for cmd in commands)
    assert commands[1][commands[1].index("limit") + 1] == "2500"


@pytest.mark.parametrize("tc", ["", "tcx", "usr/sbin/tc", "/usr/sbin/tc;id", "/usr/../bin/tc", "sudo tc"])
def test_bad_tc_path_rejected(tc: str) -> None:
    with pytest.raises(ConfigError, match="tc must be"):
        apply_commands(NetemProfile("d"), "eth1", "10.0.0.2", tc=tc)
    with pytest.raises(ConfigError):
        teardown_commands("eth1", tc=tc)


def test_readback_and_teardown_commands() -> None:
    assert qdisc_show_command("vec1") == ["tc", "-j", "qdisc", "show", "dev", "vec1"]
    assert filter_show_command("vec1") == ["tc", "-j", "filter", "show", "dev", "vec1", "parent", "4842:"]
    assert readback_commands("vec1") == [qdisc_show_command("vec1"), filter_show_command("vec1")]
    assert teardown_commands("vec1") == [["tc", "qdisc", "del", "dev", "vec1", "root", "handle", "4842:"]]


def test_handle_formatting() -> None:
    assert (ROOT_HANDLE, NETEM_HANDLE, TBF_HANDLE) == ("4842:", "4843:", "4844:")
    assert (IMPAIRED_CLASS, TBF_PARENT) == ("4842:2", "4843:1")
    assert format_handle(0x10) == "10:"
    assert format_classid(0x4842, 0x1F) == "4842:1f"
    for bad_major in (0, 0xFFFF, -1, 0x10000, True):
        with pytest.raises(ConfigError):
            format_handle(bad_major)
    for bad_minor in (0, 0x10000, -3):
        with pytest.raises(ConfigError):
            format_classid(0x4842, bad_minor)


# -- property tests ---------------------------------------------------------------------------

from .netem_strategies import profiles  # noqa: E402

ifnames = st.from_regex(VALID_IFNAME, fullmatch=True).filter(lambda s: s not in (".", ".."))
BROADCAST = ipaddress.IPv4Address("255.255.255.255")
peers = st.ip_addresses(v=4).filter(
    lambda ip: not (ip.is_unspecified or ip.is_multicast or ip.is_loopback or ip == BROADCAST)
)


@given(profile=profiles(), ifname=ifnames, peer=peers, as_text=st.booleans())
def test_every_argv_element_is_one_safe_token(
    profile: NetemProfile, ifname: str, peer: ipaddress.IPv4Address, as_text: bool
) -> None:
    commands = apply_commands(profile, ifname, str(peer) if as_text else peer)
    commands += teardown_commands(ifname)
    for cmd in commands:
        assert cmd, "empty argv"
        for token in cmd:
            assert isinstance(token, str)
            assert SAFE_TOKEN.match(token), f"unsafe token {token!r} in {cmd}"


@given(profile=profiles(), ifname=ifnames, peer=peers)
def test_apply_only_adds_inside_the_reserved_tree(
    profile: NetemProfile, ifname: str, peer: ipaddress.IPv4Address
) -> None:
    commands = apply_commands(profile, ifname, peer)
    assert commands[0][5:8] == ["root", "handle", ROOT_HANDLE]
    assert commands[-1][:3] == ["tc", "filter", "add"], "the filter must come last"
    for cmd in commands:
        assert cmd[2] == "add", "never replace/change/del a qdisc the harness did not create"
        assert cmd[3:5] == ["dev", ifname]
        handles = {tok for tok in cmd if HANDLE_LIKE.match(tok)}
        assert handles <= HARNESS_HANDLES, handles
    filter_cmd = commands[-1]
    assert filter_cmd[filter_cmd.index("dst") + 1] == f"{peer}/32"
    assert filter_cmd[filter_cmd.index("flowid") + 1] == IMPAIRED_CLASS
    assert ("tbf" in commands[-2]) == (profile.rate_bits is not None)


@given(profile=profiles(), ifname=ifnames, peer=peers, tc=st.sampled_from(["tc", "/usr/sbin/tc"]))
def test_the_batch_runs_every_command_in_order_word_for_word(
    profile: NetemProfile, ifname: str, peer: ipaddress.IPv4Address, tc: str
) -> None:
    commands = apply_commands(profile, ifname, peer, tc=tc)
    argv, text = batch_input(commands)
    assert argv == [tc, "-batch", "-"]
    # what tc's batch reader splits each line into, one line per command
    assert [line.split() for line in text.splitlines()] == [cmd[1:] for cmd in commands]
    assert text.endswith("\n")


@pytest.mark.parametrize(
    "commands",
    [
        [],
        [["tc", "qdisc", "add"], ["/sbin/tc", "qdisc", "add"]],
        [["tc", "qdisc", "add", "dev", "eth 0"]],
        [["tc", "filter", "add", "#", "x"]],
        [["tc", "qdisc", "add", "dev", "e'0"]],
        [["tc", "qdisc", "add", ""]],
    ],
    ids=["none", "two-tcs", "space", "comment", "quote", "empty-token"],
)
def test_a_batch_that_would_not_read_back_as_its_argv_is_refused(commands: list[list[str]]) -> None:
    with pytest.raises(ValueError):
        batch_input(commands)


@given(ifname=ifnames, tc=st.sampled_from(["tc", "/usr/sbin/tc", "/sbin/tc"]))
def test_teardown_only_ever_references_the_reserved_root(ifname: str, tc: str) -> None:
    commands = teardown_commands(ifname, tc=tc)
    assert commands == [[tc, "qdisc", "del", "dev", ifname, "root", "handle", ROOT_HANDLE]]
    handles = {tok for cmd in commands for tok in cmd if HANDLE_LIKE.match(tok)}
    assert handles == {ROOT_HANDLE}


def _is_valid_ifname(name: str) -> bool:
    return bool(re.match(VALID_IFNAME, name)) and name not in (".", "..")


@given(name=st.text(max_size=40))
def test_invalid_ifnames_are_always_rejected(name: str) -> None:
    assume(not _is_valid_ifname(name))
    with pytest.raises(ConfigError):
        validate_ifname(name)
    with pytest.raises(ConfigError):
        teardown_commands(name)
    with pytest.raises(ConfigError):
        apply_commands(NetemProfile("d"), name, "10.0.0.2")


@given(name=st.text(alphabet="ab.-_:/ 0", max_size=17))
def test_the_inventory_accepts_exactly_the_interface_names_the_impairer_takes(name: str) -> None:
    try:
        validate_ifname(name)
    except ConfigError:
        takes = False
    else:
        takes = True
    assert bool(re.fullmatch(IFACE_PATTERN, name)) == takes == _is_valid_ifname(name)


@pytest.mark.parametrize(
    "name",
    ["", ".", "..", "a" * 16, "eth0:1", "-eth0", "eth 0", "eth0\n", "eth/0", "eth0;rm", "ëth0", "$(id)"],
)
def test_invalid_ifname_examples(name: str) -> None:
    with pytest.raises(ConfigError, match="interface name"):
        validate_ifname(name)


@pytest.mark.parametrize("name", ["eth0", "vec1", "ens5", "bond0.100", "a" * 15, "br-lan_1", "_x"])
def test_valid_ifname_examples(name: str) -> None:
    assert validate_ifname(name) == name


@given(text=st.text(max_size=40))
def test_invalid_ip_text_is_always_rejected(text: str) -> None:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        pass
    else:
        assume(False)
    with pytest.raises(ConfigError):
        validate_peer_ip(text)
    with pytest.raises(ConfigError):
        apply_commands(NetemProfile("d"), "eth1", text)


@given(ip=st.ip_addresses(v=6))
def test_ipv6_is_rejected_with_a_reason(ip: ipaddress.IPv6Address) -> None:
    with pytest.raises(ConfigError, match="IPv6"):
        validate_peer_ip(str(ip))


@pytest.mark.parametrize(
    "address",
    [
        "0.0.0.0",
        "127.0.0.1",
        "224.0.0.1",
        "255.255.255.255",
        "010.0.0.1",
        "10.0.0.1/32",
        " 10.0.0.1",
        "10.0.0",
    ],
)
def test_non_host_or_malformed_ipv4_rejected(address: str) -> None:
    with pytest.raises(ConfigError):
        validate_peer_ip(address)


def test_non_string_peer_rejected() -> None:
    with pytest.raises(ConfigError):
        validate_peer_ip(167772162)  # type: ignore[arg-type]


def test_tbf_overflow_is_a_config_error_not_a_wrapped_limit() -> None:
    with pytest.raises(ConfigError, match="32-bit"):
        NetemProfile("huge", delay_s=20, rate_bits=100e9)
