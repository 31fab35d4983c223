"""``tc`` argv for impairing one node's replication path toward exactly one peer, and undoing it.

Pure functions: they return ``list[list[str]]`` argv lists (never shell strings) for the
remote layer to run in order, and touch nothing.  The tree they build on the replication
interface::

    4842:   prio bands 2, priomap all 0   root, the harness's reserved handle
     ├─ 4842:1  band 0                     everything unclassified (priomap) -> untouched
     └─ 4842:2  band 1
         └─ 4843:  netem delay/jitter/loss, limit sized to the bandwidth-delay product
             └─ 4844:  tbf rate/burst/latency   (only with a rate cap; shape after delay)
    filter u32 match ip dst <peer>/32 + tcp port -> 4842:2   (the only way into the impaired band;
                                                              harness.impair.steering)

Why this shape:

* **Reserved handle ``4842:``** ("HB" in ASCII), like pumba's ``504d:``: it marks the root as
  the harness's own.  It is outside the range the kernel auto-assigns (``8000:`` and up), and
  unlike ``1:``/``10:`` nobody picks it by hand.  Children use ``4843:`` and ``4844:``.
* **prio, not htb**: prio has no rate of its own, so the untouched band adds no shaping, and
  iproute2 6.1 prints prio/netem/tbf as JSON (``tc -j class show`` of htb classes still
  prints plain text there), so everything the harness applies can be read back.
* **priomap all 0**: prio's default priomap (``1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1``) spreads
  unclassified traffic over every band by TOS/priority, which would push some of it (SSH,
  other DRBD resources, corosync) through netem.  With all zeros, only the u32 filter can
  put a packet into band 1.
* **u32 on the peer's IP and the resource's port**, one rule with the port as destination and
  one as source: either node may have opened the DRBD sockets, so the port can be the source
  on this side; another resource to the same peer is left alone.
  The whole path to the peer only when asked (``port=None``).  IPv4 only (``protocol ip``).
* **``add``, never ``replace``**: ``tc qdisc add ... root`` replaces only the kernel's default
  root (handle ``0:``); over anything else it fails (``NLM_F_REPLACE needed to override``,
  or ``Exclusivity flag on`` if a stale harness root is present) -- fail closed: a qdisc
  someone else put there is never replaced.  The filter goes last, so steering starts only
  once the whole chain exists.  After a partial failure, run :func:`teardown_commands`.
* **Teardown names the handle**: ``tc qdisc del dev X root handle 4842:`` is refused by the
  kernel with ``Error: Invalid handle.`` unless the root *is* 4842:, so it can never delete a
  foreign root; deleting the root removes the children and filters and the kernel re-attaches
  the default root.  On a clean interface it fails the same way (rc 2): "nothing to delete".
* **Integer microseconds** for every time: tc parses ``0.3ms`` as ``0.3 * 1000`` and truncates
  to 299 us; ``300us`` is exact.

Recorded and source-checked behaviour of iproute2 6.1.0 is in ``tests/data/tc/README.md``.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence

from harness.errors import ConfigError
from harness.fields import IFACE_PATTERN
from harness.impair.profile import DEFAULT_HZ, DEFAULT_LINK_RATE_BITS, DEFAULT_MTU, NetemProfile
from harness.impair.steering import steering_rules

__all__ = [
    "IMPAIRED_CLASS",
    "NETEM_HANDLE",
    "NETEM_MAJOR",
    "PRIOMAP",
    "PRIO_BANDS",
    "ROOT_HANDLE",
    "ROOT_MAJOR",
    "TBF_HANDLE",
    "TBF_MAJOR",
    "TBF_PARENT",
    "UNTOUCHED_CLASS",
    "apply_commands",
    "batch_input",
    "filter_show_command",
    "format_classid",
    "format_handle",
    "qdisc_show_command",
    "readback_commands",
    "teardown_commands",
    "validate_ifname",
    "validate_peer_ip",
]

ROOT_MAJOR = 0x4842
NETEM_MAJOR = 0x4843
TBF_MAJOR = 0x4844
PRIO_BANDS = 2
# TC_PRIO_MAX is 15: sixteen priorities, each mapped to band 0 (class :1, untouched).
PRIOMAP: tuple[int, ...] = (0,) * 16
UNTOUCHED_MINOR = 1
IMPAIRED_MINOR = 2
FILTER_PREF = 1


def format_handle(major: int) -> str:
    """A qdisc handle as tc writes it: ``format_handle(0x4842) == "4842:"``."""
    _check_major(major)
    return f"{major:x}:"


def format_classid(major: int, minor: int) -> str:
    """A class id as tc writes it: ``format_classid(0x4842, 2) == "4842:2"``."""
    _check_major(major)
    if isinstance(minor, bool) or not isinstance(minor, int) or not 1 <= minor <= 0xFFFF:
        raise ConfigError(f"class minor must be 1..ffff, got {minor!r}")
    return f"{major:x}:{minor:x}"


def _check_major(major: int) -> None:
    # 0 is "unspecified" and ffff is the ingress/clsact major; neither is a usable handle.
    if isinstance(major, bool) or not isinstance(major, int) or not 1 <= major <= 0xFFFE:
        raise ConfigError(f"qdisc handle major must be 1..fffe, got {major!r}")


ROOT_HANDLE = format_handle(ROOT_MAJOR)
NETEM_HANDLE = format_handle(NETEM_MAJOR)
TBF_HANDLE = format_handle(TBF_MAJOR)
UNTOUCHED_CLASS = format_classid(ROOT_MAJOR, UNTOUCHED_MINOR)
IMPAIRED_CLASS = format_classid(ROOT_MAJOR, IMPAIRED_MINOR)
# netem is classful with a single class :1; a child qdisc hangs there.
TBF_PARENT = format_classid(NETEM_MAJOR, 1)

_IFNAME_RE = re.compile(IFACE_PATTERN)
_TC_PATH_RE = re.compile(r"\A(?:tc|/[A-Za-z0-9_.+/-]*/tc)\Z")


def validate_ifname(name: str) -> str:
    """Return ``name`` if it is a usable Linux interface name, else raise ConfigError.

    ``:`` is refused although tools print ``eth0:1``: that is an address label, not a device,
    and ``tc`` cannot act on it.
    """
    if not isinstance(name, str):
        raise ConfigError(f"interface name must be a string, got {name!r}")
    if not _IFNAME_RE.fullmatch(name):
        hint = " (':' marks an address label such as eth0:1, not a device)" if ":" in name else ""
        raise ConfigError(
            f"invalid interface name {name!r}: 1-15 characters of letters, digits, '_', '.', '-', "
            f"not starting with '-'{hint}"
        )
    return name


def validate_peer_ip(address: str | ipaddress.IPv4Address) -> ipaddress.IPv4Address:
    """The peer's replication address as an :class:`~ipaddress.IPv4Address`, or ConfigError.

    Only a unicast IPv4 host address makes sense as "the peer": the filter is
    ``match ip dst <peer>/32``.  Leading zeros are refused (Python's parser does, because
    other tools read ``010.0.0.1`` as octal).
    """
    if isinstance(address, ipaddress.IPv4Address):
        ip = address
    elif isinstance(address, str):
        try:
            ip = ipaddress.IPv4Address(address)
        except ValueError:
            try:
                ipaddress.IPv6Address(address)
            except ValueError:
                raise ConfigError(f"peer address {address!r} is not an IPv4 address") from None
            raise ConfigError(
                f"peer address {address!r} is IPv6; the replication-path filter supports IPv4 only"
            ) from None
    else:
        raise ConfigError(f"peer address must be a string, got {address!r}")
    if ip.is_unspecified or ip.is_multicast or ip.is_loopback or ip == ipaddress.IPv4Address("255.255.255.255"):
        raise ConfigError(f"peer address {ip} is not a unicast host address")
    return ip


def _check_tc(tc: str) -> str:
    if not isinstance(tc, str) or not _TC_PATH_RE.match(tc) or "/../" in tc or "/./" in tc:
        raise ConfigError(f"tc must be 'tc' or an absolute path ending in /tc, got {tc!r}")
    return tc


def _us(seconds: float) -> str:
    return f"{round(seconds * 1e6)}us"


def _percent(value: float) -> str:
    # Fixed point, never an exponent: tc's parser decides "is this a number" by the first
    # character, and a plain decimal reads the same to every tool.
    return f"{value:.7f}".rstrip("0").rstrip(".") + "%"


def _netem_args(profile: NetemProfile, limit: int) -> list[str]:
    args = ["netem", "limit", str(limit)]
    if profile.delay_s > 0:
        args += ["delay", _us(profile.delay_s)]
        if profile.jitter_s > 0:
            args.append(_us(profile.jitter_s))
            # "uniform" is the kernel's behaviour without a table (see profile.py).
            if profile.distribution not in (None, "uniform"):
                args += ["distribution", str(profile.distribution)]
    if profile.loss_pct > 0:
        args += ["loss", "random", _percent(profile.loss_pct)]
    return args


def apply_commands(
    profile: NetemProfile,
    ifname: str,
    peer_ip: str | ipaddress.IPv4Address,
    *,
    link_rate_bits: float = DEFAULT_LINK_RATE_BITS,
    mtu: int = DEFAULT_MTU,
    hz: int = DEFAULT_HZ,
    tc: str = "tc",
    port: int | None = None,
) -> list[list[str]]:
    """argv lists that impair traffic from this node to ``peer_ip`` leaving ``ifname``: with
    ``port``, only the resource's TCP port (either direction) and ICMP; without, everything
    to the peer (:mod:`harness.impair.steering`).

    Run them in order with root privileges; stop at the first failure and run
    :func:`teardown_commands`.  ``link_rate_bits`` and ``mtu`` size netem's ``limit``
    (:meth:`NetemProfile.limit_packets`), ``hz`` and ``mtu`` size tbf's burst; pass the same
    values to :func:`harness.impair.readback.verify_applied`.  Whether this node gets the
    profile at all is :meth:`NetemProfile.applies_to`, the caller's decision.
    """
    dev = validate_ifname(ifname)
    peer = validate_peer_ip(peer_ip)
    tc = _check_tc(tc)
    limit = profile.limit_packets(link_rate_bits, mtu)
    priomap = [str(band) for band in PRIOMAP]
    commands = [
        [tc, "qdisc", "add", "dev", dev, "root", "handle", ROOT_HANDLE, "prio", "bands", str(PRIO_BANDS),
         "priomap", *priomap],
        [tc, "qdisc", "add", "dev", dev, "parent", IMPAIRED_CLASS, "handle", NETEM_HANDLE,
         *_netem_args(profile, limit)],
    ]  # fmt: skip
    burst = profile.tbf_burst_bytes(hz, mtu)
    latency = profile.tbf_latency_s
    if profile.rate_bits is not None and burst is not None and latency is not None:
        profile.tbf_limit_bytes(hz, mtu)  # raises if tc would wrap the 32-bit byte limit
        commands.append(
            [tc, "qdisc", "add", "dev", dev, "parent", TBF_PARENT, "handle", TBF_HANDLE,
             "tbf", "rate", f"{round(profile.rate_bits)}bit", "burst", str(burst), "latency", _us(latency)]
        )  # fmt: skip
    for rule in steering_rules(peer, port):
        commands.append(
            [tc, "filter", "add", "dev", dev, "parent", ROOT_HANDLE, "protocol", "ip", "prio", str(FILTER_PREF),
             "u32", *rule.match, "flowid", IMPAIRED_CLASS]
        )  # fmt: skip
    return commands


#: what tc's batch reader (iproute2 ``makeargs``) would split or read as a comment or quote
_NOT_BATCH_SAFE = re.compile(r"[\s\"'#\\]")


def batch_input(commands: Sequence[Sequence[str]]) -> tuple[list[str], str]:
    """One ``tc -batch -`` run for several tc argv lists (one exec instead of one each; tc stops
    at the first failing line, exits non-zero and names the line, as an ``&&`` chain would):
    ``(argv, the text for its stdin)``.  Every argv runs the same ``tc``; a token that tc's
    batch reader would split, quote or cut is refused."""
    if not commands:
        raise ValueError("no tc commands to batch")
    tc = commands[0][0]
    lines = []
    for argv in commands:
        if not argv or argv[0] != tc:
            raise ValueError(f"every batched command must run {tc!r}, got {list(argv)!r}")
        unsafe = [token for token in argv[1:] if not token or _NOT_BATCH_SAFE.search(token)]
        if unsafe:
            raise ValueError(f"tc batch line would not read back as its argv: {unsafe!r}")
        lines.append(" ".join(argv[1:]) + "\n")
    return [_check_tc(tc), "-batch", "-"], "".join(lines)


def teardown_commands(ifname: str, *, tc: str = "tc") -> list[list[str]]:
    """argv lists that remove the harness's tree from ``ifname`` and nothing else.

    The kernel refuses the delete (``Error: Invalid handle.``, rc 2) unless the root has the
    reserved handle, so this is safe to run blindly from a dead-man switch; the caller reads
    back afterwards to tell "removed" from "was not there" from "someone else's root".
    """
    dev = validate_ifname(ifname)
    return [[_check_tc(tc), "qdisc", "del", "dev", dev, "root", "handle", ROOT_HANDLE]]


def qdisc_show_command(ifname: str, *, tc: str = "tc") -> list[str]:
    """``tc -j qdisc show dev X``: every qdisc on the interface, for classification and checks.

    No ``-p``: iproute2 6.1 aborts in ``jsonw_destroy`` with ``-j -p`` on u32 filters, and
    plain JSON is what :mod:`harness.impair.qdiscs` and :mod:`harness.impair.filters` parse.
    """
    return [_check_tc(tc), "-j", "qdisc", "show", "dev", validate_ifname(ifname)]


def filter_show_command(ifname: str, *, tc: str = "tc") -> list[str]:
    """``tc -j filter show dev X parent 4842:``: the filters under the harness root only."""
    return [_check_tc(tc), "-j", "filter", "show", "dev", validate_ifname(ifname), "parent", ROOT_HANDLE]


def readback_commands(ifname: str, *, tc: str = "tc") -> list[list[str]]:
    """Both read-back commands, qdiscs first (the filter dump needs the root to exist)."""
    return [qdisc_show_command(ifname, tc=tc), filter_show_command(ifname, tc=tc)]
