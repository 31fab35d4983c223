"""The fio vs bonnie++ table, from a real filesystem-study run on the lab (tests/data/runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.report.aggregate import Cell, aggregate_samples
from harness.report.comparison import build_comparison
from harness.report.engines import ENGINE_HEADERS, engine_tables
from harness.report.markdown import render_markdown
from harness.report.page import render_html
from harness.runfiles.samples import read_samples

RUNS = Path(__file__).parent.parent / "data" / "disk_runs"
FILESYSTEMS = RUNS / "20261125-115711-97ce" / "samples.ndjson"


def _cells() -> list[Cell]:
    return aggregate_samples(read_samples(FILESYSTEMS))


def test_fio_and_bonnie_sit_side_by_side_per_filesystem() -> None:
    (table,) = engine_tables(build_comparison(_cells()))
    assert table.scenario == "filesystems"
    groups = {row.group for row in table.rows}
    assert groups == {"a1 (xfs)", "a1 (ext4)"}  # bonnie++ never ran on the raw device
    cells = {(c.mode, c.workload): c for c in _cells()}
    for fs in ("xfs", "ext4"):
        rows = {row.measure: row for row in table.rows if row.group == f"a1 ({fs})"}
        seq = rows["sequential write, MiB/s"]
        assert seq.fio_workload == "write-1m-nj1-qd16"
        assert seq.fio is not None and seq.fio.median == cells[(fs, "write-1m-nj1-qd16")].median("bw")
        assert seq.bonnie is not None and seq.bonnie.median == cells[(fs, "bonnie-seq-output-block")].median("bw")
        assert seq.ratio == pytest.approx(seq.bonnie.median / seq.fio.median)
        rnd = rows["random I/O, ops/s (fio 4k randwrite IOPS; bonnie++ seeks)"]
        assert rnd.fio_workload == "randwrite-4k-nj4-qd8"
        assert rnd.bonnie is not None and rnd.bonnie.median == cells[(fs, "bonnie-random-seeks")].median("ops")
        only_bonnie = rows["sequential create, files/s"]
        assert only_bonnie.fio is None and only_bonnie.ratio is None and only_bonnie.texts()[3] == "—"
        assert only_bonnie.bonnie is not None


def test_a_run_without_bonnie_has_no_engine_table() -> None:
    fio_only = [c for c in _cells() if c.metadata.get("engine") is None]
    assert engine_tables(build_comparison(fio_only)) == []
    assert "fio vs bonnie++" not in render_markdown(build_comparison(fio_only))


def test_markdown_and_html_show_the_table() -> None:
    comparison = build_comparison(_cells())
    md = render_markdown(comparison)
    assert "## filesystems: fio vs bonnie++" in md and "| " + ENGINE_HEADERS[0] in md
    page = render_html(comparison)
    assert 'id="engines-filesystems"' in page and "bonnie++/fio" in page
