"""md-nbd (md RAID1 over NBD, SIOS DataKeeper's architecture): the state read from outputs
recorded on the lab (tests/data/mdnbd/README.md), the watcher's verdicts and the command
builders' refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cell.measure import _check_still_alone
from harness.cell.spec import CellSpec
from harness.errors import ConfigError, InfraError
from harness.fio.workloads import write_job
from harness.mdnbd import commands
from harness.mdnbd.replication import MdNbdEnds, MdNbdReplication
from harness.mdnbd.state import MdNbdOutputError, parse_state
from harness.mdnbd.watch import MdNbdWatch
from tests.doubles import FakeRunner

DATA = Path(__file__).resolve().parents[1] / "data" / "mdnbd"


def _read(name: str) -> str:
    return (DATA / name).read_text()


def test_a_clean_primary_and_its_connected_export_are_healthy() -> None:
    primary = parse_state(_read("primary-clean.txt"))
    assert primary.role == "Primary" and primary.healthy and primary.connected
    assert primary.words == ("Connected", "InSync/InSync", "Primary")
    assert primary.remote_leg is not None and primary.remote_leg.name == "nbd0"
    assert primary.write_behind == 0
    secondary = parse_state(_read("secondary-exporting.txt"))
    assert secondary.role == "Secondary" and secondary.healthy and secondary.export_peers == 1


def test_a_timed_out_nbd_leg_is_a_degraded_array_naming_the_leg() -> None:
    status = parse_state(_read("primary-degraded-nbd-timeout.txt"))
    assert not status.healthy and not status.connected
    problems = " ".join(status.problems())
    assert "degraded" in problems and "leg nbd0 is faulty" in problems
    assert status.words[0] == "Degraded"


def test_a_disconnected_pair_has_no_nbd_leg_and_an_idle_export() -> None:
    primary = parse_state(_read("primary-disconnected.txt"))
    assert not primary.healthy and "no NBD leg in the array" in primary.problems()
    secondary = parse_state(_read("secondary-listening.txt"))
    assert not secondary.healthy and secondary.exporting
    assert secondary.problems() == ("no primary is connected to the export",)
    assert secondary.words[0] == "Listening"


def test_a_bitmap_recovery_reports_what_is_left_to_copy() -> None:
    status = parse_state(_read("primary-recovering.txt"))
    assert status.sync_action == "recover" and not status.healthy
    assert status.connected  # the leg is back, as a spare being rebuilt
    assert status.sync_total_sectors is not None and status.sync_done_sectors is not None
    assert status.out_of_sync_kib == (status.sync_total_sectors - status.sync_done_sectors) // 2 > 0
    assert status.words[0] == "Recover"


def test_a_running_check_is_not_healthy_but_copies_nothing() -> None:
    status = parse_state(_read("primary-checking.txt"))
    assert status.sync_action == "check" and status.out_of_sync_kib == 0
    assert any("check" in p for p in status.problems())


def test_an_asynchronous_array_shows_its_write_behind() -> None:
    status = parse_state(_read("primary-async-clean.txt"))
    assert status.healthy and status.write_behind == 256
    leg = status.remote_leg
    assert leg is not None and "write_mostly" in leg.states and leg.in_sync


def test_output_without_the_probe_s_lines_is_refused() -> None:
    with pytest.raises(MdNbdOutputError, match="no array line"):
        parse_state("bash: mdadm: command not found\n")
    with pytest.raises(MdNbdOutputError, match="not a number"):
        parse_state("array=/dev/md127\ndegraded=x\n")


@given(done=st.integers(0, 2**40), extra=st.integers(0, 2**40))
def test_what_is_left_never_goes_negative(done: int, extra: int) -> None:
    total = done + extra
    text = f"array=/dev/md1\nsync_action=recover\nsync_completed={done} / {total}\n"
    assert parse_state(text).out_of_sync_kib == extra // 2


def test_the_watcher_judges_every_sample_and_its_own_end() -> None:
    watch = MdNbdWatch.plan("a1", "mnb", commands.state_script("mnb", 10809), "run1", "cell", max_duration_s=30)
    clean, degraded = _read("primary-clean.txt"), _read("primary-degraded-nbd-timeout.txt")
    assert watch.judge(f"mdnbd-watch-alive=1\n--sample--\n{clean}").valid
    verdict = watch.judge(f"mdnbd-watch-alive=1\n--sample--\n{clean}\n--sample--\n{degraded}")
    assert not verdict.valid and "nbd0 is faulty" in verdict.reason
    assert "exited before the window ended" in watch.judge(f"mdnbd-watch-alive=0\n--sample--\n{clean}").reason
    assert not watch.judge("mdnbd-watch-alive=1\n").valid


@given(name=st.text(min_size=1, max_size=40))
def test_only_plain_array_names_reach_a_shell(name: str) -> None:
    ok = name[0].isascii() and name[0].isalnum() and all(c.isascii() and (c.isalnum() or c in "_.-") for c in name)
    if ok and len(name) <= 32:
        assert commands.array_device(name) == f"/dev/md/{name}"
    else:
        with pytest.raises(ConfigError):
            commands.state_script(name, 10809)


def test_builders_refuse_what_is_not_a_device_or_an_address() -> None:
    with pytest.raises(ConfigError):
        commands.connect_leg_script("mnb", "/dev/sda", "10.0.0.1", 10809, 5)
    with pytest.raises(ConfigError):
        commands.export_script("mnb", "/dev/../etc/passwd", "10.0.0.1", 10809)
    with pytest.raises(ConfigError):
        commands.export_script("mnb", "/dev/ubdc", "10.0.0.1; reboot", 10809)


def test_md_nbd_has_no_protocol_b() -> None:
    ends = MdNbdEnds("/dev/ubdd", "/dev/nbd0", "10.0.0.1", "10.0.0.2", 10809)
    with pytest.raises(ConfigError, match="not protocol 'B'"):
        MdNbdReplication(object(), "mnb", ends, protocol="B")  # type: ignore[arg-type]


def test_a_stopped_array_left_behind_is_not_assembled_and_the_export_asks_after_its_peer() -> None:
    # recorded on the secondary just after demote: md127 lingers, inactive ("clear")
    status = parse_state(_read("secondary-after-demote-stale-md.txt"))
    assert not status.assembled and status.role == "Secondary"
    assert status.peer_up is True and status.healthy


def test_a_secondary_whose_primary_stopped_answering_is_not_connected() -> None:
    gone = parse_state(_read("secondary-exporting.txt") + "peer=down\n")
    assert not gone.connected and not gone.healthy
    assert gone.problems() == ("the primary connected to the export does not answer",)


def test_a_degraded_array_counts_what_the_missing_leg_lacks_in_bitmap_chunks() -> None:
    # recorded: the leg taken out, 100 MiB written; the bitmap of a fresh --assume-clean array
    # still had all 32 chunks of 64 MiB dirty (md clears bits only while both legs run)
    status = parse_state(_read("primary-disconnected-dirty.txt"))
    assert status.degraded and status.bitmap_dirty == 32 and status.bitmap_chunk_bytes == 64 << 20
    assert status.out_of_sync_kib == 32 * 64 * 1024
    assert parse_state(_read("primary-clean.txt")).out_of_sync_kib == 0


def test_a_leg_taken_out_on_request_says_so() -> None:
    status = parse_state("standalone=1\n" + _read("primary-disconnected.txt"))
    assert status.standalone and "the NBD leg was disconnected on request" in status.problems()


@given(asynchronous=st.booleans(), backlog=st.integers(1, 16383))
def test_the_write_mode_switch_keeps_reads_local_and_sets_only_the_backlog_per_mode(
    asynchronous: bool, backlog: int
) -> None:
    script = commands.write_mode_script("mnb", "/dev/nbd0", asynchronous=asynchronous, write_behind=backlog)
    # no backlog without a write-mostly member (EINVAL): the flags come first
    assert script.index('for d in "$b"/dev-*') < script.index('> "$b/bitmap/backlog"')
    assert f'echo {backlog if asynchronous else 0} > "$b/bitmap/backlog"' in script
    assert '= nbd0 ]; then echo writemostly > "$d/state"' in script  # either mode: reads stay local
    assert 'else echo -writemostly > "$d/state"' in script  # a local leg is never write-mostly


def test_a_disconnected_cell_whose_leg_came_back_is_refused() -> None:

    ends = MdNbdEnds("/dev/ubdd", "/dev/nbd0", "10.0.0.1", "10.0.0.2", 10809)
    replication = MdNbdReplication(FakeRunner("a1"), "mnb", ends)
    spec = CellSpec("calibration", "single-az-md-nbd", write_job("randwrite", 4096), mode="disconnected")
    _check_still_alone(spec, replication, _read("primary-disconnected.txt"))
    _check_still_alone(spec, replication, _read("primary-disconnected-dirty.txt"))
    with pytest.raises(InfraError, match=r"a1's mnb was connected to its peer again when fio ended .*Connected"):
        _check_still_alone(spec, replication, _read("primary-clean.txt"))


def test_the_keeper_and_a_disconnect_take_the_same_leg_lock() -> None:
    keeper = commands.keeper_script("mnb", "/dev/nbd0", "10.0.0.2", 10809, 5)
    cut = commands.disconnect_leg_script("mnb", "/dev/nbd0")
    lock = "9>/run/harness-mdnbd/mnb.lock"
    assert lock in keeper and lock in cut
    # the keeper looks at the flag and reconnects inside the lock, the disconnect sets the
    # flag and fails the leg inside it
    held = keeper.split("( flock 9 || exit 1; ", 1)[1].split(f" ) {lock}", 1)[0]
    assert "mnb.standalone" in held and "nbd-client 10.0.0.2" in held
    held = cut.split("( flock 9 || exit 1; ", 1)[1].split(f" ) {lock}", 1)[0]
    assert held.startswith("touch /run/harness-mdnbd/mnb.standalone") and "--fail /dev/nbd0" in held
