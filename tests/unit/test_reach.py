"""The replication path's reach probe: recorded pings read into a verdict, and what preflight
and a cell's guard say with it when a replication does not connect."""

from __future__ import annotations

from typing import cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cell.guard import guard_cell
from harness.cell.spec import CellSpec
from harness.drbd.errors import DrbdNotReady
from harness.fio.spec import WorkloadSpec
from harness.probes.reach import PROBE_COUNT, reach_argv, read_reach
from harness.remote import CommandResult
from harness.remote.pool import ConnectionPool
from tests.doubles import LAB, Answer, FakePool, FakeRunner, data, mutations
from tests.unit.reliability.support import finding, lab_node, preflight

A1, A2 = "10.213.1.11", "10.213.1.12"
SILENT = Answer(data("ping/iputils-20210202-reach-silent.txt"), rc=1)


def _result(text: str, rc: int, stderr: str = "") -> CommandResult:
    return CommandResult("a3", "ping", rc, text, stderr, 0.5)


def test_a_live_path_answers_with_its_round_trip() -> None:
    reach = read_reach("a3", "10.213.1.13", "10.213.2.21", _result(data("ping/iputils-20210202-reach-reply.txt"), 0))
    assert reach.answers and (reach.sent, reach.received) == (3, 3)
    assert reach.describe() == "a3 reaches 10.213.2.21 from 10.213.1.13: 3/3 replies, median 2.37 ms"


@pytest.mark.parametrize(
    ("recorded", "why"),
    [
        ("ping/iputils-20210202-reach-silent.txt", "no replies from 10.213.2.99 (3 sent, 0 replies)"),
        ("ping/iputils-20221126-unreachable.txt", "Destination Host Unreachable"),
    ],
)
def test_a_dead_path_says_it_is_the_network(recorded: str, why: str) -> None:
    reach = read_reach("a3", "10.213.1.13", "10.213.2.99", _result(data(recorded), 1))
    assert not reach.answers and why in reach.describe()
    dead = reach.dead_path("multi-az-md")
    assert dead.startswith("the replication path is down: a3 gets no answer from 10.213.2.99")
    assert "multi-az-md cannot connect until the network" in dead


def test_a_ping_that_cannot_run_says_so() -> None:
    # constructed: dash's words when the command is missing
    reach = read_reach("a3", A1, A2, _result("", 127, "sh: 1: ping: not found\n"))
    assert not reach.answers and reach.why == "ping failed: sh: 1: ping: not found"


@given(st.ip_addresses(v=4).map(str), st.ip_addresses(v=4).map(str))
def test_the_probe_pings_from_the_replication_address_a_few_times(dest: str, source: str) -> None:
    argv = reach_argv(dest, source)
    assert argv[0] == "ping" and argv[-1] == dest
    assert argv[argv.index("-I") + 1] == source and argv[argv.index("-c") + 1] == str(PROBE_COUNT)


def test_preflight_names_a_dead_path_as_the_cause_of_an_unconnected_replication() -> None:
    a1 = lab_node("a1", events="drbd/84-events2-now-primary-standalone.txt", reach=SILENT)
    a2 = lab_node("a2")
    report = preflight({"a1": a1, "a2": a2})
    path = finding(report, "single-az (a1)", "replication path")
    assert path in report.blockers and "the replication path is down" in path.detail
    assert mutations(a1, a2) == []


def test_preflight_reads_silence_on_a_connected_replication_as_filtered_icmp() -> None:
    report = preflight({"a1": lab_node("a1", reach=SILENT), "a2": lab_node("a2")})
    path = finding(report, "single-az (a1)", "replication path")
    assert path.status == "warn" and "ICMP is filtered" in path.detail and report.ok


def test_preflight_shows_a_live_path() -> None:
    report = preflight({"a1": lab_node("a1"), "a2": lab_node("a2")})
    path = finding(report, "single-az (a1)", "replication path")
    assert path.status == "ok" and path.detail.startswith(f"a1 reaches {A2} from {A1}: 3/3 replies")


def _guarded(reach: Answer) -> FakeRunner:
    standalone = Answer(data("drbd/84-events2-now-primary-standalone.txt"))
    a1 = lab_node("a1", events="drbd/84-events2-now-primary-standalone.txt", boot_id=Answer("b-a1\n"))
    a1.argv[("drbdsetup", "events2", "--now", "--statistics", "single-az")] = [standalone]
    a1.argv[tuple(reach_argv(A2, A1))] = [reach]
    return a1


@pytest.mark.parametrize(
    ("reach", "said"),
    [
        (SILENT, "the replication path is down: a1 gets no answer from 10.213.1.12"),
        (Answer(data("ping/iputils-20221126-reach-reply.txt")), f"a1 reaches {A2} from {A1}: 3/3 replies"),
    ],
)
def test_a_cell_refused_for_an_unconnected_replication_says_whether_the_path_answers(reach: Answer, said: str) -> None:
    quiet = Answer(data("pressure/no-psi/quiet-before.txt"))  # the validity window's opening
    a1, a2 = _guarded(reach), FakeRunner("a2", batch={"boot_id": Answer("b-a2\n"), "pressure": quiet})
    pool = cast(ConnectionPool, FakePool({"a1": a1, "a2": a2}))
    spec = CellSpec("s", "single-az", WorkloadSpec(name="w", rw="randwrite", size=1 << 20))
    with pytest.raises(DrbdNotReady, match="StandAlone") as info:
        guard_cell(LAB, pool, spec, health_timeout_s=0.0, progress=lambda _m: None)
    assert said in str(info.value)
    assert mutations(a1, a2) == []
