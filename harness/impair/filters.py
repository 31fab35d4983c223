"""``tc -j filter show dev X parent H``, read into typed :class:`Filter` objects (nothing here
runs a command).

u32 filters (tc/f_u32.c ``print_raw`` at Mu-L/iproute2@21a61425cb9a0993e422b1d2ee2f331b66548d86,
and recorded with iproute2 6.1.0, the lab guests' userland): each key is an object under the
key ``"match"`` -- repeated once per key *in the same JSON object*, kept by
:func:`~harness.impair.tcjson.load_objects` -- with ``value``/``mask`` as unpadded hex strings
(``"ad5010c"`` for 10.213.1.12) and ``off``.  With ``-p`` the keys print as
``{"dst": {"address", "prefixlen"}}``; that form is accepted too.

Before iproute2 5.18 (Ubuntu 20.04's 5.5, Debian 11's 5.10, Ubuntu 22.04's 5.15), u32's
``print_opt`` still wrote with ``fprintf`` in JSON mode, so its options arrive as text
(``fh 800::800 order 2048 key ht 800 bkt 0 flowid 4842:2 not_in_hw \n  match 0ad5010c/ffffffff
at 16``; recorded with 5.10 in tests/data/tc/versions/, where 6.1 and 6.15 print JSON; the
text comes from ``fprintf(f, "fh %s ", ...)``/``"%sflowid %s "`` in ``u32_print_opt``, which a
2022 netdev patch by Stephen Hemminger began to convert).  :func:`_u32_text` reads that
text with the same meaning: ``fh``, ``[*]flowid``, ``ht divisor`` (a hash-table entry, not a
rule), ``match VALUE/MASK at [nexthdr+]OFF``, and the words of the features the harness never
sets (``link``, ``hash mask``, ``offset``, ``mark``, ``input dev``, ``police``, ``action``).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass

from harness.impair.tcjson import (
    TEXT_OPTIONS,
    TcParseError,
    as_hex,
    as_int,
    as_obj,
    as_str,
    every,
    format_tc_id,
    load_objects,
    one,
    parse_tc_id,
)

__all__ = ["Filter", "U32Key", "parse_filters"]

# u32 options that would change what a rule does beyond "match key -> flowid".
_U32_EXTRAS = ("actions", "police", "link", "input_dev", "offset_mask", "plus", "hash_mask", "fwmark_value")


@dataclass(frozen=True)
class U32Key:
    """One u32 match key: ``(packet[off:off+4] & mask) == value``, IP header relative."""

    value: int
    mask: int
    off: int
    nexthdr: bool = False

    def describe(self) -> str:
        return f"{self.value:08x}/{self.mask:08x} at {'nexthdr+' if self.nexthdr else ''}{self.off}"


@dataclass(frozen=True)
class Filter:
    """One entry of ``tc -j filter show``.  u32 prints a header entry per priority and one
    for the hash table (``ht_divisor``) besides the rules; :attr:`is_rule` tells them apart."""

    kind: str
    protocol: str
    pref: int
    handle: str | None
    flowid: int | None
    keys: tuple[U32Key, ...]
    extras: tuple[str, ...]
    is_rule: bool

    def label(self) -> str:
        flow = format_tc_id(self.flowid) if self.flowid is not None else "-"
        return f"{self.kind} pref {self.pref} fh {self.handle or '-'} flowid {flow}"


def _u32_keys(options: Mapping[str, object], what: str) -> tuple[U32Key, ...]:
    keys = []
    for entry in every(options, "match"):
        match = as_obj(entry, f"{what}: match")
        if "value" in match:
            offmask = match.get("offmask", "")
            keys.append(
                U32Key(
                    value=as_hex(match.get("value"), f"{what}: match.value"),
                    mask=as_hex(match.get("mask"), f"{what}: match.mask"),
                    off=as_int(match.get("off"), f"{what}: match.off"),
                    nexthdr=bool(offmask),
                )
            )
            continue
        # "-p" form for IPv4 addresses: {"dst": {"address": "...", "prefixlen": 32}}.
        for field_name, off in (("src", 12), ("dst", 16)):
            if field_name in match:
                addr = as_obj(match[field_name], f"{what}: match.{field_name}")
                try:
                    ip = ipaddress.IPv4Address(as_str(addr.get("address"), f"{what}: address"))
                except ValueError:
                    raise TcParseError(f"{what}: bad address {addr.get('address')!r}") from None
                bits = as_int(addr.get("prefixlen"), f"{what}: prefixlen")
                if not 0 <= bits <= 32:
                    raise TcParseError(f"{what}: prefixlen {bits} out of range")
                mask = (0xFFFFFFFF << (32 - bits)) & 0xFFFFFFFF
                keys.append(U32Key(int(ip), mask, off))
                break
        else:
            raise TcParseError(f"{what}: u32 key form not understood: {dict(match)!r}")
    return tuple(keys)


_TEXT_MATCH_RE = re.compile(r"\bmatch ([0-9a-f]{8})/([0-9a-f]{8}) at (nexthdr\+)?(-?\d+)")
_TEXT_FH_RE = re.compile(r"\bfh (\S+)")
# "terminal flowid ???" (a terminal rule without a class) has no flowid
_TEXT_FLOWID_RE = re.compile(r"(?:^|\s)\*?flowid ([0-9a-fA-F]*:[0-9a-fA-F]*)")
# text words of u32 features -> the JSON key names in _U32_EXTRAS
_TEXT_EXTRAS = (
    ("actions", re.compile(r"\bactions?\b")),
    ("police", re.compile(r"\bpolice\b")),
    ("link", re.compile(r"\blink \S")),
    ("input_dev", re.compile(r"\binput dev\b")),
    ("offset_mask", re.compile(r"\boffset [0-9a-f]+>>")),
    ("hash_mask", re.compile(r"\bhash mask\b")),
    ("fwmark_value", re.compile(r"\bmark 0x")),
)


def _u32_text(kind: str, protocol: str, pref: int, text: str) -> Filter:
    """A filter whose options tc printed as text (iproute2 < 5.18 u32)."""
    fh = _TEXT_FH_RE.search(text)
    flowid = _TEXT_FLOWID_RE.search(text)
    keys = tuple(
        U32Key(int(m[1], 16), int(m[2], 16), int(m[4]), nexthdr=m[3] is not None) for m in _TEXT_MATCH_RE.finditer(text)
    )
    return Filter(
        kind=kind,
        protocol=protocol,
        pref=pref,
        handle=fh[1] if fh else None,
        flowid=parse_tc_id(flowid[1]) if flowid else None,
        keys=keys,
        extras=tuple(name for name, pattern in _TEXT_EXTRAS if pattern.search(text)),
        is_rule="ht divisor" not in text,
    )


def parse_filters(text: str) -> list[Filter]:
    """Parse ``tc -j filter show dev X parent H``.  An empty list (``[]``) is valid; empty
    output is not.  u32 keys are decoded; other filter kinds keep no keys."""
    filters = []
    for i, item in enumerate(load_objects(text, "tc -j filter show")):
        what = f"filter #{i}"
        kind = as_str(one(item, "kind", what), f"{what}: kind")
        protocol = as_str(item.get("protocol", ""), f"{what}: protocol")
        pref = as_int(item.get("pref", 0), f"{what}: pref")
        options = item.get("options")
        if options is None:
            filters.append(Filter(kind, protocol, pref, None, None, (), (), is_rule=False))
            continue
        opts = as_obj(options, f"{what}: options")
        if TEXT_OPTIONS in opts:
            if kind != "u32":
                raise TcParseError(f"{what}: {kind} options printed as text, not JSON: {opts[TEXT_OPTIONS]!r}")
            filters.append(_u32_text(kind, protocol, pref, as_str(opts[TEXT_OPTIONS], f"{what}: options")))
            continue
        handle = opts.get("fh")
        flowid = opts.get("flowid")
        is_table = "ht_divisor" in opts
        filters.append(
            Filter(
                kind=kind,
                protocol=protocol,
                pref=pref,
                handle=None if handle is None else as_str(handle, f"{what}: fh"),
                flowid=None if flowid is None else parse_tc_id(as_str(flowid, f"{what}: flowid")),
                keys=_u32_keys(opts, what) if kind == "u32" else (),
                extras=tuple(key for key in _U32_EXTRAS if key in opts),
                is_rule=not is_table,
            )
        )
    return filters
