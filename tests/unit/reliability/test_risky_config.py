"""Risky DRBD/cluster configuration is named, and disruptive tests need an explicit opt-in (case 15).

Cases of tests/RELIABILITY_CASES.md, the fault and bad-input map; each test is marked
``reliability_row(N)`` and named ``test_case_NN_*``; select a case with ``-k rowNN``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cell.sysrq import SysrqCrasher
from harness.drbd.audit import AuditPlan, Risk, audit_dump, audit_managers, audit_show
from harness.drbd.errors import DrbdOutputError
from harness.drbd.pacemaker import managed_drbd_resources
from harness.errors import (
    ConfigError,
    RefusedError,
)
from harness.inventory import parse_inventory
from harness.remote import CommandResult
from harness.remote.pool import ConnectionPool
from harness.safety.disruptive import OPTION, opt_in_error, refuse_risky, skip_reason
from harness.safety.preflight import Finding, run_preflight
from tests.doubles import (
    LAB,
    Answer,
    FakePool,
    FakeRunner,
    data,
    mutations,
)
from tests.unit.reliability.support import (
    GUEST_PROCESSES,
    MINI,
    NO_SYSTEMD,
    audit_answers,
    crash_node,
    finding,
    lab_node,
    preflight,
)


@pytest.mark.reliability_row(15)
def test_case_15_production_flag_is_strict() -> None:
    """The inventory flag the disruptive-test opt-in reads is parsed strictly (no YAML 1.1 `on`)."""
    assert parse_inventory(MINI + "production: true\n").production is True
    assert parse_inventory(MINI).production is False
    with pytest.raises(ConfigError, match="production: Input should be a valid boolean"):
        parse_inventory(MINI + "production: on\n")


@pytest.mark.reliability_row(15)
def test_case_15_lab_configuration_is_not_risky() -> None:
    assert audit_show(data("drbd/84-drbdsetup-show.txt"), "single-az", "C") == []
    # recorded on the lab's a1: the real 8.4.11 outputs of what preflight runs
    assert audit_show(data("drbd/84-drbdsetup-show-defaults-lab.txt"), "single-az", "C") == []
    assert audit_dump(data("drbd/84-drbdadm-dump-lab.txt"), "single-az", "C") == []
    assert [r.check for r in audit_show(data("drbd/84-drbdsetup-show-defaults-lab.txt"), "single-az", "B")] == [
        "protocol"
    ]
    # without --show-defaults the kernel omits protocol C: absent means DRBD's default, C
    assert [r.check for r in audit_show(data("drbd/84-drbdsetup-show.txt"), "single-az", "A")] == ["protocol"]
    report = preflight({"a1": lab_node("a1"), "a2": lab_node("a2")})
    assert finding(report, "a1", "config single-az") == Finding(
        "a1", "config single-az", "ok", "no fencing, quorum, automatic split-brain recovery or dual primary"
    )
    assert finding(report, "a2", "cluster manager").detail == "no Pacemaker or drbd-reactor running"


# Recorded on the lab (lab3's a1, 2026-11-25): /etc/drbd.conf's single-az given fencing
# resource-and-stonith, a fence-peer handler, after-sb-0pri discard-zero-changes, after-sb-1pri
# discard-secondary and allow-two-primaries, then `drbdadm adjust` (tests/data/drbd/README.md).
# The inventory is told protocol B: DRBD 8.4 refuses allow-two-primaries without protocol C
# ("Failure: (139) Protocol C required"), so the mismatch is the inventory's.
RISKY = [
    (
        audit_show,
        "drbd/84-drbdsetup-show-defaults-risky-lab.txt",
        "single-az",
        "B",
        [
            "protocol: the resource runs protocol C, the inventory says B",
            "fencing: fencing resource-and-stonith: on losing the peer the primary freezes all I/O",
            "split-brain policy: automatic data loss configured: after-sb-0pri discard-zero-changes",
            "split-brain policy: automatic data loss configured: after-sb-1pri discard-secondary",
            "two primaries: allow-two-primaries yes",
        ],
    ),
    (
        audit_dump,
        "drbd/84-drbdadm-dump-risky-lab.txt",
        "single-az",
        "C",
        [
            "fencing: fencing resource-and-stonith",
            "fence-peer handler: fence-peer /usr/lib/drbd/crm-fence-peer.sh: runs when the peer is lost",
            "split-brain policy: automatic data loss configured: after-sb-0pri discard-zero-changes",
            "split-brain policy: automatic data loss configured: after-sb-1pri discard-secondary",
            "two primaries: allow-two-primaries yes",
        ],
    ),
    (
        audit_show,
        "drbd/9-drbdsetup-show-quorum-constructed.txt",
        "r0",
        "C",
        ["quorum: quorum majority with on-no-quorum io-error: on two nodes a partition leaves neither side"],
    ),
]


@pytest.mark.reliability_row(15)
@pytest.mark.parametrize(
    ("audit", "path", "resource", "protocol", "expected"), RISKY, ids=[Path(r[1]).stem for r in RISKY]
)
def test_case_15_risky_configuration_is_named(
    audit: Callable[[str, str, str], list[Risk]], path: str, resource: str, protocol: str, expected: list[str]
) -> None:
    risks = audit(data(path), resource, protocol)
    assert len(risks) == len(expected)
    for risk, start in zip(risks, expected, strict=True):
        assert str(risk).startswith(start), str(risk)


@pytest.mark.reliability_row(15)
def test_case_15_common_section_counts_unless_the_resource_overrides_it() -> None:
    """`drbdadm dump` of a whole file: settings in `common` apply to the resource."""
    text = (
        "common {\n    net {\n        after-sb-0pri discard-least-changes;\n        protocol A;\n    }\n"
        "    handlers {\n        fence-peer /usr/lib/drbd/crm-fence-peer.9.sh;\n    }\n}\n"
        + data("drbd/84-drbdadm-dump-lab.txt")
    )
    checks = [r.check for r in audit_dump(text, "single-az", "C")]
    assert checks == ["fence-peer handler", "split-brain policy"]  # the resource's protocol C wins


@pytest.mark.reliability_row(15)
def test_case_15_audit_fails_closed() -> None:
    recorded = data("drbd/84-drbdsetup-show.txt")
    assert audit_show(recorded, "multi-az", "C") == [
        Risk("audit", "`drbdsetup show multi-az` does not list multi-az: its running configuration cannot be checked")
    ]
    truncated = audit_show(recorded.rsplit("}", 2)[0], "single-az", "C")
    assert [r.check for r in truncated] == ["audit"] and "never closed" in truncated[0].detail
    plan = AuditPlan({"single-az": "C"})
    answers = {
        **{k: CommandResult("a1", " ".join(v), 0, "", "", 0.0) for k, v in plan.commands().items()},
        # constructed: drbdsetup-84's answer for a resource the kernel does not know
        "audit_show_single_2daz": CommandResult(
            "a1", "drbdsetup show --show-defaults single-az", 10, "", "single-az: Failure: (158) Unknown resource", 0
        ),
        "audit_dump_single_2daz": CommandResult("a1", "", 0, data("drbd/84-drbdadm-dump-lab.txt"), "", 0.0),
    }
    audit = plan.evaluate(answers)
    assert [str(r) for r in audit.resources["single-az"]] == [
        "audit: `drbdsetup show --show-defaults single-az` failed: single-az: Failure: (158) Unknown resource"
    ]


def _result(stdout: str = "", rc: int = 0, stderr: str = "") -> CommandResult:
    return CommandResult("n1", "probe", rc, stdout, stderr, 0.0)


@pytest.mark.reliability_row(15)
def test_case_15_cluster_managers_are_found() -> None:
    no_systemd = _result(rc=NO_SYSTEMD.rc, stderr=NO_SYSTEMD.stderr)
    assert audit_managers(no_systemd, _result(GUEST_PROCESSES)) == []  # the lab
    # systemd: one state per unit, in the order asked (`systemctl is-active pacemaker drbd-reactor`)
    found = audit_managers(_result("active\ninactive\n", rc=3), _result("    1 systemd\n  977 pacemakerd\n"))
    assert [str(r) for r in found] == [
        "cluster manager: unit pacemaker is active: it may manage the resource and react to the fault itself "
        "(promote the peer, fence, restart)"
    ]
    reactor = audit_managers(no_systemd, _result(GUEST_PROCESSES + " 1200 drbd-reactor\n"))
    assert [r.detail.split(":")[0] for r in reactor] == ["process drbd-reactor (pid 1200) is running"]
    blind = audit_managers(no_systemd, _result(rc=127, stderr="sh: 1: ps: not found"))
    assert blind == [Risk("audit", "cannot tell whether Pacemaker or drbd-reactor run here (sh: 1: ps: not found)")]


def _risky_node(name: str) -> FakeRunner:
    """A lab guest whose resource has fencing, a fence-peer handler, discard policies and two
    primaries (the risky show and dump recorded on the lab)."""
    node = lab_node(name)
    node.batch.update(
        audit_answers("drbd/84-drbdsetup-show-defaults-risky-lab.txt", "drbd/84-drbdadm-dump-risky-lab.txt")
    )
    return node


@pytest.mark.reliability_row(15)
def test_case_15_preflight_warns_and_blocks_a_disruptive_run() -> None:
    a1, a2 = _risky_node("a1"), lab_node("a2")
    report = preflight({"a1": a1, "a2": a2})
    config = finding(report, "a1", "config single-az")
    assert config.status == "warn" and "automatic data loss configured" in config.detail
    assert report.ok  # ordinary scenarios run; the risk is in the table
    pool = cast(ConnectionPool, FakePool({"a1": _risky_node("a1"), "a2": lab_node("a2")}))
    disruptive = run_preflight(LAB, pool, pairs=["single-az"], disruptive=True)
    assert finding(disruptive, "a1", "config single-az").status == "BLOCK" and not disruptive.ok
    assert finding(disruptive, "a2", "config single-az").status == "ok"
    assert mutations(a1, a2) == []


PROD = "name: prod-db\nproduction: true\n" + MINI.split("\n", 1)[1]


@pytest.mark.reliability_row(15)
@pytest.mark.parametrize(
    ("inventory", "value", "expected"),
    [
        (MINI, None, f"which is not the embedded lab; enable with {OPTION}"),
        (MINI, "", None),
        (MINI, "mini", None),
        (PROD, None, f"marked production: true; confirm by naming it: {OPTION}=prod-db"),
        (PROD, "", f"marked production: true; confirm by naming it: {OPTION}=prod-db"),
        (PROD, "prod-db", None),
    ],
    ids=["plain-no-flag", "plain-flag", "plain-named", "prod-no-flag", "prod-bare-flag", "prod-named"],
)
def test_case_15_disruptive_tests_need_an_explicit_opt_in(inventory: str, value: str | None, expected: str) -> None:
    reason = skip_reason(parse_inventory(inventory), value)
    assert (reason is None) if expected is None else (reason is not None and reason.endswith(expected))
    assert skip_reason(LAB, None) is None  # the embedded lab needs no opt-in


@pytest.mark.reliability_row(15)
@given(st.from_regex(r"\A[A-Za-z0-9_.-]{1,64}\Z"))
def test_case_15_no_other_name_reaches_production(name: str) -> None:
    prod = parse_inventory(PROD)
    if name == "prod-db":
        assert skip_reason(prod, name) is None and opt_in_error(prod, name) is None
    else:
        error = opt_in_error(prod, name)
        assert error is not None and f"{OPTION}=prod-db" in error  # the whole run stops
        assert skip_reason(prod, name) is not None


@pytest.mark.reliability_row(15)
def test_case_15_risky_configuration_refuses_a_disruptive_test_before_any_change() -> None:
    a1, a2 = lab_node("a1"), _risky_node("a2")
    with pytest.raises(RefusedError, match=r"pair single-az: refusing a disruptive test .* before any change") as info:
        refuse_risky(LAB, cast(ConnectionPool, FakePool({"a1": a1, "a2": a2})), "single-az")
    assert "a2: fence-peer handler: fence-peer /usr/lib/drbd/crm-fence-peer.sh" in str(info.value)
    assert "a1:" not in str(info.value) and info.value.exit_code == 3
    assert mutations(a1, a2) == []
    refuse_risky(LAB, cast(ConnectionPool, FakePool({"a1": lab_node("a1"), "a2": lab_node("a2")})), "single-az")


@pytest.mark.reliability_row(15)
@pytest.mark.parametrize(
    ("changes", "refusal"),
    [
        ({"panic": "0"}, "kernel.panic = 0 and no crash kernel (kdump) loaded"),
        ({"trigger": ""}, "/proc/sysrq-trigger is missing or not writable"),
        ({"panic": "?"}, "cannot read kernel.panic"),
    ],
    ids=["would-hang", "no-sysrq", "unknown-panic"],
)
def test_case_15_sysrq_crash_refuses_a_node_that_would_not_come_back(changes: dict[str, str], refusal: str) -> None:
    node = crash_node("a1", **changes)
    crasher = SysrqCrasher(cast(ConnectionPool, FakePool({"a1": node})), LAB.pairs["single-az"], sleep=lambda _s: None)
    with pytest.raises(RefusedError, match=re.escape(refusal)):
        crasher.crash("a1")  # crash() checks first when prepare() was not called
    assert not any("sysrq-trigger" in c and "echo c" in c for c in node.calls)


@pytest.mark.reliability_row(15)
def test_case_15_sysrq_crash_is_a_detached_kernel_panic() -> None:
    pool = FakePool({"a1": crash_node("a1"), "a2": crash_node("a2", panic="0", kexec="1")})
    crasher = SysrqCrasher(cast(ConnectionPool, pool), LAB.pairs["single-az"], sleep=lambda _s: None)
    crasher.prepare("a2")  # kdump loaded: it reboots after saving the dump
    crasher.crash("a1")
    sent = cast(FakeRunner, pool.nodes["a1"]).calls[-1]
    assert sent == "setsid sh -c 'sleep 1; echo c > /proc/sysrq-trigger' </dev/null >/dev/null 2>&1 &"
    assert pool.resets == ["a1"]  # the streams reading from the dead node end


def _pacemaker_node(name: str, cib: CommandResult | None) -> FakeRunner:
    """A lab guest where pacemakerd runs; ``cib`` answers `cibadmin --query --scope resources`."""
    node = lab_node(name)
    node.batch["audit_processes"] = Answer(GUEST_PROCESSES + "  977 pacemakerd\n")
    if cib is not None:
        node.batch["audit_cib"] = Answer(cib.stdout, rc=cib.exit_code, stderr=cib.stderr)
    return node


@pytest.mark.reliability_row(15)
def test_case_15_pacemaker_is_judged_per_resource() -> None:
    """Pacemaker running flags only the DRBD resources its CIB manages (public CIB sample)."""
    cib = data("pacemaker/cfs-resources.xml")
    assert managed_drbd_resources(cib) == {"wwwdata": "primitive WebData in clone WebData-clone"}
    # the CIB as the whole document `cibadmin --query` prints reads the same
    assert managed_drbd_resources(f"<cib><configuration>{cib}</configuration></cib>") == {
        "wwwdata": "primitive WebData in clone WebData-clone"
    }
    # the sample's cluster managing the pair under test: the lab's single-az under another name
    managing = cib.replace('value="wwwdata"', 'value="single-az"')
    report = preflight({"a1": _pacemaker_node("a1", _result(managing)), "a2": lab_node("a2")})
    config = finding(report, "a1", "config single-az")
    assert config.status == "warn"
    assert config.detail.startswith(
        "cluster manager: Pacemaker manages single-az (primitive WebData in clone WebData-clone"
    )
    assert finding(report, "a1", "cluster manager").status == "ok"  # the risk is the resource's, not the node's
    # the sample as published: Pacemaker runs but manages wwwdata only; single-az is not flagged for it
    report = preflight({"a1": _pacemaker_node("a1", _result(cib)), "a2": lab_node("a2")})
    assert finding(report, "a1", "config single-az").status == "ok"
    manager = finding(report, "a1", "cluster manager")
    assert manager.status == "ok" and "manages wwwdata, not single-az" in manager.detail
    # a CIB that cannot be read fails closed: the node-wide risk stays, saying why
    blind = _result(rc=102, stderr="Could not connect to the CIB: Transport endpoint is not connected")
    report = preflight({"a1": _pacemaker_node("a1", blind), "a2": lab_node("a2")})
    manager = finding(report, "a1", "cluster manager")
    assert manager.status == "warn" and "cannot be read (Could not connect to the CIB" in manager.detail
    # a disruptive run blocks on the managed resource
    pool = cast(ConnectionPool, FakePool({"a1": _pacemaker_node("a1", _result(managing)), "a2": lab_node("a2")}))
    assert finding(run_preflight(LAB, pool, pairs=["single-az"], disruptive=True), "a1", "config single-az").status == (
        "BLOCK"
    )


@pytest.mark.reliability_row(15)
@pytest.mark.parametrize(
    "bad",
    [
        "<resources><primitive",
        '<!DOCTYPE r [<!ENTITY a "a">]><resources/>',
        "<cib><status/></cib>",
        '<resources><primitive id="d" class="ocf" provider="linbit" type="drbd"/></resources>',
    ],
    ids=["truncated", "entities", "no-resources", "no-drbd_resource"],
)
def test_case_15_an_unreadable_cib_is_an_error_not_an_empty_answer(bad: str) -> None:
    with pytest.raises(DrbdOutputError):
        managed_drbd_resources(bad)


@pytest.mark.reliability_row(15)
def test_case_15_a_template_supplies_the_drbd_agent() -> None:
    # the sample's DRBD primitive rewritten to take its agent from a <template> (Pacemaker's
    # resource templates): still found
    cib = data("pacemaker/cfs-resources.xml").replace(
        '<primitive class="ocf" id="WebData" provider="linbit" type="drbd">',
        '<primitive id="WebData" template="t-drbd">',
    )
    cib = cib.replace("<resources>", '<resources>\n  <template id="t-drbd" class="ocf" provider="linbit" type="drbd"/>')
    assert managed_drbd_resources(cib) == {"wwwdata": "primitive WebData in clone WebData-clone"}
