"""Read-back parsing, root classification and verification against what was applied.

Two sources of input: the sample files in tests/data/tc/ (recorded and constructed, see its
README; every file is parsed, expectations come from manifest.json), and a synthetic
read-back rendered from the *argv* that :func:`apply_commands` built, the way iproute2 6.1
prints it (times through kernel ticks and ``%g``, loss as a 32-bit fraction, rates in
bytes/s, u32 keys as unpadded hex).  apply -> render -> verify must agree, and any single
perturbed value must be caught.
"""

from __future__ import annotations

import copy
import ipaddress
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings

from harness.impair.commands import apply_commands
from harness.impair.filters import U32Key, parse_filters
from harness.impair.profile import NetemProfile
from harness.impair.qdiscs import Qdisc, parse_qdiscs
from harness.impair.readback import RootClass, classify_root, explain_root, verify_applied, verify_cleared
from harness.impair.tcjson import TC_H_ROOT, TcParseError, parse_tc_id

DATA = Path(__file__).resolve().parent.parent / "data" / "tc"
MANIFEST: dict[str, dict[str, Any]] = {
    name: entry for name, entry in json.loads((DATA / "manifest.json").read_text()).items() if not name.startswith("_")
}
SAMPLES = sorted(p.name for p in DATA.glob("*.json") if p.name != "manifest.json")
PEER = "10.213.1.12"


# -- synthetic read-back: what tc 6.1 would print for our argv ------------------------------

# /proc/net/psched on 6.x kernels: "000003e8 00000040 ..." -> 1000/64 ticks per microsecond.
TICKS_PER_US = 1000 / 64
U32_MAX = 2**32 - 1


def _g(value: float) -> float:
    # tc prints JSON floats with "%g"; Python's "g" format is the same six significant digits.
    return float(f"{value:g}")


def _tc_time(token: str) -> float:
    assert token.endswith("us")
    ticks = int(int(token[:-2]) * TICKS_PER_US)  # tc_core_time2tick, truncated to u32
    return _g(int(ticks / TICKS_PER_US) / 1e6)  # tc_core_tick2time (unsigned) / 1e6


def _render_netem(args: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {"limit": int(args[args.index("limit") + 1])}
    if "delay" in args:
        i = args.index("delay")
        jitter = args[i + 2] if i + 2 < len(args) and args[i + 2][0].isdigit() else "0us"
        options["delay"] = {"delay": _tc_time(args[i + 1]), "jitter": _tc_time(jitter), "correlation": 0}
    if "loss" in args:
        pct = float(args[args.index("random") + 1].rstrip("%"))
        fraction = round(pct / 100 * U32_MAX) / U32_MAX  # set_percent() rint, printed as fraction
        options["loss-random"] = {"loss": _g(fraction), "correlation": 0}
    options["ecn"] = False
    options["gap"] = 0
    return options


def render_readback(commands: list[list[str]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """JSON-ready qdisc and filter dumps for the tree ``commands`` would build."""
    qdiscs: list[dict[str, Any]] = []
    filters: list[dict[str, Any]] = []
    for cmd in commands:
        if cmd[1] == "qdisc":
            handle = cmd[cmd.index("handle") + 1]
            entry: dict[str, Any] = {"kind": "", "handle": handle}
            if "root" in cmd:
                entry.update(root=True, refcnt=2)
            else:
                entry["parent"] = cmd[cmd.index("parent") + 1]
            if "prio" in cmd:
                i = cmd.index("priomap")
                entry["kind"] = "prio"
                entry["options"] = {
                    "bands": int(cmd[cmd.index("bands") + 1]),
                    "priomap": [int(x) for x in cmd[i + 1 :]],
                    "multiqueue": False,
                }
            elif "netem" in cmd:
                entry["kind"] = "netem"
                entry["options"] = _render_netem(cmd[cmd.index("netem") :])
            elif "tbf" in cmd:
                entry["kind"] = "tbf"
                entry["options"] = {
                    "rate": int(cmd[cmd.index("rate") + 1].removesuffix("bit")) // 8,  # get_rate64 truncates
                    "burst": int(cmd[cmd.index("burst") + 1]),
                    "lat": int(cmd[cmd.index("latency") + 1].removesuffix("us")),
                }
            qdiscs.append(entry)
        else:
            peer = ipaddress.IPv4Address(cmd[cmd.index("dst") + 1].split("/")[0])
            head = {"protocol": "ip", "pref": 1, "kind": "u32", "chain": 0}
            filters += [
                dict(head),
                {**head, "options": {"fh": "800:", "ht_divisor": 1}},
                {
                    **head,
                    "options": {
                        "fh": "800::800",
                        "order": 2048,
                        "key_ht": "800",
                        "bkt": "0",
                        "flowid": cmd[cmd.index("flowid") + 1],
                        "not_in_hw": True,
                        "match": {"value": f"{int(peer):x}", "mask": "ffffffff", "offmask": "", "off": 16},
                    },
                },
            ]
    return qdiscs, filters


def _verify(
    profile: NetemProfile, qdiscs: list[dict[str, Any]], filters: list[dict[str, Any]], peer: str = PEER
) -> list[str]:
    return verify_applied(profile, parse_qdiscs(json.dumps(qdiscs)), parse_filters(json.dumps(filters)), peer)


from .netem_strategies import profiles  # noqa: E402


@given(profile=profiles())
def test_apply_render_verify_round_trip_is_clean(profile: NetemProfile) -> None:
    qdiscs, filters = render_readback(apply_commands(profile, "vec1", PEER))
    assert _verify(profile, qdiscs, filters) == []
    parsed = parse_qdiscs(json.dumps(qdiscs))
    assert classify_root(parsed) is RootClass.HARNESS_OWNED
    assert verify_cleared(parsed) != []


# -- single perturbations of the read-back must be caught ------------------------------------

Dumps = tuple[list[dict[str, Any]], list[dict[str, Any]]]


def _find(qdiscs: list[dict[str, Any]], kind: str) -> dict[str, Any] | None:
    return next((q for q in qdiscs if q["kind"] == kind), None)


def _netem(dumps: Dumps) -> dict[str, Any]:
    netem = _find(dumps[0], "netem")
    assert netem is not None
    options: dict[str, Any] = netem["options"]
    return options


def _rule(dumps: Dumps) -> dict[str, Any]:
    options: dict[str, Any] = dumps[1][-1]["options"]
    return options


def _mutate_delay(d: Dumps) -> None:
    delay = _netem(d).setdefault("delay", {"delay": 0.0, "jitter": 0.0, "correlation": 0})
    delay["delay"] = delay["delay"] * 1.5 + 0.001


def _mutate_jitter(d: Dumps) -> None:
    delay = _netem(d).setdefault("delay", {"delay": 0.0, "jitter": 0.0, "correlation": 0})
    delay["jitter"] += 0.001


def _mutate_loss(d: Dumps) -> None:
    netem = _netem(d)
    loss = netem.get("loss-random")
    if loss is None:
        netem["loss-random"] = {"loss": 0.01, "correlation": 0}
    else:
        loss["loss"] = loss["loss"] - 0.01 if loss["loss"] > 0.5 else loss["loss"] + 0.01


def _mutate_limit(d: Dumps) -> None:
    _netem(d)["limit"] += 1


def _mutate_correlation(d: Dumps) -> None:
    _netem(d)["delay"] = {"delay": 0.001, "jitter": 0.0005, "correlation": 0.25}


def _mutate_extra_netem_feature(d: Dumps) -> None:
    _netem(d)["reorder"] = {"reorder": 0.25, "correlation": 0}


def _mutate_netem_rate(d: Dumps) -> None:
    _netem(d)["rate"] = {"rate": 125000}


def _mutate_tbf(field: str, factor: float) -> Callable[[Dumps], None]:
    def mutate(d: Dumps) -> None:
        tbf = _find(d[0], "tbf")
        assume(tbf is not None)
        assert tbf is not None
        tbf["options"][field] = int(tbf["options"][field] * factor) + 100

    return mutate


def _mutate_drop_tbf(d: Dumps) -> None:
    tbf = _find(d[0], "tbf")
    if tbf is None:  # no cap expected: adding one must be caught
        d[0].append({"kind": "tbf", "handle": "4844:", "parent": "4843:1", "options": {"rate": 1, "burst": 1}})
    else:
        d[0].remove(tbf)


def _mutate_drop_netem(d: Dumps) -> None:
    d[0][:] = [q for q in d[0] if q["kind"] != "netem"]


def _mutate_netem_parent(d: Dumps) -> None:
    netem = _find(d[0], "netem")
    assert netem is not None
    netem["parent"] = "4842:1"


def _mutate_priomap(d: Dumps) -> None:
    d[0][0]["options"]["priomap"][3] = 1


def _mutate_bands(d: Dumps) -> None:
    d[0][0]["options"]["bands"] = 3


def _mutate_root_handle(d: Dumps) -> None:
    d[0][0]["handle"] = "1:"


def _mutate_extra_qdisc(d: Dumps) -> None:
    d[0].append({"kind": "pfifo", "handle": "4845:", "parent": "4842:1", "options": {"limit": 10}})


def _mutate_peer(d: Dumps) -> None:
    match = _rule(d)["match"]
    match["value"] = f"{int(match['value'], 16) ^ 1:x}"


def _mutate_mask(d: Dumps) -> None:
    _rule(d)["match"]["mask"] = "ffffff00"


def _mutate_flowid(d: Dumps) -> None:
    _rule(d)["flowid"] = "4842:1"


def _mutate_extra_rule(d: Dumps) -> None:
    extra = copy.deepcopy(d[1][-1])
    extra["options"]["fh"] = "800::801"
    extra["options"]["match"]["value"] = "a000001"
    d[1].append(extra)


def _mutate_no_filter(d: Dumps) -> None:
    d[1].clear()


def _mutate_protocol(d: Dumps) -> None:
    d[1][-1]["protocol"] = "all"


MUTATIONS: dict[str, Callable[[Dumps], None]] = {
    "delay": _mutate_delay,
    "jitter": _mutate_jitter,
    "loss": _mutate_loss,
    "limit": _mutate_limit,
    "correlation": _mutate_correlation,
    "netem-extra": _mutate_extra_netem_feature,
    "netem-rate": _mutate_netem_rate,
    "tbf-rate": _mutate_tbf("rate", 1.01),
    "tbf-burst": _mutate_tbf("burst", 1.05),
    "tbf-latency": _mutate_tbf("lat", 1.05),
    "tbf-presence": _mutate_drop_tbf,
    "netem-missing": _mutate_drop_netem,
    "netem-parent": _mutate_netem_parent,
    "priomap": _mutate_priomap,
    "bands": _mutate_bands,
    "root-handle": _mutate_root_handle,
    "extra-qdisc": _mutate_extra_qdisc,
    "filter-peer": _mutate_peer,
    "filter-mask": _mutate_mask,
    "filter-flowid": _mutate_flowid,
    "filter-extra-rule": _mutate_extra_rule,
    "filter-missing": _mutate_no_filter,
    "filter-protocol": _mutate_protocol,
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
@settings(max_examples=40)
@given(profile=profiles())
def test_any_single_perturbation_of_the_readback_is_a_mismatch(mutation: str, profile: NetemProfile) -> None:
    dumps = render_readback(apply_commands(profile, "vec1", PEER))
    MUTATIONS[mutation](dumps)
    assert _verify(profile, *dumps) != [], mutation


def test_extra_key_in_the_rule_is_a_mismatch() -> None:
    # A rule that also matches the DRBD port would leave the peer's other traffic unimpaired
    # and is not what apply_commands built; tc prints the second key as a repeated "match".
    profile = NetemProfile("t2small", delay_s=0.001, rate_bits=128e6)
    qdiscs, _ = render_readback(apply_commands(profile, "vec1", PEER))
    rule = (
        '[{"protocol":"ip","pref":1,"kind":"u32","chain":0,"options":{"fh":"800::800","flowid":"4842:2",'
        '"match":{"value":"ad5010c","mask":"ffffffff","offmask":"","off":16},'
        '"match":{"value":"1e6d","mask":"ffff","offmask":"","off":20}}}]'
    )
    problems = verify_applied(profile, parse_qdiscs(json.dumps(qdiscs)), parse_filters(rule), PEER)
    assert len(problems) == 1
    assert "00001e6d/0000ffff at 20" in problems[0]


@pytest.mark.parametrize("change", ["delay", "loss", "rate", "peer", "link"])
@settings(max_examples=40)
@given(profile=profiles())
def test_any_single_perturbation_of_the_profile_is_a_mismatch(change: str, profile: NetemProfile) -> None:
    qdiscs, filters = render_readback(apply_commands(profile, "vec1", PEER))
    peer = PEER
    fields = profile.as_metadata()
    del fields["added_rtt_s"]
    if change == "delay":
        fields["delay_s"] = profile.delay_s * 1.5 + 0.001
    elif change == "loss":
        fields["loss_pct"] = profile.loss_pct - 1 if profile.loss_pct > 50 else profile.loss_pct + 1
    elif change == "rate":
        fields["rate_bits"] = 1e6 if profile.rate_bits is None else None
    elif change == "peer":
        peer = "10.213.1.13"
    if change == "link":
        # The expected netem limit follows the assumed link rate, unless both sit at the floor.
        assume(profile.limit_packets(1e12) != profile.limit_packets())
        problems = verify_applied(
            profile,
            parse_qdiscs(json.dumps(qdiscs)),
            parse_filters(json.dumps(filters)),
            peer,
            link_rate_bits=1e12,
        )
    else:
        other = NetemProfile(**fields)  # type: ignore[arg-type]
        problems = _verify(other, qdiscs, filters, peer)
    assert problems != [], change


def test_mismatch_messages_name_the_field() -> None:
    profile = NetemProfile("t2small", delay_s=0.001, rate_bits=128e6)
    qdiscs, filters = render_readback(apply_commands(profile, "vec1", PEER))
    _netem((qdiscs, filters))["delay"]["delay"] = 0.002
    problems = _verify(profile, qdiscs, filters)
    assert problems == ["netem delay: expected 1ms, read back 2ms"]


def test_readback_tolerances_absorb_tc_rounding() -> None:
    # Recorded with tc 6.1: tbf burst 160000 -> 159999 and 50 ms -> 49999 us for odd rates.
    profile = NetemProfile("t2small", delay_s=0.001, rate_bits=128e6)
    qdiscs, filters = render_readback(apply_commands(profile, "vec1", PEER))
    tbf = _find(qdiscs, "tbf")
    assert tbf is not None
    tbf["options"].update(burst=159_999, lat=19_999)
    assert _verify(profile, qdiscs, filters) == []


def test_distribution_is_not_checked_because_tc_never_prints_it() -> None:
    normal = NetemProfile("j", delay_s=0.01, jitter_s=0.002, distribution="normal")
    pareto = NetemProfile("j", delay_s=0.01, jitter_s=0.002, distribution="pareto")
    qdiscs, filters = render_readback(apply_commands(normal, "vec1", PEER))
    assert _verify(pareto, qdiscs, filters) == []


# -- sample files ---------------------------------------------------------------------------


def test_manifest_lists_only_existing_files() -> None:
    for name, entry in MANIFEST.items():
        assert (DATA / name).is_file(), name
        assert entry["provenance"] in {"recorded-host", "constructed", "recorded-lab"}, name
        if "filters_for" in entry:
            assert (DATA / entry["filters_for"]).is_file(), entry["filters_for"]


@pytest.mark.parametrize("name", SAMPLES)
def test_every_sample_parses_and_meets_its_manifest_entry(name: str) -> None:
    text = (DATA / name).read_text()
    entry = MANIFEST.get(name, {})
    if name.startswith("filter-"):
        filters = parse_filters(text)
        if "rules" in entry:
            assert sum(f.is_rule for f in filters) == entry["rules"]
        return
    assert name.startswith("qdisc-"), f"unexpected sample name {name}"
    qdiscs = parse_qdiscs(text)
    if "root" in entry:
        assert classify_root(qdiscs).value == entry["root"], explain_root(qdiscs)
    if "tbf" in entry:
        want = entry["tbf"]
        tbf = next(q for q in qdiscs if q.kind == "tbf").tbf()
        assert (tbf.rate_bytes, tbf.burst_bytes, tbf.latency_us) == (
            want["rate_bytes"],
            want["burst_bytes"],
            want["latency_us"],
        )
    if "profile" in entry:
        profile = NetemProfile(**entry["profile"])
        filters = parse_filters((DATA / entry["filters_for"]).read_text())
        extra = {k: entry[k] for k in ("link_rate_bits", "mtu", "hz") if k in entry}
        problems = verify_applied(profile, qdiscs, filters, entry["peer"], **extra)
        if "mismatch" in entry:
            assert any(entry["mismatch"] in p for p in problems), problems
        else:
            assert problems == []


def test_recorded_two_rule_filter_keeps_both_match_keys() -> None:
    filters = parse_filters((DATA / "filter-recorded-u32-two-rules.json").read_text())
    rules = [f for f in filters if f.is_rule]
    assert [r.keys for r in rules] == [
        (U32Key(0x0AD5010C, 0xFFFFFFFF, 16),),
        (U32Key(0x0A000001, 0xFFFFFFFF, 16), U32Key(0x1E6D, 0xFFFF, 20)),
    ]
    assert all(r.flowid == parse_tc_id("4842:2") for r in rules)
    assert [r.pref for r in rules] == [1, 2]


def test_recorded_details_form_of_tbf_burst() -> None:
    qdiscs = parse_qdiscs((DATA / "qdisc-recorded-htb-tbf-128mbit-details.json").read_text())
    assert next(q for q in qdiscs if q.kind == "tbf").tbf().burst_bytes == 160_000


def test_recorded_empty_filter_list_verifies_as_nothing_impaired() -> None:
    profile = NetemProfile("t2small", delay_s=0.001, rate_bits=128e6)
    qdiscs = parse_qdiscs((DATA / "qdisc-constructed-harness-delay1ms-rate128mbit.json").read_text())
    problems = verify_applied(profile, qdiscs, parse_filters("[]"), PEER)
    assert problems == ["filter: no rule steers 10.213.1.12/32 to 4842:2; nothing is impaired"]


def test_pretty_u32_form_is_understood() -> None:
    text = json.dumps(
        [
            {
                "protocol": "ip",
                "pref": 1,
                "kind": "u32",
                "chain": 0,
                "options": {
                    "fh": "800::800",
                    "flowid": "4842:2",
                    "match": {"dst": {"address": PEER, "prefixlen": 32}},
                },
            }
        ]
    )
    (rule,) = parse_filters(text)
    assert rule.keys == (U32Key(int(ipaddress.IPv4Address(PEER)), 0xFFFFFFFF, 16),)


# -- classification ---------------------------------------------------------------------------


def _q(kind: str, handle: str, parent: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"kind": kind, "handle": handle, "options": {}}
    if parent is None:
        entry["root"] = True
    else:
        entry["parent"] = parent
    return entry


@pytest.mark.parametrize(
    ("entries", "allow_mq", "expected"),
    [
        ([_q("noqueue", "0:")], True, RootClass.DEFAULT),
        ([_q("fq_codel", "0:")], True, RootClass.DEFAULT),
        ([_q("fq_codel", "8001:")], True, RootClass.FOREIGN),  # created by someone, auto handle
        ([_q("prio", "4842:")], True, RootClass.HARNESS_OWNED),
        ([_q("htb", "4842:")], True, RootClass.FOREIGN),
        (
            [_q("mq", "0:"), _q("pfifo_fast", "0:", ":1"), _q("pfifo_fast", "0:", ":2")],
            True,
            RootClass.DEFAULT,
        ),
        ([_q("mq", "0:"), _q("pfifo_fast", "0:", ":1")], False, RootClass.FOREIGN),
        ([_q("mq", "0:"), _q("netem", "8002:", ":1")], True, RootClass.FOREIGN),
        ([_q("noqueue", "0:"), _q("ingress", "ffff:", "ffff:fff1")], True, RootClass.DEFAULT),
        ([_q("noqueue", "0:"), _q("clsact", "ffff:", "ffff:fff1")], True, RootClass.DEFAULT),
        ([_q("pfifo_fast", "0:"), _q("netem", "10:", "1:1")], True, RootClass.FOREIGN),
        ([_q("ingress", "ffff:", "ffff:fff1")], True, RootClass.FOREIGN),  # no root: ambiguous
        ([_q("noqueue", "0:"), _q("prio", "4842:")], True, RootClass.FOREIGN),  # two roots
        ([], True, RootClass.FOREIGN),
    ],
)
def test_classify_root(entries: list[dict[str, Any]], allow_mq: bool, expected: RootClass) -> None:
    qdiscs = parse_qdiscs(json.dumps(entries))
    assert classify_root(qdiscs, allow_mq=allow_mq) is expected
    assert explain_root(qdiscs, allow_mq=allow_mq)


def test_verify_refuses_a_foreign_root_in_one_line() -> None:
    qdiscs = parse_qdiscs((DATA / "qdisc-recorded-htb-foreign.json").read_text())
    problems = verify_applied(NetemProfile("x", delay_s=0.001), qdiscs, [], PEER)
    assert len(problems) == 1
    assert problems[0].startswith("root: expected the harness prio root 4842:")


def test_verify_cleared() -> None:
    assert verify_cleared(parse_qdiscs((DATA / "qdisc-recorded-noqueue-default.json").read_text())) == []
    assert verify_cleared(parse_qdiscs((DATA / "qdisc-recorded-htb-foreign.json").read_text())) == []
    left = verify_cleared(parse_qdiscs((DATA / "qdisc-constructed-harness-root-only.json").read_text()))
    assert left == ["harness qdisc still present: prio 4842: root"]
    stray = parse_qdiscs(json.dumps([_q("noqueue", "0:"), _q("netem", "4843:", "1:2")]))
    assert verify_cleared(stray) == ["harness qdisc still present: netem 4843: parent 1:2"]


# -- parsing details --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("4842:", 0x48420000),
        ("4842:2", 0x48420002),
        (":1", 0x00000001),
        ("0:", 0),
        ("ffff:fff1", 0xFFFFFFF1),
        ("root", TC_H_ROOT),
        ("none", 0),
    ],
)
def test_parse_tc_id(text: str, value: int) -> None:
    assert parse_tc_id(text) == value


@pytest.mark.parametrize("text", ["", "4842", "12345:", "x:1", "1:2:3", "root:", " 1:"])
def test_parse_tc_id_rejects(text: str) -> None:
    with pytest.raises(TcParseError):
        parse_tc_id(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n",
        "qdisc noqueue 0: root refcnt 2",
        "{}",
        "[1, 2]",
        '[{"kind": "noqueue"}]',
        '[{"kind": "noqueue", "handle": "0:", "root": true, "kind": "pfifo"}]',
        '[{"kind": "noqueue", "handle": "zz", "root": true}]',
        '[{"kind": "noqueue", "handle": "0:", "root": true, "options": []}]',
    ],
)
def test_parse_qdiscs_rejects_garbage(text: str) -> None:
    with pytest.raises(TcParseError):
        parse_qdiscs(text)


@pytest.mark.parametrize(
    "options",
    [
        {"fh": "800::800", "flowid": "4842:2", "match": {"value": "xyz", "mask": "ffffffff", "off": 16}},
        {"fh": "800::800", "flowid": "4842:2", "match": {"dport": 7789}},
        {"fh": "800::800", "flowid": "4842:2", "match": {"dst": {"address": "10.0.0.1", "prefixlen": 40}}},
        {"fh": "800::800", "flowid": "bogus"},
    ],
)
def test_parse_filters_rejects_unknown_key_forms(options: dict[str, Any]) -> None:
    text = json.dumps([{"protocol": "ip", "pref": 1, "kind": "u32", "options": options}])
    with pytest.raises(TcParseError):
        parse_filters(text)


def test_unreadable_options_become_mismatches_not_exceptions() -> None:
    profile = NetemProfile("t2small", delay_s=0.001, rate_bits=128e6)
    qdiscs, filters = render_readback(apply_commands(profile, "vec1", PEER))
    netem = _find(qdiscs, "netem")
    tbf = _find(qdiscs, "tbf")
    assert netem is not None and tbf is not None
    netem["options"]["limit"] = "many"
    tbf["options"]["burst"] = "lots"
    qdiscs[0]["options"] = {"bands": 2}
    problems = _verify(profile, qdiscs, filters)
    assert len(problems) == 3
    assert all("unreadable" in p for p in problems)


def test_qdisc_accessors_on_samples() -> None:
    (pfifo,) = parse_qdiscs((DATA / "qdisc-constructed-pfifo-fast-default.json").read_text())
    assert pfifo.prio().priomap == (1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1)
    root, netem_q = parse_qdiscs((DATA / "qdisc-constructed-harness-jitter-loss.json").read_text())
    assert isinstance(root, Qdisc) and root.is_root and root.major == 0x4842
    jitter = netem_q.netem()
    assert (jitter.delay_s, jitter.jitter_s, jitter.loss_pct, jitter.limit) == (0.01, 0.002, 0.5, 15000)
