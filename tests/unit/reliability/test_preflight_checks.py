"""Preflight blocks a node with missing tools, a replication path that is the SSH path, or the wrong
identity (cases 13, 17, 35).

Cases of tests/RELIABILITY_CASES.md, the fault and bad-input map; each test is marked
``reliability_row(N)`` and named ``test_case_NN_*``; select a case with ``-k rowNN``.
"""

from __future__ import annotations

import pytest

from harness.impair.commands import apply_commands
from harness.impair.profile import NetemProfile
from harness.inventory import parse_inventory
from harness.safety.preflight import Finding
from tests.doubles import (
    ROOT,
    Answer,
    mutations,
)
from tests.unit.reliability.support import (
    finding,
    ip_addr_line,
    lab_node,
    preflight,
)


@pytest.mark.reliability_row(13)
def test_case_13_healthy_node_records_tool_versions() -> None:
    report = preflight({"a1": lab_node("a1"), "a2": lab_node("a2")})
    assert report.ok, report.render()
    assert finding(report, "a1", "fio").detail == "fio-3.33"
    assert finding(report, "a1", "drbdadm").detail == "DRBD kernel 8.4.11, utils ?"
    assert finding(report, "a1", "netem").detail == "sch_netem available"


@pytest.mark.reliability_row(13)
@pytest.mark.parametrize(
    ("changes", "check", "detail"),
    [
        # dash's message for a missing command, exit 127 (as /bin/sh printed it on the CI machine)
        (
            {"fio": Answer(rc=127, stderr="sh: 1: fio: not found")},
            "fio",
            "`fio` missing or failing on the node: sh: 1: fio: not found",
        ),
        (
            {"tc": Answer(rc=127, stderr="sh: 1: tc: not found")},
            "tc",
            "`tc` missing or failing on the node: sh: 1: tc: not found",
        ),
        ({"product": Answer(rc=127, stderr="sh: 1: drbdadm: not found")}, "drbdadm", "`drbdadm` missing or failing"),
        # constructed: kmod's message when the module does not exist
        (
            {"netem": Answer(rc=1, stderr="modinfo: ERROR: Module sch_netem not found.")},
            "netem",
            "sch_netem kernel module not available",
        ),
    ],
    ids=["no-fio", "no-tc", "no-drbdadm", "no-netem"],
)
def test_case_13_missing_tool_blocks(changes: dict[str, Answer], check: str, detail: str) -> None:
    a1 = lab_node("a1")
    a1.batch.update(changes)
    report = preflight({"a1": a1, "a2": lab_node("a2")})
    found = finding(report, "a1", check)
    assert found.status == "BLOCK" and found.detail.startswith(detail)
    assert not report.ok and mutations(a1) == []


@pytest.mark.reliability_row(13)
def test_case_13_no_tbf_is_a_warning_naming_the_cells_it_stops() -> None:
    # constructed: kmod's message when the module does not exist
    a1 = lab_node("a1", tbf=Answer(rc=1, stderr="modinfo: ERROR: Module sch_tbf not found."))
    report = preflight({"a1": a1, "a2": lab_node("a2")})
    found = finding(report, "a1", "tbf")
    assert found.status == "warn" and "cells with a rate cap are skipped" in found.detail
    assert found not in report.blockers
    assert finding(report, "a2", "tbf").status == "ok"


@pytest.mark.reliability_row(13)
def test_case_13_tool_printing_nothing_is_a_blocker_not_a_crash() -> None:
    report = preflight({"a1": lab_node("a1", fio=Answer()), "a2": lab_node("a2")})
    assert finding(report, "a1", "fio").status == "BLOCK"


@pytest.mark.reliability_row(17)
@pytest.mark.parametrize(
    ("sshconn", "status"),
    [
        ("10.213.0.1 40022 10.213.0.11 22", "ok"),  # management path
        ("10.213.1.12 40022 10.213.1.11 22", "warn"),  # SSH arrives on the replication address
        ("10.213.1.13 40022 10.213.0.11 22", "BLOCK"),  # the harness sits on a replication address
    ],
    ids=["separate", "ssh-on-replication-ip", "harness-on-replication-net"],
)
def test_case_17_replication_path_is_not_the_ssh_path(sshconn: str, status: str) -> None:
    report = preflight({"a1": lab_node("a1", sshconn=Answer(sshconn + "\n")), "a2": lab_node("a2")})
    assert finding(report, "a1", "paths").status == status


@pytest.mark.reliability_row(17)
def test_case_17_only_traffic_to_the_peer_is_shaped() -> None:
    argv = apply_commands(NetemProfile("wan", delay_s=0.005), "vec1", "10.213.1.12")
    assert argv[0][-16:] == ["0"] * 16  # priomap all 0: unclassified traffic (SSH, others) is untouched
    assert argv[-1][-6:] == ["match", "ip", "dst", "10.213.1.12/32", "flowid", "4842:2"]
    assert not any("replace" in a for a in argv)


@pytest.mark.reliability_row(17)
def test_case_17_wrong_replication_address_blocks() -> None:
    report = preflight({"a1": lab_node("a1", addr=Answer(ip_addr_line("vec1", "10.213.9.9"))), "a2": lab_node("a2")})
    assert finding(report, "a1", "replication iface").status == "BLOCK"


@pytest.mark.reliability_row(17)
def test_case_17_replication_address_is_matched_exactly() -> None:
    text = (ROOT / "inventories" / "lab.yaml").read_text().replace("ip: 10.213.1.11,", "ip: 10.213.1.1,")
    report = preflight({"a1": lab_node("a1"), "a2": lab_node("a2")}, parse_inventory(text))
    assert finding(report, "a1", "replication iface").status == "BLOCK"


@pytest.mark.reliability_row(35)
def test_case_35_wrong_cluster_identity_blocks() -> None:
    text = (
        (ROOT / "inventories" / "lab.yaml")
        .read_text()
        .replace("    ssh: {<<: *ssh, host: 10.213.0.11}", "    hostname: a1\n    ssh: {<<: *ssh, host: 10.213.0.11}")
    )
    inv = parse_inventory(text)
    wrong = lab_node("a1", hostname=Answer("a2\n"))  # the address answers, but it is another machine
    report = preflight({"a1": wrong, "a2": lab_node("a2")}, inv)
    assert finding(report, "a1", "identity") == Finding(
        "a1", "identity", "BLOCK", "uname -n is 'a2', inventory expects 'a1'"
    )
    assert not report.ok and mutations(wrong) == []
    right = preflight({"a1": lab_node("a1"), "a2": lab_node("a2")}, inv)
    assert finding(right, "a1", "identity").status == "ok"
