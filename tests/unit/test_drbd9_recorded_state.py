"""Every recorded DRBD 9.2.18 output of a resource's state through the harness's readers: events2
snapshots and streams (parser, fold, window rules), ``status --json``, ``/proc/drbd``, the
one-liners, the status text, the refused promotions and the writes with and without quorum.

The recordings and their states are in tests/data/drbd/drbd-9.2.18 (README.md there); each file
is one case of :func:`test_every_state_recording_is_read`, and the configuration recordings are
the cases of tests/unit/test_drbd9_recorded_config.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from harness.drbd import commands
from harness.drbd.errors import DrbdOutputError
from harness.drbd.events import format_event, parse_events
from harness.drbd.fold import EventFold, resource_from_events2
from harness.drbd.procfs import parse_proc_drbd
from harness.drbd.quorum import quorum_setting, summarize_quorum
from harness.drbd.replication import DrbdReplication
from harness.drbd.state import ResourceState
from harness.drbd.status_json import parse_status_json
from harness.drbd.validity import check_capture
from harness.errors import CommandFailed
from harness.fields import DRBD_DEVICE_PATTERN
from tests.doubles import Answer, FakeRunner
from tests.unit.drbd9_recorded import DIR, FILES, Recording, hosts, recording, show_layout, tie_breakers, with_config

#: the streams the README says carry drbdsetup's own ``- skipped N`` lines
STREAMS_WITH_SKIPPED = {
    "a1.r3.events2-stream.1-up-connect-initial-resync.txt",
    "a1.r3.events2-stream.2-disconnect-one-peer-quorum-loss-regain.txt",
    "a1.r3.events2-stream.3-diskless-tiebreaker-cut-quorum.txt",
    "a3.r3.events2-stream.1-up-connect-initial-resync.txt",
    "a3.r3.events2-stream.2-disconnect-one-peer-quorum-loss-regain.txt",
    "a3.r3.events2-stream.3-diskless-tiebreaker-cut-quorum.txt",
    "a1.r-sa.events2-stream.1-up-connect-initial-resync.txt",
    "a3.r-ma.events2-stream.1-up-connect-clear-bitmap.txt",
}


def read_sibling(rec: Recording, command: str) -> str:
    sibling = rec.sibling(command)
    assert sibling is not None, f"no {command} beside {rec.name}"
    return sibling.read_text()


def fold_of(path_name: str, resource: str) -> ResourceState:
    state = resource_from_events2((DIR / path_name).read_text(), resource)
    assert state is not None
    return state


def snapshot(rec: Recording) -> ResourceState:
    """The fold of the events2 snapshot taken with ``rec`` (same node, resource and state)."""
    sibling = rec.sibling("events2-now-statistics")
    assert sibling is not None, f"no events2 snapshot beside {rec.name}"
    return with_config(rec, fold_of(sibling.name, rec.resource or ""))


def any_snapshot(rec: Recording) -> ResourceState:
    name = next(n for n in FILES if n.startswith(f"{rec.node}.{rec.resource}.events2-now-statistics."))
    return fold_of(name, rec.resource or "")


# -- events2 ------------------------------------------------------------------------------------
def check_events2_now(rec: Recording) -> None:
    text = rec.text()
    events = parse_events(text)
    assert [format_event(e) for e in events] == [line for line in text.splitlines() if line.strip()]
    fold = EventFold().apply_all(events)
    assert fold.initial_dump_complete and fold.skipped == 0
    names = {rec.resource} if rec.resource else {"single-az", "r-sa", "r3"}
    assert set(fold.names) == names
    for name, state in fold.resources().items():
        diskless = tie_breakers(name, rec.number)
        # a snapshot's window is valid exactly when the state it shows is healthy
        verdict = check_capture(text, resource=name, diskless=diskless)
        assert verdict.valid == state.with_diskless(diskless).healthy, (verdict, state.problems())
        assert {c.conn_name for c in state.connections} == hosts(name) - {rec.node}
        assert not state.split_brain  # 9.2 prints no split brain in a snapshot, whatever happened


def check_events2_stream(rec: Recording) -> None:
    text = rec.text()
    events = parse_events(text)
    assert [format_event(e) for e in events] == [line for line in text.splitlines() if line.strip()]
    fold = EventFold().apply_all(events)
    assert fold.initial_dump_complete and fold.names == (rec.resource,)
    assert (fold.skipped > 0) == (rec.name in STREAMS_WITH_SKIPPED)
    verdict = check_capture(text, resource=rec.resource)
    # every recorded stream crosses a state change; a hole in it is named, never unreadable
    assert not verdict.valid and "cannot read the event stream" not in str(verdict)
    dropped = {d for d in verdict.disturbances if d.startswith("DRBD dropped")}
    assert dropped == {f"DRBD dropped {e.skipped} events" for e in events if e.skipped}


def check_status_json(rec: Recording) -> None:
    parsed = parse_status_json(rec.text())
    sibling = rec.sibling("events2-now-statistics")
    if sibling is None:  # no snapshot of that moment: the status text of it says the same
        (state,) = parsed
        said = _status_peers(read_sibling(rec, "status-verbose-statistics"))
        assert {c.conn_name: (c.state, c.peer_role) for c in state.connections} == {
            peer: (words["connection"], words["role"]) for peer, words in said.items()
        }
        assert {p.conn_name: p.replication for p in state.peer_devices} == {
            peer: words["replication"] for peer, words in said.items()
        }
        return
    fold = EventFold().apply_all(parse_events(sibling.read_text()))
    assert sorted(s.name for s in parsed) == sorted(fold.names)
    for state in parsed:
        events = fold.resource(state.name)
        assert events is not None
        # the same moment in two outputs: the same words, peers, quorum and client flags
        assert state.drbdadm_words == events.drbdadm_words
        assert [(c.peer_node_id, c.conn_name, c.state) for c in state.connections] == [
            (c.peer_node_id, c.conn_name, c.state) for c in events.connections
        ]
        assert [(d.quorum, d.client) for d in state.devices] == [(d.quorum, d.client) for d in events.devices]
        assert [p.peer_client for p in state.peer_devices] == [p.peer_client for p in events.peer_devices]


def check_proc_drbd(rec: Recording) -> None:
    proc = parse_proc_drbd(rec.text())
    # DRBD 9's /proc/drbd: the version and the transports, never a resource
    assert (proc.version, proc.api, proc.proto, proc.minors, proc.major) == ("9.2.18", 2, "118-124", (), 9)
    assert commands.parse_proc_drbd_version(rec.text()) == "9.2.18"


# -- the drbdadm one-liners, against the snapshot of the same moment ---------------------------
def check_cstate(rec: Recording) -> None:
    assert sorted(rec.text().split()) == sorted(c.state for c in snapshot(rec).connections)


def check_role(rec: Recording) -> None:
    assert rec.text().split() == [snapshot(rec).role]  # DRBD 9's drbdadm role prints this node's only


def check_dstate(rec: Recording) -> None:
    state = snapshot(rec)
    words = rec.stdout.split()
    if not words:
        # drbdadm refuses dstate on a node configured without a disk; the fold says it is one
        assert "requires a local disk" in rec.stderr_text
        assert [(d.disk, d.client) for d in state.devices] == [("Diskless", True)] and state.healthy
        return
    local, *peers = words[0].split("/")
    assert local == state.devices[0].disk and sorted(peers) == sorted(p.peer_disk for p in state.peer_devices)


def check_sh_dev(rec: Recording) -> None:
    device = rec.text().strip()
    assert re.match(DRBD_DEVICE_PATTERN, device)
    assert device == f"/dev/drbd{any_snapshot(rec).devices[0].minor}"


def check_sh_md_dev(rec: Recording) -> None:
    if not rec.stdout.strip():
        # a3 without a disk has no meta-data device; its snapshot names no backing device either
        assert "requires a local disk" in rec.stderr_text
        state = fold_of("a3.r3.events2-now-statistics.8-diskless-tiebreaker.txt", "r3")
        assert state.devices[0].backing_dev is None and state.devices[0].client is True
        return
    backing = any_snapshot(rec).devices[0].backing_dev
    if backing is None:  # drbd-utils 9.15 (a3) prints no backing_dev: the running configuration names it
        (disk,) = show_layout(f"{rec.node}.{rec.resource}.show-show-defaults.txt", rec.resource or "").resource_options[
            "disk"
        ]
        backing = disk[0]
    assert rec.text().strip() == backing  # internal meta-data: on the backing disk itself


# -- status text: DRBD's own summary must agree with the fold ----------------------------------
def _pairs(words: list[str]) -> dict[str, str]:
    return {key: value for key, sep, value in (w.partition(":") for w in words) if sep}


def _status_peers(text: str) -> dict[str, dict[str, str]]:
    """Each peer of a ``status [--verbose]`` text with its key:value words (its own line and the
    deeper ones under it)."""
    peers: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip())
        words = line.split()
        if not words:
            current = None
        elif indent == 2 and ":" not in words[0]:
            current = peers.setdefault(words[0], {})
            current.update(_pairs(words[1:]))
        elif indent > 2 and current is not None:
            current.update(_pairs(words))
        elif indent <= 2:
            current = None
    return peers


def check_status_text(rec: Recording) -> None:
    text = rec.stdout
    if not text.strip():
        # not up yet: DRBD says so on stderr, and the harness's reader of nothing finds nothing
        assert f"{rec.resource}: No such resource" in rec.stderr_text
        assert DrbdReplication(FakeRunner(rec.node), rec.resource or "").read_state(text) is None
        return
    resource = rec.resource or "r-sa"
    block = text.split("\n\n")[0] if rec.resource else next(b for b in text.split("\n\n") if b.startswith("r-sa "))
    peers = _status_peers(block)
    assert set(peers) == hosts(resource) - {rec.node}
    sibling = rec.sibling("events2-now-statistics")
    if sibling is None:
        return
    fold = with_config(rec, fold_of(sibling.name, resource))
    for c in fold.connections:
        said = peers[c.conn_name or ""]
        # DRBD 9's plain status leaves out connection:Connected: the fold must not need it
        assert said.get("connection", "Connected") == c.state and said["role"] == c.peer_role
        pd = next(p for p in fold.peer_devices if p.conn_name == c.conn_name)
        assert said.get("peer-disk", "DUnknown") == pd.peer_disk
        assert said.get("replication", "Established" if c.state == "Connected" else "Off") == pd.replication


# -- what a node refused, and what a write did ------------------------------------------------
def check_primary_refused(rec: Recording) -> None:
    assert rec.stdout == ""
    stderr = rec.stderr_text
    code = int(re.findall(r"exit code (\d+)", stderr)[-1])
    runner = FakeRunner(rec.node, argv={tuple(commands.primary_argv(rec.resource or "")): [Answer("", code, stderr)]})
    with pytest.raises(CommandFailed, match="State change failed") as failed:
        DrbdReplication(runner, rec.resource or "").promote()
    assert failed.value.result.exit_code == code
    if rec.state is None:  # a2 while a1 is Primary: two primaries are not allowed
        assert "Multiple primaries" in stderr
        assert fold_of("a2.r-sa.events2-now-statistics.3-uptodate.txt", "r-sa").peer_role == "Primary"
        return
    # "Need access to UpToDate data": the snapshot of that moment shows this node Outdated
    node_state = next(
        n for n in FILES if n.startswith(f"{rec.node}.{rec.resource}.events2-now-statistics.{rec.number}")
    )
    assert "UpToDate data" in stderr and fold_of(node_state, rec.resource or "").devices[0].disk == "Outdated"


def check_write(rec: Recording) -> None:
    """A 4 KiB write on a1 at state 9 (pair cut, a3 holds quorum) and 5 (no quorum): the quorum
    summary of the snapshot of that moment says whether a write goes through."""
    assert rec.stdout == ""
    stderr = rec.stderr_text
    moment = "9-pair-cut-tiebreaker-holds" if "tiebreaker" in rec.command else "5-quorum-lost"
    state = fold_of(f"a1.r3.events2-now-statistics.{moment}.txt", "r3")
    setting = quorum_setting(show_layout("a1.r3.show-show-defaults.txt", "r3").resource_options)
    wrote = "4096 bytes" in stderr and "error" not in stderr
    assert summarize_quorum(state, setting).computed is wrote
    assert wrote or "Input/output error" in stderr  # on-no-quorum io-error
    assert setting.on_no_quorum == "io-error"


CHECKS: dict[str, Callable[[Recording], None]] = {
    "events2-now-statistics": check_events2_now,
    "events2-stream": check_events2_stream,
    "status-json": check_status_json,
    "cat-proc-drbd": check_proc_drbd,
    "cstate": check_cstate,
    "dstate": check_dstate,
    "role": check_role,
    "sh-dev": check_sh_dev,
    "sh-md-dev": check_sh_md_dev,
    "status-verbose-statistics": check_status_text,
    "status": check_status_text,
    "drbdadm-status": check_status_text,
    "drbdadm-primary-refused": check_primary_refused,
    "dd-write-tiebreaker-quorum": check_write,
    "dd-write-without-quorum": check_write,
}
STATE_FILES = [name for name in FILES if recording(name).command in CHECKS]


@pytest.mark.parametrize("name", STATE_FILES)
def test_every_state_recording_is_read(name: str) -> None:
    rec = recording(name)
    CHECKS[rec.command](rec)


@pytest.mark.parametrize("name", [n for n in STATE_FILES if n.endswith(".txt") and "events2" not in n])
def test_no_other_output_passes_for_events2(name: str) -> None:
    text = (DIR / name).read_text()
    if text.strip():
        with pytest.raises(DrbdOutputError, match="events2 line 1"):
            parse_events(text)
