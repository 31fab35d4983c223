"""DRBD behind the replication seam (harness.drbd.replication, harness.replication).

The nodes are the shared doubles (tests/doubles.py): they replay outputs recorded in the lab
(tests/data/drbd) and never make DRBD output up.  The event watch is tests/unit/test_drbd_watch.py.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from harness.drbd.errors import DrbdNotReady, DrbdOutputError
from harness.drbd.fold import resource_from_events2
from harness.drbd.replication import DrbdReplication
from harness.drbd.state import Connection, ResourceState
from harness.errors import CommandTimeout, ConfigError, ConnectionLost, RefusedError
from harness.remote import CommandResult
from harness.replication import Replication, read_backing_devices, read_product_version, replication_for
from tests.doubles import LAB, ONELINERS, Answer, FakeClock, FakeRunner, data, recorded_replication

RES = "single-az"
EVENTS_NOW = ("drbdsetup", "events2", "--now", "--statistics", RES)


def read(name: str) -> str:
    return data(f"drbd/{name}")


def events_node(*files: str) -> FakeRunner:
    return FakeRunner("a1", argv={EVENTS_NOW: [Answer(read(f)) for f in files]})


# -- the factory -------------------------------------------------------------------------------
def test_the_factory_gives_each_side_of_a_pair_its_replicated_device() -> None:
    pair = LAB.pairs["single-az"]
    primary: Replication = replication_for(pair, FakeRunner("a1"))
    secondary = replication_for(pair, FakeRunner("a2"))
    assert (primary.node, primary.resource, primary.device) == ("a1", "single-az", "/dev/drbd0")
    assert secondary.node == "a2"
    with pytest.raises(ConfigError, match="in no side of the pair"):
        replication_for(pair, FakeRunner("b1"))


def test_node_wide_probes_read_recorded_output() -> None:
    assert read_product_version(read("84-proc-drbd-connected.txt")) == "8.4.11"
    assert read_product_version("") == "unknown"
    assert read_backing_devices(f"{ONELINERS[1]}\n\n") == ["/dev/ubda"]


# -- state -------------------------------------------------------------------------------------
def test_state_and_healthy() -> None:
    replication = recorded_replication(events_node("84-events2-now-primary-connected.txt"))
    state = replication.state()
    assert state.describe() == "Connected UpToDate/UpToDate Primary/Secondary"
    assert state.words == ("Connected", "UpToDate/UpToDate", "Primary/Secondary")
    assert state.connected
    assert replication.healthy()
    assert replication.node == "a1"


def test_state_probe_and_reader_ride_in_a_callers_round_trip() -> None:
    replication = recorded_replication(FakeRunner("a1"))
    assert tuple(replication.state_probe()) == EVENTS_NOW
    state = replication.read_state(read("84-events2-now-primary-standalone.txt"))
    assert state is not None and not state.connected and not state.healthy
    assert replication.read_state(read("9-events2-no-resources.txt")) is None


def test_unknown_resource() -> None:
    replication = recorded_replication(events_node("9-events2-no-resources.txt"))
    with pytest.raises(DrbdNotReady, match="a1: DRBD resource single-az is not configured"):
        replication.state()
    assert not replication.healthy()


def test_wait_healthy_polls_until_healthy() -> None:
    clock = FakeClock()
    node = events_node(
        "84-events2-now-primary-standalone.txt",
        "84-events2-now-primary-syncsource.txt",
        "84-events2-now-primary-connected.txt",
    )
    state = recorded_replication(node, clock=clock).wait_healthy(30)
    assert state.healthy
    assert len(node.calls) == 3
    # the pauses start short and double towards the poll interval (harness.remote.polling)
    assert clock.sleeps == [0.05, 0.1]


def test_wait_healthy_deadline_names_node_resource_and_last_state() -> None:
    clock = FakeClock()
    node = events_node("84-events2-now-primary-syncsource.txt")
    with pytest.raises(DrbdNotReady) as info:
        recorded_replication(node, clock=clock).wait_healthy(5)
    assert str(info.value) == (
        "a1: DRBD resource single-az not healthy after 5 s; last state: SyncSource UpToDate/Inconsistent "
        "Primary/Secondary out-of-sync:306980KiB (replication to peer volume 0 is SyncSource; "
        "peer disk of peer volume 0 is Inconsistent)"
    )
    assert info.value.exit_code == 3
    assert clock.now == pytest.approx(1005.0)
    assert all(t <= 30 for t in node.timeouts)


def test_wait_healthy_on_standalone_explains_it_does_not_heal() -> None:
    with pytest.raises(DrbdNotReady, match=r"StandAlone does not reconnect by itself.*drbdadm connect single-az"):
        recorded_replication(events_node("84-events2-now-primary-standalone.txt")).wait_healthy(2)


def test_wait_healthy_with_out_of_sync_baseline() -> None:
    node = FakeRunner(
        "a1",
        argv={
            ("drbdsetup", "events2", "--now", "--statistics", "some-resource"): [
                Answer(read("9-events2-create-change-statistics.txt"))
            ]
        },
    )
    replication = recorded_replication(node, "some-resource")
    assert replication.wait_healthy(1).out_of_sync_kib == 25
    with pytest.raises(DrbdNotReady, match="out-of-sync 25 KiB > 0 KiB"):
        replication.wait_healthy(1, max_out_of_sync_kib=0)


def test_wait_healthy_retries_failed_probes() -> None:
    timeout = CommandTimeout("a1", "drbdsetup events2 --now --statistics single-az", 30)
    node = FakeRunner("a1", argv={EVENTS_NOW: [timeout, Answer(read("84-events2-now-primary-connected.txt"))]})
    assert recorded_replication(node).wait_healthy(10).healthy


def test_wait_healthy_reports_the_last_probe_error() -> None:
    # The message drbdsetup prints without the kernel module.
    node = FakeRunner("a1", argv={EVENTS_NOW: [Answer(rc=20, stderr="Failed to modprobe drbd")]})
    with pytest.raises(DrbdNotReady, match=r"last probe failed: .*Failed to modprobe drbd"):
        recorded_replication(node).wait_healthy(3)


def test_wait_healthy_does_not_retry_a_lost_connection() -> None:
    node = FakeRunner("a1", argv={EVENTS_NOW: [ConnectionLost("a1", "reset by peer")]})
    with pytest.raises(ConnectionLost):
        recorded_replication(node).wait_healthy(60)
    assert len(node.calls) == 1


def test_split_brain_fails_at_once() -> None:
    healthy = resource_from_events2(read("84-events2-now-primary-connected.txt"), RES)
    assert healthy is not None
    split = replace(healthy, connections=(Connection(0, "peer", "StandAlone", sync_state="SplitBrain"),))

    class SplitBrained(DrbdReplication):
        def state(self, *, timeout: float | None = None) -> ResourceState:
            return split

    clock = FakeClock()
    with pytest.raises(DrbdNotReady, match=r"split brain.*does not resolve it"):
        SplitBrained(FakeRunner("a1"), RES, clock=clock, sleep=clock.sleep).wait_healthy(300)
    assert clock.sleeps == []


# -- devices, versions, roles ------------------------------------------------------------------
def test_device_resolution_and_safety() -> None:
    node = FakeRunner(
        "a1",
        argv={
            ("drbdadm", "sh-dev", RES): [Answer(ONELINERS[0] + "\n")],
            ("drbdadm", "sh-ll-dev", RES): [Answer(ONELINERS[1] + "\n")],
        },
    )
    assert DrbdReplication(node, RES).device == "/dev/drbd0"
    assert recorded_replication(node).resolve_device() == "/dev/drbd0"
    assert recorded_replication(node).backing_device() == "/dev/ubda"
    with pytest.raises(RefusedError, match="inventory says /dev/drbd1"):
        recorded_replication(node, device="/dev/drbd1").resolve_device()
    bad = FakeRunner("a1", argv={("drbdadm", "sh-dev", RES): [Answer(ONELINERS[1] + "\n")]})
    with pytest.raises(DrbdOutputError, match="not /dev/drbdN"):
        DrbdReplication(bad, RES).resolve_device()


def test_identity_probes_name_the_device_and_what_backs_it() -> None:
    replication = recorded_replication(FakeRunner("a1"))
    probes = replication.identity_probes()
    assert sorted(map(tuple, probes.values())) == [("drbdadm", "sh-dev", RES), ("drbdadm", "sh-ll-dev", RES)]

    def result(argv: list[str], answer: Answer) -> CommandResult:
        return CommandResult("a1", " ".join(argv), answer.rc, answer.stdout, answer.stderr, 0.0)

    answers = [Answer(ONELINERS[0] + "\n"), Answer(ONELINERS[1] + "\n")]
    results = {name: result(argv, a) for (name, argv), a in zip(probes.items(), answers, strict=True)}
    assert replication.read_identity(results) == ("/dev/drbd0", ("/dev/ubda",))
    unknown = [Answer(rc=10, stderr="'single-az' not defined"), Answer(rc=10)]
    results = {name: result(argv, a) for (name, argv), a in zip(probes.items(), unknown, strict=True)}
    assert replication.read_identity(results) == (None, ())


@pytest.mark.parametrize("device", ["/dev/vda", "/dev/drbd0;reboot", "drbd0", "/dev/drbd/by-res/r0/0"])
def test_inventory_device_must_be_a_drbd_minor(device: str) -> None:
    with pytest.raises(ConfigError):
        recorded_replication(FakeRunner("a1"), device=device)


def test_version_and_show() -> None:
    node = FakeRunner(
        "a1",
        argv={
            ("drbdadm", "--version"): [Answer("\n".join(ONELINERS[5:8]) + "\n")],
            ("drbdsetup", "show", RES): [Answer(read("84-drbdsetup-show.txt"))],
        },
    )
    replication = recorded_replication(node)
    assert replication.version().kernel == "8.4.11"
    assert "10.213.1.12:7789" in replication.show()


def test_promote_and_demote_check_the_role() -> None:
    node = FakeRunner(
        "a1",
        argv={
            ("drbdadm", "primary", RES): [Answer()],
            ("drbdadm", "secondary", RES): [Answer()],
            EVENTS_NOW: [
                Answer(read("84-events2-now-primary-connected.txt")),
                Answer(read("84-events2-now-primary-connected.txt")),
                Answer(read("84-events2-now-secondary-connected.txt")),
            ],
        },
    )
    replication = recorded_replication(node)
    assert replication.promote().role == "Primary"
    with pytest.raises(DrbdNotReady, match="is Primary, expected Secondary"):
        replication.demote()
    assert replication.demote().role == "Secondary"
    assert "drbdadm primary single-az" in node.calls
    assert not node.ran("--force")
    # a role change may take a while on a busy node: it gets a longer deadline than a query
    assert node.timeouts[node.calls.index("drbdadm primary single-az")] == 60


def test_connection_changes_run_only_the_plain_commands() -> None:
    node = FakeRunner("a1", argv={("drbdadm", c, RES): [Answer()] for c in ("disconnect", "connect", "down", "up")})
    replication = recorded_replication(node)
    replication.disconnect()
    replication.connect()
    replication.down()
    replication.up()
    assert node.calls == [f"drbdadm {c} single-az" for c in ("disconnect", "connect", "down", "up")]


def test_ensure_up_brings_up_only_an_unconfigured_resource() -> None:
    configured = events_node("84-events2-now-secondary-connected.txt")
    recorded_replication(configured).ensure_up()
    assert configured.calls == ["drbdsetup events2 --now --statistics single-az"]
    after_boot = FakeRunner(
        "a1",
        argv={EVENTS_NOW: [Answer(read("9-events2-no-resources.txt"))], ("drbdadm", "up", RES): [Answer()]},
    )
    recorded_replication(after_boot).ensure_up()
    assert after_boot.calls[-1] == "drbdadm up single-az"
