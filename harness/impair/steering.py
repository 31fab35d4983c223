"""Which packets the impairment catches: the u32 rules steering them into the impaired band.

By default only the pair's own traffic: the resource's TCP port,
in either direction, to the peer's address.  Either node may have opened a DRBD connection
(8.4 opens two, data and meta, and either side may be the one that connected), so this node
sends the resource's packets either *to* the port (it connected) or *from* it (it accepted):
one rule for each.  Another DRBD resource to the same peer uses another port and is not
shaped; neither is SSH, corosync or anything else to that address.  A third rule catches ICMP
to the peer, so that the ping the harness checks the fault with crosses the same
netem as the resource's packets; nothing else uses ICMP for replication.

``port=None`` shapes the whole path to the peer (one rule on the address only): an explicit
choice (a pair's ``shape: path`` in the inventory, the impairment benchmark), never a fallback.

A DRBD 9 resource reaches more peers than the pair's: one fault may shape the path to one of
them (a disaster-recovery link) or to several at once (a node cut off from every peer); each
address gets the same rules (:func:`steering_rules_to`).

The offsets are tc's own for ``match ip ...`` (iproute2 ``tc/f_u32.c`` ``parse_ip``): ``dst``
is the word at 16, ``protocol`` the byte at 9 (word 8, mask ``00ff0000``), ``sport``/``dport``
the halves of the word at 20, which assumes an IP header without options (DRBD's are plain).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from harness.errors import ConfigError
from harness.impair.filters import U32Key

__all__ = ["SteerRule", "steering_rules", "steering_rules_to", "validate_port"]

_TCP: Final = 6
_ICMP: Final = 1


@dataclass(frozen=True)
class SteerRule:
    """One u32 rule: the ``match`` words tc is given, and the keys it prints back for them."""

    what: str
    match: tuple[str, ...]
    keys: frozenset[U32Key]


def validate_port(port: int) -> int:
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ConfigError(f"TCP port must be 1..65535, got {port!r}")
    return port


def _dst(peer: ipaddress.IPv4Address) -> tuple[tuple[str, ...], U32Key]:
    return ("match", "ip", "dst", f"{peer}/32"), U32Key(int(peer), 0xFFFFFFFF, 16)


def _protocol(number: int) -> tuple[tuple[str, ...], U32Key]:
    return ("match", "ip", "protocol", str(number), "0xff"), U32Key(number << 16, 0x00FF0000, 8)


def steering_rules(peer: ipaddress.IPv4Address, port: int | None) -> list[SteerRule]:
    """The rules for traffic from this node to ``peer``: the resource's ``port`` (TCP, either
    direction) and ICMP, or with ``port=None`` everything to ``peer``."""
    dst_words, dst_key = _dst(peer)
    if port is None:
        return [SteerRule(f"{peer}/32", dst_words, frozenset({dst_key}))]
    port = validate_port(port)
    tcp_words, tcp_key = _protocol(_TCP)
    icmp_words, icmp_key = _protocol(_ICMP)
    return [
        SteerRule(
            f"tcp to {peer} port {port}",
            (*dst_words, *tcp_words, "match", "ip", "dport", str(port), "0xffff"),
            frozenset({dst_key, tcp_key, U32Key(port, 0x0000FFFF, 20)}),
        ),
        SteerRule(
            f"tcp to {peer} from port {port}",
            (*dst_words, *tcp_words, "match", "ip", "sport", str(port), "0xffff"),
            frozenset({dst_key, tcp_key, U32Key(port << 16, 0xFFFF0000, 20)}),
        ),
        SteerRule(f"icmp to {peer}", (*dst_words, *icmp_words), frozenset({dst_key, icmp_key})),
    ]


def steering_rules_to(peers: Sequence[ipaddress.IPv4Address], port: int | None) -> list[SteerRule]:
    """:func:`steering_rules` for each of ``peers`` in turn (each address once)."""
    return [rule for peer in dict.fromkeys(peers) for rule in steering_rules(peer, port)]
