"""Impairment of the replication path: netem delay/jitter/loss and a tbf rate cap, applied
with ``tc`` on one node's replication interface toward exactly one peer.

This package is the pure part: :mod:`~harness.impair.profile` (what to impair and the sizes
that follow), :mod:`~harness.impair.lint` (the profile against DRBD's timeouts),
:mod:`~harness.impair.commands` (argv lists to apply, read back and tear down),
:mod:`~harness.impair.qdiscs` and :mod:`~harness.impair.filters` (parse ``tc -j`` output,
through :mod:`~harness.impair.tcjson`), :mod:`~harness.impair.readback` (classify the root,
verify).
Running the commands, the ledger and the dead-man switch live with the remote layer.
"""

from harness.impair.commands import (
    IMPAIRED_CLASS,
    NETEM_HANDLE,
    ROOT_HANDLE,
    ROOT_MAJOR,
    TBF_HANDLE,
    apply_commands,
    filter_show_command,
    qdisc_show_command,
    readback_commands,
    teardown_commands,
    validate_ifname,
    validate_peer_ip,
)
from harness.impair.filters import Filter, U32Key, parse_filters
from harness.impair.lint import DRBD_DEFAULT_PING_TIMEOUT_S, DRBD_DEFAULT_TIMEOUT_S, LintFinding, lint_profile
from harness.impair.profile import (
    DEFAULT_HZ,
    DEFAULT_LINK_RATE_BITS,
    DEFAULT_MTU,
    Direction,
    Distribution,
    NetemProfile,
    Role,
)
from harness.impair.qdiscs import NetemOptions, PrioOptions, Qdisc, TbfOptions, parse_qdiscs
from harness.impair.readback import RootClass, classify_root, explain_root, verify_applied, verify_cleared
from harness.impair.tcjson import TcParseError

__all__ = [
    "DEFAULT_HZ",
    "DEFAULT_LINK_RATE_BITS",
    "DEFAULT_MTU",
    "DRBD_DEFAULT_PING_TIMEOUT_S",
    "DRBD_DEFAULT_TIMEOUT_S",
    "IMPAIRED_CLASS",
    "NETEM_HANDLE",
    "ROOT_HANDLE",
    "ROOT_MAJOR",
    "TBF_HANDLE",
    "Direction",
    "Distribution",
    "Filter",
    "LintFinding",
    "NetemOptions",
    "NetemProfile",
    "PrioOptions",
    "Qdisc",
    "Role",
    "RootClass",
    "TbfOptions",
    "TcParseError",
    "U32Key",
    "apply_commands",
    "classify_root",
    "explain_root",
    "filter_show_command",
    "lint_profile",
    "parse_filters",
    "parse_qdiscs",
    "qdisc_show_command",
    "readback_commands",
    "teardown_commands",
    "validate_ifname",
    "validate_peer_ip",
    "verify_applied",
    "verify_cleared",
]
