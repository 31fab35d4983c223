"""When the failover cell crashes the primary: once fio has acknowledged a share of the
writes, read from fio's own status reports as they stream in (recorded fio 3.33
``--status-interval`` output), not after a fixed delay a fast host outruns."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from harness.cell.failover import _acked_so_far, _wait_for_progress
from harness.fio.report import parse_fio_json_stream

STREAM = (Path(__file__).resolve().parents[1] / "data" / "fio" / "fio-3.33-status-interval.json").read_bytes()
REPORTS = parse_fio_json_stream(STREAM.decode())


def test_acknowledged_writes_follow_the_complete_reports_received() -> None:
    assert len(REPORTS) >= 2
    assert _acked_so_far([]) == 0
    assert _acked_so_far([STREAM[:200]]) == 0  # the first report is not complete yet
    assert _acked_so_far([STREAM]) == (REPORTS[-1].write.total_ios or 0)
    # a report cut in half at any byte counts only the reports before it
    cut = STREAM.index(b'"fio version"', 10) - 3
    assert _acked_so_far([STREAM[:cut], STREAM[cut : cut + 50]]) == (REPORTS[0].write.total_ios or 0)


def test_the_crash_waits_for_the_target_and_no_longer() -> None:
    target = REPORTS[-1].write.total_ios or 0
    assert target > 0
    sink: list[bytes] = []
    done = threading.Event()
    writer = threading.Thread(target=done.wait, daemon=True)
    writer.start()

    def feed() -> None:
        for i in range(0, len(STREAM), 4096):
            sink.append(STREAM[i : i + 4096])
            time.sleep(0.01)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    _wait_for_progress(writer, sink, target, limit_s=30)
    assert _acked_so_far(sink) >= target
    done.set()


def test_a_writer_that_ended_or_a_limit_stops_the_wait() -> None:
    ended = threading.Thread(target=lambda: None)
    ended.start()
    ended.join()
    start = time.monotonic()
    _wait_for_progress(ended, [], 10**9, limit_s=30)
    assert time.monotonic() - start < 1
    done = threading.Event()
    alive = threading.Thread(target=done.wait, daemon=True)
    alive.start()
    start = time.monotonic()
    _wait_for_progress(alive, [], 10**9, limit_s=0.5)
    assert 0.5 <= time.monotonic() - start < 5
    done.set()
