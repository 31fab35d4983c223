"""The configuration audit per connection: protocol, quorum, fencing per peer,
N nodes and diskless tie-breakers, on published DRBD 9 configurations (tests/data/drbd/drbd9)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.drbd.audit import AuditPlan, audit_dump, audit_show
from harness.drbd.config import find_resources, parse_config
from harness.drbd.layout import Endpoint, PairEnds, layout_of_dump
from harness.remote import CommandResult

DRBD9 = Path(__file__).resolve().parent.parent / "data" / "drbd" / "drbd9"
PROXY = "proxy_2sites_3nodes"


def read9(name: str) -> str:
    return (DRBD9 / name).read_text()


def ends(local: str, peer: str, peer_address: str | None = None) -> PairEnds:
    return PairEnds(Endpoint(frozenset({local})), Endpoint(frozenset({peer}), peer_address))


def drbdadm_protocols() -> list[tuple[str, str, str]]:
    """(node, peer, protocol) as drbdadm itself set them up (`drbdadm -d up` on each node)."""
    blocks = read9(f"{PROXY}-drbdadm-up.txt").split("\n\n")
    found: list[tuple[str, str, str]] = []
    for node, block in zip(("alpha", "bravo", "charlie"), blocks, strict=False):
        found += [(node, peer, proto) for peer, proto in re.findall(r"--_name=(\S+) --protocol=([ABC])", block)]
    return found


# -- protocol per connection ------------------------------------------------------------------
def test_drbdadm_reads_protocol_c_in_the_site_and_a_to_the_dr_node() -> None:
    assert sorted(drbdadm_protocols()) == [
        ("alpha", "bravo", "C"),
        ("alpha", "charlie", "A"),
        ("bravo", "alpha", "C"),
        ("bravo", "charlie", "A"),
        ("charlie", "alpha", "A"),
        ("charlie", "bravo", "A"),
    ]


@pytest.mark.parametrize(("node", "peer", "protocol"), drbdadm_protocols())
def test_each_pair_is_judged_by_its_own_connection(node: str, peer: str, protocol: str) -> None:
    text = read9(f"{PROXY}.res")
    assert audit_dump(text, PROXY, protocol, ends(node, peer)) == []
    wrong = {"A": "C", "C": "A"}[protocol]
    (risk,) = audit_dump(text, PROXY, wrong, ends(node, peer))
    assert risk.check == "protocol"
    assert risk.detail.startswith(f"the connection to {peer} runs protocol {protocol}, the inventory says {wrong}")


def test_the_site_pair_is_not_reported_as_running_protocol_a() -> None:
    risks = audit_dump(read9(f"{PROXY}.res"), PROXY, "C", ends("alpha", "bravo"))
    assert not any("protocol A" in str(r) for r in risks)


def test_the_pair_is_found_by_its_replication_address_too() -> None:
    by_address = PairEnds(
        Endpoint(frozenset({"site-a-1"}), "192.168.31.1"), Endpoint(frozenset({"inventory-name"}), "192.168.31.2")
    )
    assert audit_dump(read9(f"{PROXY}.res"), PROXY, "C", by_address) == []


def test_a_peer_the_configuration_does_not_know_fails_closed() -> None:
    (risk,) = audit_dump(read9(f"{PROXY}.res"), PROXY, "C", ends("alpha", "delta"))
    assert risk.check == "audit"
    assert "cannot tell which connection is the pair's" in risk.detail and "delta" in risk.detail
    (blind,) = audit_dump(read9(f"{PROXY}.res"), PROXY, "C")
    assert blind.check == "audit"


# -- quorum on N nodes --------------------------------------------------------------------------
def test_three_node_quorum_majority_is_not_the_two_node_warning() -> None:
    show = read9("drbdsetup-show-tiebreaker-swap.txt")
    assert audit_show(show, "r0", "C", ends("undertest", "peer2", "10.36.50.10")) == []
    assert audit_show(show, "r0", "C", ends("undertest", "peer0")) == []
    dump = read9("adjust_tiebreaker_swap.res")
    assert audit_dump(dump, "r0", "C", ends("undertest", "peer2")) == []


def test_quorum_all_on_three_nodes_is_still_a_risk() -> None:
    show = read9("drbdsetup-show-tiebreaker-swap.txt").replace("majority;", "all;")
    (risk,) = audit_show(show, "r0", "C", ends("undertest", "peer2"))
    assert risk.check == "quorum"
    assert risk.detail.startswith("quorum all with on-no-quorum (not shown): on 3 nodes the primary needs 3 of them")


def test_diskless_tiebreakers_count_as_nodes() -> None:
    (resource,) = find_resources(parse_config(read9("tiebreaker.res")), "tiebreaker-test")
    layout = layout_of_dump(resource.block or (), {})
    assert layout.nodes == 4
    assert layout.diskless == ("witness", "dless")
    assert len(layout.connections) == 6  # a full mesh of four
    assert audit_dump(read9("tiebreaker.res"), "tiebreaker-test", "C", ends("undertest", "other")) == []


@st.composite
def mesh(draw: st.DrawFn) -> tuple[str, int, str, list[str]]:
    """A drbd.conf resource of N hosts in a mesh, with a quorum setting and per-link protocols."""
    n = draw(st.integers(min_value=2, max_value=6))
    quorum = draw(st.sampled_from(["majority", "all", *map(str, range(1, n + 1))]))
    hosts = [f"h{i}" for i in range(n)]
    protocols = draw(st.lists(st.sampled_from("ABC"), min_size=n * (n - 1) // 2, max_size=n * (n - 1) // 2))
    lines = [f"resource r {{ options {{ quorum {quorum}; }}"]
    lines += [f"on {h} {{ node-id {i}; address 10.0.0.{i + 1}:7000; }}" for i, h in enumerate(hosts)]
    links = [(a, b) for i, a in enumerate(hosts) for b in hosts[i + 1 :]]
    lines += [
        f"connection {{ host {a}; host {b}; net {{ protocol {p}; }} }}"
        for (a, b), p in zip(links, protocols, strict=True)
    ]
    return "\n".join([*lines, "}"]), n, quorum, protocols


@given(mesh())
def test_quorum_risk_iff_the_primary_cut_from_its_peer_loses_quorum(case: tuple[str, int, str, list[str]]) -> None:
    text, n, quorum, protocols = case
    need = {"majority": n // 2 + 1, "all": n}.get(quorum) or int(quorum)
    risks = audit_dump(text, "r", protocols[0], ends("h0", "h1"))
    assert [r.check for r in risks] == (["quorum"] if n - 1 < need else [])


@given(mesh(), st.data())
def test_every_link_is_judged_by_its_own_protocol(case: tuple[str, int, str, list[str]], data: st.DataObject) -> None:
    text, n, _, protocols = case
    links = [(a, b) for a in range(n) for b in range(a + 1, n)]
    index = data.draw(st.integers(min_value=0, max_value=len(links) - 1))
    a, b = links[index]
    checks = [r.check for r in audit_dump(text, "r", protocols[index], ends(f"h{a}", f"h{b}"))]
    assert "protocol" not in checks
    other = next(p for p in "ABC" if p != protocols[index])
    assert "protocol" in [r.check for r in audit_dump(text, "r", other, ends(f"h{b}", f"h{a}"))]


# -- settings that matter on any connection ------------------------------------------------------
def test_fencing_on_one_connection_names_it() -> None:
    text = read9(f"{PROXY}.res").replace(
        "net { protocol A; }\n\t}\n}", "net { protocol A; fencing resource-only; }\n\t}\n}"
    )
    risks = audit_dump(text, PROXY, "A", ends("bravo", "charlie"))
    assert [str(r) for r in risks] == [
        "fencing: connection to charlie: fencing resource-only: on losing the peer the primary calls fence-peer "
        "to outdate it"
    ]


def test_the_plan_carries_the_pair_to_the_audit() -> None:
    plan = AuditPlan({"r0": "C"}, {"r0": ends("undertest", "peer2")})
    answers = {k: CommandResult("n", " ".join(v), 0, "", "", 0.0) for k, v in plan.commands().items()}
    answers["audit_dump_r0"] = CommandResult("n", "drbdadm dump r0", 0, read9("adjust_tiebreaker_swap.res"), "", 0.0)
    answers["audit_show_r0"] = CommandResult(
        "n", "drbdsetup show r0", 0, read9("drbdsetup-show-tiebreaker-swap.txt"), "", 0.0
    )
    assert plan.evaluate(answers).resources["r0"] == []
    blind = AuditPlan({"r0": "C"}).evaluate(answers).resources["r0"]
    assert {r.check for r in blind} == {"audit"}  # without the pair, which of two connections? fails closed
