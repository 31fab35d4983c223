"""SSH hosts and replication addresses as what they mean, not as the strings that spell them.

``db1.example.com`` and ``DB1.example.com.`` are one host, and so are ``::1`` and
``0:0:0:0:0:0:0:1``; the inventory stores each in one spelling, so its duplicate checks (one
SSH endpoint per node, one replication address per node) compare meanings:

* host names are lower-cased (DNS and OpenSSH's ``known_hosts`` matching ignore case) and lose
  a trailing dot; each label follows RFC 1123 (letters, digits, inner hyphens, 1-63
  characters; no ``_``), and a name whose last label is all digits is taken for an IPv4
  address, as resolvers do;
* IP addresses are written as :mod:`ipaddress` writes them (IPv6 compressed, lower case);
* legacy IPv4 shorthands that ``inet_aton`` (and so ssh) accepts — ``127.1``, ``0x7f.0.0.1``,
  ``010.0.0.1`` (octal: 8.0.0.1) — are **refused** rather than normalised: the octal and
  short forms read differently to a person and to the resolver, so the error names what ssh
  would connect to and asks for the dotted quad.

SSH hosts may be anything reachable, loopback included (tests and tunnels use it).  A
replication address must be one a peer can send to: not unspecified, "this network"
(0.0.0.0/8), loopback, multicast, broadcast or reserved (240/4), and not link-local
(169.254/16): link-local is not routed, so no cross-AZ peer reaches it, and clouds keep their
metadata, DNS and time services there (169.254.169.254).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable
from typing import Final

__all__ = ["endpoint", "replication_ip", "ssh_host"]

_LABEL: Final = re.compile(r"\A[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\Z")
_NUMERIC_LABEL: Final = re.compile(r"\A(?:0x[0-9a-f]*|[0-9]+)\Z")
_THIS_NETWORK: Final = ipaddress.IPv4Network("0.0.0.0/8")
_BROADCAST: Final = ipaddress.IPv4Address("255.255.255.255")
#: Replication addresses no peer can send to, with what they are (first match is named).
_UNUSABLE: Final[tuple[tuple[Callable[[ipaddress.IPv4Address], bool], str], ...]] = (
    (lambda ip: ip.is_unspecified, "the unspecified address"),
    (lambda ip: ip in _THIS_NETWORK, "in 0.0.0.0/8 (this network)"),
    (lambda ip: ip == _BROADCAST, "the broadcast address"),
    (lambda ip: ip.is_loopback, "a loopback address"),
    (lambda ip: ip.is_link_local, "link-local (169.254.0.0/16: not routed; cloud metadata services live there)"),
    (lambda ip: ip.is_multicast, "a multicast address"),
    (lambda ip: ip.is_reserved, "reserved (240.0.0.0/4)"),
)


def _ipv4(text: str) -> str:
    try:
        return str(ipaddress.IPv4Address(text))
    except ipaddress.AddressValueError:
        pass
    try:
        meant = socket.inet_ntoa(socket.inet_aton(text))
    except OSError:
        raise ValueError(f"{text!r} is not an IPv4 address (four numbers 0-255, e.g. 192.0.2.10)") from None
    raise ValueError(f"{text!r} is a shorthand IPv4 address that ssh reads as {meant}; write {meant}")


def _host_name(text: str) -> str:
    if len(text) > 253:
        raise ValueError(f"host name {text[:40]!r}... is longer than 253 characters")
    for label in text.split("."):
        if not label:
            raise ValueError(f"{text!r} has an empty label (two dots, or a leading dot)")
        if len(label) > 63:
            raise ValueError(f"label {label[:20]!r}... of {text!r} is longer than 63 characters")
        if not _LABEL.match(label):
            raise ValueError(f"{label!r} is not a valid host name label (letters, digits and inner hyphens; RFC 1123)")
    return text


def ssh_host(value: object) -> str:
    """The one spelling of an SSH host (see the module docstring); ValueError saying what is
    wrong otherwise."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)  # YAML reads `host: 127.1` as a number; judge it as the address meant
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected a host name or IP address, got {value!r}")
    text = value.strip().lower()
    if ":" in text:
        try:
            return str(ipaddress.IPv6Address(text))
        except ipaddress.AddressValueError:
            raise ValueError(f"{value!r} is not an IPv6 address") from None
    if text.endswith(".") and not text.endswith(".."):
        text = text[:-1]
    if _NUMERIC_LABEL.match(text.rsplit(".", 1)[-1]):
        return _ipv4(text)  # a name never ends in a number label: this is meant as an address
    return _host_name(text)


def replication_ip(value: object) -> str:
    """The replication address in its one spelling, if a peer can send to it; ValueError
    naming the kind of address it is otherwise."""
    if not isinstance(value, str):
        raise ValueError(f"expected an IPv4 address as a string, got {value!r}")
    try:
        ip = ipaddress.IPv4Address(value.strip())
    except ipaddress.AddressValueError as exc:
        raise ValueError(f"not an IPv4 address: {value!r} ({exc})") from None
    kind = next((what for unusable, what in _UNUSABLE if unusable(ip)), None)
    if kind is not None:
        raise ValueError(f"{ip} is {kind}; the replication address must be the node's own unicast address")
    return str(ip)


def endpoint(host: str, port: int) -> str:
    """``host:port`` for messages, an IPv6 address in brackets (``[::1]:22``)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
