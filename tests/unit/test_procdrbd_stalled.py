"""/proc/drbd resync progress: ``(stalled)`` wherever it is printed, and the ``M`` layout.

Inputs are the lab's recorded SyncTarget file (tests/data/drbd/84-proc-drbd-secondary-synctarget.txt)
rewritten the way drbd_proc.c prints the other cases (``drbd_syncer_progress`` in LINBIT's
drbd-8.4 ``drbd/drbd_proc.c``): ``" K/sec%s\\n", stalled ? " (stalled)" : ""``, and the ``M``
form ``"(%lu/%lu)M"`` with no newline before ``finish:``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.drbd.procfs import parse_proc_drbd

RECORDED = (Path(__file__).resolve().parents[1] / "data" / "drbd" / "84-proc-drbd-secondary-synctarget.txt").read_text()
FINISH = "\tfinish: 0:06:23 speed: 640 (640) want: 960 K/sec"


def test_the_recorded_resync_is_not_stalled() -> None:
    minor = parse_proc_drbd(RECORDED).minors[0]
    assert minor.sync is not None and minor.sync.speed_kib_s == 640
    assert not minor.resync_stalled


def test_stalled_after_k_sec_is_flagged() -> None:
    text = RECORDED.replace(FINISH, FINISH + " (stalled)")
    assert parse_proc_drbd(text).minors[0].resync_stalled


@pytest.mark.parametrize("own_line", ["\t(stalled)", "(stalled)", "\tstalled", "  stalled "])
def test_stalled_on_its_own_line_is_flagged(own_line: str) -> None:
    text = RECORDED.replace(FINISH, FINISH + "\n" + own_line)
    minor = parse_proc_drbd(text).minors[0]
    assert minor.resync_stalled
    assert minor.sync is not None and minor.sync.speed_kib_s == 640  # the rest still read


def test_m_layout_reads_finish_and_stalled_from_the_progress_line() -> None:
    # "(%lu/%lu)M" is followed directly by "finish:" on the same line
    text = RECORDED.replace("(306560/307200)K\n" + FINISH, "(7876/10236)M" + FINISH.lstrip("\t") + " (stalled)")
    minor = parse_proc_drbd(text).minors[0]
    assert minor.sync is not None
    assert (minor.sync.unit, minor.sync.left_kib, minor.sync.total_kib) == ("M", 7876 * 1024, 10236 * 1024)
    assert (minor.sync.finish_s, minor.sync.speed_kib_s, minor.sync.want_kib_s) == (383, 640, 960)
    assert minor.resync_stalled


def test_stalled_outside_a_progress_block_is_not_a_resync() -> None:
    text = RECORDED.split("\t[")[0] + "\tstalled\n"
    minor = parse_proc_drbd(text).minors[0]
    assert minor.sync is None and not minor.resync_stalled


PUBLIC = Path(__file__).resolve().parents[1] / "data" / "drbd" / "public"


@pytest.mark.parametrize(
    ("name", "cs", "want"),
    [
        ("ganeti-843-proc-drbd-8.3.11-syncsource.txt", "SyncSource", None),
        ("ganeti-843-proc-drbd-8.3.11-synctarget.txt", "SyncTarget", 250),
    ],
)
def test_public_8_3_m_layout_is_read(name: str, cs: str, want: int | None) -> None:
    # DRBD 8.3.11 output pasted in a public bug report (source: tests/data/drbd/public/SOURCES.md)
    proc = parse_proc_drbd((PUBLIC / name).read_text())
    assert (proc.version, proc.api) == ("8.3.11", 88)
    assert [m.cs for m in proc.minors] == ["Unconfigured", cs]
    sync = proc.minors[1].sync
    assert sync is not None
    assert (sync.unit, sync.left_kib, sync.total_kib) == ("M", 22888476 * 1024, 22888772 * 1024)
    assert (sync.finish_s, sync.speed_kib_s, sync.average_kib_s, sync.want_kib_s) == (
        4882 * 3600 + 52 * 60 + 29,
        1312,
        1280,
        want,
    )
    assert not proc.minors[1].resync_stalled
