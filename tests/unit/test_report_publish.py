"""A run's report files: render_run (one read of the run, one rendering) and ``harness report``."""

from __future__ import annotations

import argparse
import base64
import csv
import io
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from harness.cli import report as cli
from harness.errors import ConfigError
from harness.report.plots import Plot, plot_baseline_vs_current
from harness.report.publish import render_run
from harness.report.results import RunResults
from harness.runfiles.rundir import LATEST, RunDir, update_latest
from harness.runfiles.runinfo import RunInfo
from harness.runfiles.samples import METRICS, Sample, SampleStore

from .baseline_runs import SINGLE, load, write_run
from .plot_inputs import LATENCY, REPEATS_A, REPEATS_B, bw_series, cells, stop_windows

RUN_ID = "20261121-101500-ab12"


def write_samples(run: RunDir, repeats: int = 2) -> None:
    samples = []
    for pair, placement, workload, bw in (
        ("single-az", "same-az", "randwrite-4k-nj8-qd1", 41.2),
        ("multi-az", "cross-az", "randwrite-4k-nj8-qd1", 25.6),
    ):
        for r in range(repeats):
            metadata: dict[str, Any] = {
                "scenario": "replicated_write",
                "pair": pair,
                "mode": "replicated",
                "workload": workload,
                "impairment": "none",
                "placement": placement,
                "run_id": run.run_id,
                "repeat": r,
                "verdict": "pass",
                "rtt_ms": 0.3,
            }
            samples += [Sample(m, v + r, METRICS[m], metadata) for m, v in (("bw", bw), ("iops", bw * 256))]
    SampleStore(run.samples_ndjson).append(samples)


# --------------------------------------------------------------------------------------------
# render_run


def test_render_run_writes_tables_report_and_plots_from_samples(tmp_path: Path) -> None:
    root = tmp_path / "reports"
    run = RunDir.create(root, RUN_ID)
    write_samples(run)
    run.write_run_info(RunInfo(run_id=RUN_ID, inventory_name="lab", profile="quick"))
    update_latest(root, run)
    written = render_run(root / LATEST)
    resolved = run.path.resolve()
    assert [p.relative_to(resolved) for p in written] == [
        Path("comparison.md"),
        Path("comparison.csv"),
        Path("report.html"),
        Path("plots/single-vs-multi-az.png"),  # the samples have a same-AZ and a cross-AZ pair
    ]
    md = run.comparison_md.read_text()
    assert f"# Comparison — run {RUN_ID}" in md and "- **profile**: quick" in md
    assert "41.7 ±1%" in md and "0.63×" in md  # medians of (41.2, 42.2) and (25.6, 26.6)
    rows = list(csv.DictReader(io.StringIO(run.comparison_csv.read_text())))
    assert {r["pair"]: float(r["bw_median"]) for r in rows} == {"single-az": 41.7, "multi-az": 26.1}
    assert "<table>" in run.report_html.read_text()
    assert not [p for p in run.path.rglob("*") if p.name.endswith(".tmp")]
    # Re-rendering is idempotent.
    before = md
    render_run(run)
    assert run.comparison_md.read_text() == before


def test_render_run_without_run_json_uses_the_directory_name(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, RUN_ID)
    write_samples(run, repeats=1)
    render_run(run.path)
    assert run.run_info() == RunInfo(run_id=RUN_ID)
    assert len(RunResults.read(run).comparison.cells) == 2
    assert f"# Comparison — run {RUN_ID}" in run.comparison_md.read_text()


def test_render_run_errors(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, RUN_ID)
    with pytest.raises(ConfigError, match=r"no samples\.ndjson"):
        render_run(run)
    run.samples_ndjson.write_text('{"metric": "bw"}\n')
    with pytest.raises(ConfigError, match=r"samples.ndjson:1: not a sample record"):
        render_run(run)
    with pytest.raises(ConfigError, match="no such run directory"):
        render_run(tmp_path / "nope")


class _Page(HTMLParser):
    """Every tag, every src/href, the images and the figure captions of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.links: list[str] = []
        self.images: list[str] = []
        self.captions: list[str] = []
        self._in_caption = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        values = dict(attrs)
        self.links += [v for k, v in attrs if k in ("src", "href", "srcset", "data") and v is not None]
        if tag == "img":
            self.images.append(values.get("src") or "")
        self._in_caption = tag == "figcaption"

    def handle_endtag(self, tag: str) -> None:
        self._in_caption = False

    def handle_data(self, data: str) -> None:
        if self._in_caption:
            self.captions.append(data)


def recorded_run(tmp_path: Path) -> RunDir:
    """A run directory of recorded lab samples (latency sweep, single vs multi AZ) and series."""
    path = write_run(tmp_path, RUN_ID, [*load(LATENCY), *load(REPEATS_A)], run_json_from=SINGLE)
    series = [
        bw_series("stop-nj2", impairment="crash", windows=stop_windows()),
        bw_series("write-1m-nj2", scenario="replicated_write"),  # nothing to see: not plotted
    ]
    (path / "series.ndjson").write_text("".join(s.to_json() + "\n" for s in series))
    return RunDir.open(path)


def test_report_html_embeds_every_plot_and_is_self_contained(tmp_path: Path) -> None:
    run = recorded_run(tmp_path)
    written = render_run(run)
    pngs = sorted(run.plots_dir.glob("*.png"))
    assert [p.name for p in pngs] == [
        "latency-sweep.png",
        "series-1-failover-integrity-single-az-replicated-write-1m-nj2-qd4-crash.png",
        "single-vs-multi-az.png",
    ]
    assert set(pngs) < set(written)
    page = _Page()
    page.feed(run.report_html.read_text(encoding="utf-8"))
    # Every plot file is in the page, inline, in report order, with its title as caption.
    prefix = "data:image/png;base64,"
    assert all(src.startswith(prefix) for src in page.images)
    embedded = [base64.b64decode(src.removeprefix(prefix), validate=True) for src in page.images]
    order = [
        "latency-sweep",
        "single-vs-multi-az",
        "series-1-failover-integrity-single-az-replicated-write-1m-nj2-qd4-crash",
    ]
    assert embedded == [(run.plots_dir / f"{name}.png").read_bytes() for name in order]
    assert page.captions[0].startswith("Latency sweep") and page.captions[2].startswith("Bandwidth over time")
    # Self-contained: nothing fetched from anywhere, no scripts; links only within the page.
    assert not page.tags & {"script", "link", "iframe", "object", "embed", "video", "audio"}
    assert all(link.startswith(("#", prefix)) for link in page.links), [
        link[:40] for link in page.links if not link.startswith(("#", prefix))
    ]
    assert "http://" not in run.report_html.read_text() and "https://" not in run.report_html.read_text()


def test_rendering_again_removes_plots_that_are_gone(tmp_path: Path) -> None:
    run = recorded_run(tmp_path)
    render_run(run)
    (run.plots_dir / "notes.txt").write_text("mine")
    run.series_ndjson.unlink()
    render_run(run)
    assert sorted(p.name for p in run.plots_dir.iterdir()) == [
        "latency-sweep.png",
        "notes.txt",
        "single-vs-multi-az.png",
    ]
    assert run.report_html.read_text().count("<img ") == 2


def test_extra_plots_go_after_the_runs_own(tmp_path: Path) -> None:
    run = recorded_run(tmp_path)
    png = plot_baseline_vs_current(cells(REPEATS_B), cells(REPEATS_A), "bw")
    assert png is not None
    written = render_run(run, extra_plots=[Plot("baseline-bw", "Baseline vs current: bandwidth", png)])
    assert written[-1] == run.plots_dir / "baseline-bw.png" and written[-1].read_bytes() == png
    with pytest.raises(ValueError, match="unique"):
        render_run(run, extra_plots=[Plot("latency-sweep", "again", png)])


# --------------------------------------------------------------------------------------------
# harness report RUN_DIR


def parse_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="harness report")
    cli.add_arguments(parser)
    return parser.parse_args(argv)


def test_cli_prints_markdown_and_written_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = RunDir.create(tmp_path, RUN_ID)
    write_samples(run)
    assert cli.run(parse_args(str(run.path))) == 0
    out = capsys.readouterr().out
    assert "## replicated_write" in out and "| randwrite-4k-nj8-qd1 |" in out
    plot = run.plots_dir / "single-vs-multi-az.png"
    assert f"written:\n  {run.comparison_md}\n  {run.comparison_csv}\n  {run.report_html}\n  {plot}\n" in out
    assert run.report_html.exists() and plot.exists()


def test_cli_text_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = RunDir.create(tmp_path, RUN_ID)
    write_samples(run)
    assert cli.run(parse_args(str(run.path), "--format", "text", "--width", "100")) == 0
    out = capsys.readouterr().out
    assert out.startswith("replicated_write: Bandwidth (MiB/s), median of 2 repeats\n")
    # The width is the tables'; the written paths after them are as long as the tmp dir makes them.
    tables = out.split("written:")[0]
    assert all(len(line) <= 100 for line in tables.splitlines())


def test_cli_errors_are_clear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.run(parse_args(str(tmp_path / "nope"))) == 2
    assert "harness report: error:" in capsys.readouterr().err

    run = RunDir.create(tmp_path, RUN_ID)
    assert cli.run(parse_args(str(run.path))) == 2
    assert "no samples.ndjson" in capsys.readouterr().err

    write_samples(run)
    update_latest(tmp_path, run)
    assert cli.run(parse_args(str(tmp_path))) == 2
    assert f"try {tmp_path / LATEST}" in capsys.readouterr().err

    assert cli.run(parse_args(str(tmp_path / "20991231-000000-ffff"))) == 2
    assert "the newest run is" in capsys.readouterr().err
