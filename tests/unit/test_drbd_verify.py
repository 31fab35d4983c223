"""Online verify and the connection timeouts of a partition, on outputs recorded on the lab
(DRBD 8.4.11, tests/data/drbd/README.md)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.drbd import commands
from harness.drbd.errors import DrbdNotReady, DrbdOutputError
from harness.drbd.replication import DrbdReplication
from harness.drbd.verify import parse_timeouts
from tests.doubles import Answer, FakeClock, FakeRunner, data

SHOW_VERIFY = "drbd/84-drbdsetup-show-defaults-verify-alg.txt"
VERIFYING = "drbd/84-events2-now-primary-verifys.txt"
AFTER = "drbd/84-events2-now-primary-after-verify.txt"
FOUND = "drbd/84-events2-now-primary-verify-found-oos.txt"
STANDALONE = "drbd/84-events2-now-primary-standalone.txt"


def test_the_labs_timeouts_are_read_from_show_defaults() -> None:
    t = parse_timeouts(data(SHOW_VERIFY), "single-az")
    assert (t.ping_int_s, t.ping_timeout_s, t.timeout_s, t.ko_count, t.connect_int_s) == (1.0, 1.0, 6.0, 7, 10.0)
    assert t.verify_alg == "crc32c"
    assert t.silence_tolerated_s == 1.0
    assert t.silence_detected_s == 2.0


def test_drbds_defaults_fill_what_a_plain_show_leaves_out() -> None:
    # `drbdsetup show` prints only non-defaults: ping-int and ping-timeout, no verify-alg
    t = parse_timeouts(data("drbd/84-drbdsetup-show.txt"), "single-az")
    assert (t.ping_int_s, t.ping_timeout_s, t.timeout_s, t.ko_count) == (1.0, 1.0, 6.0, 7)
    assert t.verify_alg == ""


def test_a_resource_not_in_the_output_is_an_error() -> None:
    with pytest.raises(DrbdOutputError, match=r"^resource multi-az is not in the configuration DRBD printed$"):
        parse_timeouts(data(SHOW_VERIFY), "multi-az")


@given(ping_int=st.integers(1, 120), ping_timeout=st.integers(1, 300), timeout=st.integers(1, 600))
def test_detection_is_never_before_tolerance(ping_int: int, ping_timeout: int, timeout: int) -> None:
    text = (
        "resource r {\n    net {\n"
        f"        ping-int {ping_int}; # seconds\n        ping-timeout {ping_timeout}; # 1/10 seconds\n"
        f"        timeout {timeout}; # 1/10 seconds\n    }}\n}}\n"
    )
    t = parse_timeouts(text, "r")
    assert t.silence_tolerated_s == ping_int
    assert t.silence_detected_s == pytest.approx(ping_int + ping_timeout / 10)
    assert t.silence_detected_s > t.silence_tolerated_s


def _node(*states: str, verify_rc: int = 0, verify_err: str = "") -> tuple[FakeRunner, FakeClock]:
    runner = FakeRunner(
        "a1",
        argv={
            tuple(commands.events2_now_argv("single-az")): [Answer(data(name)) for name in states],
            tuple(commands.verify_argv("single-az", 0, 131072)): [Answer("", verify_rc, verify_err)],
        },
    )
    return runner, FakeClock()


def _replication(runner: FakeRunner, clock: FakeClock) -> DrbdReplication:
    return DrbdReplication(runner, "single-az", poll_interval_s=0.5, clock=clock, sleep=clock.sleep)


def test_a_verify_waits_while_drbd_verifies_then_reads_the_count() -> None:
    runner, clock = _node(AFTER, VERIFYING, VERIFYING, AFTER)
    report = _replication(runner, clock).verify(60.0, start_bytes=0, stop_bytes=64 * 2**20)
    assert report.identical and report.out_of_sync_kib == 0
    assert report.duration_s == pytest.approx(1.0)  # two polls of 0.5 s saw VerifyS
    assert "drbdadm -- --start=0 --stop=131072 verify single-az" in runner.calls


def test_blocks_that_differ_are_counted() -> None:
    # a 4 KiB block changed under the secondary's DRBD (recorded: dd onto its backing disk)
    runner, clock = _node(AFTER, FOUND)
    report = _replication(runner, clock).verify(60.0, stop_bytes=64 * 2**20)
    assert not report.identical
    assert report.out_of_sync_kib == 4
    assert "4 KiB out of sync" in report.describe()


def test_a_verify_still_running_at_the_deadline_is_an_error() -> None:
    runner, clock = _node(AFTER, VERIFYING)
    with pytest.raises(DrbdNotReady, match="still running after 3 s"):
        _replication(runner, clock).verify(3.0, stop_bytes=64 * 2**20)


def test_no_verify_of_a_resource_that_is_not_healthy() -> None:
    runner, clock = _node(STANDALONE)
    with pytest.raises(DrbdNotReady, match="no online verify"):
        _replication(runner, clock).verify(60.0, stop_bytes=64 * 2**20)
    assert not any("verify single-az" in call for call in runner.calls)


def test_no_verify_alg_is_a_clear_refusal() -> None:
    # recorded on the lab before the lab configured one (multi-az, DRBD 8.4.11)
    err = "1: State change failed: (-14) Need a verify algorithm to start online verify\n"
    runner, clock = _node(AFTER, verify_rc=11, verify_err=err)
    with pytest.raises(DrbdNotReady, match="no verify-alg"):
        _replication(runner, clock).verify(60.0, stop_bytes=64 * 2**20)


@given(start=st.integers(0, 2**40), length=st.integers(1, 2**30))
def test_the_verify_range_is_whole_sectors_covering_the_bytes(start: int, length: int) -> None:
    argv = commands.verify_argv("r", start // 512, -(-(start + length) // 512))
    s = int(argv[1 + 1].removeprefix("--start="))
    e = int(argv[3].removeprefix("--stop="))
    assert s * 512 <= start and e * 512 >= start + length
    assert not set(argv) & commands.FORBIDDEN_TOKENS


def test_an_empty_range_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        commands.verify_argv("r", 10, 10)
