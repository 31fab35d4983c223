"""The replay transport (harness.remote.replay): the real DRBD seam runs over a node that is a
recording, and any command the recording lacks fails naming it; a session captured from real
commands replays to the same answers.  The DRBD recording is the embedded
lab's a1 on DRBD 8.4.11 (tests/data/replay/README.md: each output is a real capture kept under
tests/data/drbd, with its command and state in that directory's README)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.drbd.replication import DrbdReplication
from harness.drbd.state import ResourceState
from harness.errors import CommandFailed, ConfigError
from harness.remote import Runner, polling
from harness.remote.recorder import Capture
from harness.remote.replay import Recorded, Recording, ReplayMissing, ReplayPool, matchable
from harness.remote.replayclock import ReplayClock
from harness.replication import replication_for
from tests.doubles import DATA, LAB, LocalRunner

RECORDING = DATA / "replay" / "84-a1-single-az.json"


def _a1() -> tuple[Recording, Runner]:
    recording = Recording.load(RECORDING)
    return recording, recording.node("a1")


def test_the_drbd_seam_reads_the_session_as_it_was() -> None:
    recording, a1 = _a1()
    replication = replication_for(LAB.pairs["single-az"], a1, nodes=LAB.nodes)
    assert isinstance(replication, DrbdReplication)  # the seam picks DRBD for the lab pair
    state = replication.state()
    assert isinstance(state, ResourceState)
    assert (state.role, state.healthy) == ("Primary", True)
    timeouts = replication.timeouts()
    assert (timeouts.ping_int_s, timeouts.ping_timeout_s) == (1.0, 1.0)
    assert f"{replication.generations().current:016X}" == "C446E4D35A37505B"
    assert recording.unused() == ["a1: drbdsetup show multi-az"]


def test_a_command_the_recording_lacks_fails_naming_it() -> None:
    _, a1 = _a1()
    replication = replication_for(LAB.pairs["single-az"], a1, nodes=LAB.nodes)
    with pytest.raises(ReplayMissing) as info:
        replication.disconnect()
    assert str(info.value) == "a1: the recording has no answer to `drbdadm disconnect single-az`"
    # a node the session never reached has no answers at all
    with pytest.raises(ReplayMissing, match=r"^a2: the recording has no answer to `drbdadm get-gi single-az`$"):
        Recording.load(RECORDING).node("a2").run(["drbdadm", "get-gi", "single-az"], timeout=10)


def test_an_answer_is_served_as_often_as_it_was_recorded() -> None:
    _, a1 = _a1()
    argv = ["drbdadm", "get-gi", "single-az"]
    assert a1.run(argv, timeout=10).stdout.startswith("C446E4D35A37505B:")
    with pytest.raises(ReplayMissing) as info:
        a1.run(argv, timeout=10)
    assert str(info.value) == "a1: `drbdadm get-gi single-az` was recorded once and is asked once more"


def test_a_recorded_failure_fails_as_it_did() -> None:
    argv = ["drbdsetup", "show", "multi-az"]
    with pytest.raises(CommandFailed) as info:
        _a1()[1].run(argv, timeout=10)
    assert str(info.value).startswith("a1: `drbdsetup show multi-az` exited 20: received netlink error reply")
    result = _a1()[1].run(argv, timeout=10, check=False)
    assert (result.exit_code, result.stdout) == (20, "")
    assert result.stderr == "received netlink error reply: No such device\n"
    assert result.duration_s == 0.0  # the capture was not timed


def _bad(tmp_path: Path, entry: dict[str, object]) -> str:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"format": 1, "commands": [entry]}))
    with pytest.raises(ConfigError) as info:
        Recording.load(path)
    return str(info.value)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"argv": ["true"], "exit_code": 0}, "commands[0]: node must be a node name"),
        ({"node": "a1", "exit_code": 0}, "commands[0]: give argv (a list of words) or script (a string), one of them"),
        ({"node": "a1", "argv": [], "exit_code": 0}, "commands[0]: argv must be a non-empty list of strings"),
        ({"node": "a1", "argv": ["true"], "exit_code": 256}, "commands[0]: exit_code must be a whole number 0..255"),
        ({"node": "a1", "argv": ["true"], "exit_code": 0, "duration_s": -1}, "duration_s must be a number of seconds"),
        ({"node": "a1", "argv": ["true"], "exit_code": 0, "stdout": "", "stdout_file": "x"}, "stdout or stdout_file"),
    ],
)
def test_a_bad_recording_is_one_line_naming_the_file_and_entry(
    tmp_path: Path, entry: dict[str, object], message: str
) -> None:
    text = _bad(tmp_path, entry)
    assert text.startswith(f"{tmp_path / 'r.json'}: ") and message in text and "\n" not in text


def test_a_file_that_is_no_recording_says_so(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"commands": []}')
    with pytest.raises(ConfigError, match=r"expected a recording of format 1"):
        Recording.load(path)
    path.write_text("{")
    with pytest.raises(ConfigError, match=r"not a JSON recording"):
        Recording.load(path)


def test_a_captured_session_replays_to_the_same_results(tmp_path: Path) -> None:
    """Real commands on this machine, captured, written, and replayed: the same answers, the
    same failure, and what was asked once is answered once."""
    capture = Capture()
    live = capture.node(LocalRunner("n1"))
    asked = [["uname", "-s"], ["sh", "-c", "printf 'out'; printf 'err' >&2; exit 3"]]
    first = live.run(asked[0], timeout=10)
    with pytest.raises(CommandFailed):
        live.run(asked[1], timeout=10)
    second = live.run(asked[1], timeout=10, check=False)
    script = live.run_script("echo $((6 * 7))", timeout=10)
    capture.write(tmp_path / "session.json")

    node = Recording.load(tmp_path / "session.json").node("n1")
    assert node.run(asked[0], timeout=10).stdout == first.stdout
    with pytest.raises(CommandFailed) as info:
        node.run(asked[1], timeout=10)
    assert info.value.result.exit_code == 3
    again = node.run(asked[1], timeout=10, check=False)
    assert (again.exit_code, again.stdout, again.stderr) == (second.exit_code, "out", "err") == (3, "out", "err")
    assert node.run_script("echo $((6 * 7))", timeout=10).stdout == script.stdout == "42\n"
    with pytest.raises(ReplayMissing, match=r"^n1: `uname -s` was recorded once and is asked once more$"):
        node.run(asked[0], timeout=10)


def test_a_pool_of_replayed_nodes_stands_in_for_the_inventorys() -> None:
    recording = Recording.load(RECORDING)
    pool = ReplayPool(recording, sorted(LAB.nodes))
    a1 = pool.open_all(["a1"])["a1"]
    assert a1.run(["drbdadm", "get-gi", "single-az"], timeout=10).exit_code == 0
    pool.reset("a1")  # a reconnect keeps the node's place in the recording
    with pytest.raises(ReplayMissing, match="recorded once and is asked once more"):
        pool.get("a1").run(["drbdadm", "get-gi", "single-az"], timeout=10)
    with pytest.raises(ConfigError, match=r"^unknown node 'z9' \(inventory has \['a1', "):
        pool.get("z9")


def _recording(tmp_path: Path, commands: list[dict[str, object]], session: dict[str, object] | None = None) -> Path:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"format": 1, "session": session or {}, "commands": commands}))
    return path


def test_a_streamed_command_replays_into_the_sink_with_whether_it_completed(tmp_path: Path) -> None:
    argv = ["fio", "--status-interval=1", "--output-format=json", "job"]
    path = _recording(
        tmp_path,
        [
            {"node": "a1", "argv": argv, "stream": True, "exit_code": 255, "stdout": '{"jobs": []}\n'},
            {"node": "a1", "argv": argv, "exit_code": 0, "stdout": "ran\n"},
        ],
    )
    node, sink = Recording.load(path).node("a1"), list[bytes]()
    assert node.stream(argv, timeout=600, sink=sink) == ('{"jobs": []}\n', False)  # the connection broke
    assert sink == [b'{"jobs": []}\n']
    assert node.run(argv, timeout=10).stdout == "ran\n"  # the same argv, run rather than streamed: its own answer
    with pytest.raises(ReplayMissing, match="was recorded once and is asked once more"):
        node.stream(argv, timeout=600)
    assert "stream must be true or false, and true only with argv" in _bad(
        tmp_path, {"node": "a1", "script": "true", "stream": True, "exit_code": 0}
    )


@given(
    st.integers(min_value=1_500_000_000, max_value=1_999_999_999),
    st.integers(min_value=1_500_000_000, max_value=1_999_999_999),
    st.integers(min_value=0, max_value=9),
)
def test_only_a_wall_clock_second_and_a_cancel_token_may_differ(recorded: int, replayed: int, tenth: int) -> None:
    def command(second: int, token: str) -> str:
        # the shapes the harness sends: an impairment's token and expiry, a fio cancel file
        return (
            f'printf \'%s\\n\' \'{{"deadline_epoch": {second}.{tenth}, "token": "a1-vec1-1-{second}"}}\' '
            f"> /run/harness/r1/faults/a1-vec1-1-{second}.json; "
            f"touch /run/harness/r1/fio-cell-{token}.cancel"
        )

    assert matchable(command(recorded, "0badcafe")) == matchable(command(replayed, "12345678"))
    # what is not volatile still tells two commands apart: a size, a seed, a path
    assert matchable("fio --size=1717986918") != matchable("fio --size=1717986919")
    assert matchable(f"fio --randseed={recorded}") != matchable("fio --randseed=42")


def test_the_replay_clock_follows_the_recorded_session() -> None:
    clock = ReplayClock(wall_start=1_800_000_000.0)
    with clock.installed():
        start = time.monotonic()
        polling.sleep(5.0)  # the harness's own sleep: no wait, the clock moves on
        assert time.monotonic() - start == pytest.approx(5.0, abs=1e-4)
        clock.answered(Recorded("a1", "argv", "drbdadm status r", 0, "", "", 0.25, at_s=9.0, took_s=0.3))
        assert clock.elapsed == pytest.approx(9.3, abs=1e-4)  # to where the call returned to the harness
        clock.answered(Recorded("a1", "argv", "drbdadm status r", 0, "", "", 0.5, at_s=1.0))
        assert clock.elapsed == pytest.approx(9.3, abs=1e-4)  # never back
        clock.answered(Recorded("a1", "argv", "true", 0, "", "", 0.5))  # not known when: its duration
        assert time.time() == pytest.approx(1_800_000_009.8, abs=1e-3)
        assert time.monotonic() < time.monotonic()  # each reading moves it on
        # a thread's sleep is its own time; an answer it got is everyone's
        for work in (
            lambda: polling.sleep(30.0),
            lambda: clock.answered(Recorded("a2", "argv", "true", 0, "", "", 0.1, at_s=12.0, took_s=0.1)),
        ):
            other = threading.Thread(target=work)
            other.start()
            other.join()
            assert clock.elapsed < 12.2
        assert clock.elapsed == pytest.approx(12.1, abs=1e-3)
        real = time.perf_counter()
        time.sleep(0.01)  # anyone else's sleep (here the test's) is real and moves nothing
        assert time.perf_counter() - real >= 0.01 and clock.elapsed == pytest.approx(12.1, abs=1e-3)
    assert time.monotonic() - start < 5.0  # the real clock again


def test_long_outputs_are_kept_once_beside_the_recording(tmp_path: Path) -> None:
    """Real commands captured: a long output given twice is one file beside the recording, a
    short one stays inline, and the replay serves both as they came."""
    capture = Capture()
    live = capture.node(LocalRunner("n1"))
    long_argv = ["sh", "-c", "seq 1 2000"]
    first, again = live.run(long_argv, timeout=10), live.run(long_argv, timeout=10)
    short = live.run(["echo", "short"], timeout=10)
    path = tmp_path / "session.json"
    capture.write(path)
    entries = json.loads(path.read_text())["commands"]
    assert [("stdout" in e, e.get("stdout_file")) for e in entries][2] == (True, None)
    kept = {e["stdout_file"] for e in entries[:2]}
    assert len(kept) == 1 and sorted(p.name for p in (tmp_path / "session.outputs").iterdir()) == [
        Path(next(iter(kept))).name
    ]
    node = Recording.load(path).node("n1")
    assert node.run(long_argv, timeout=10).stdout == first.stdout == again.stdout
    assert node.run(long_argv, timeout=10).stdout.endswith("2000\n")
    assert node.run(["echo", "short"], timeout=10).stdout == short.stdout == "short\n"
