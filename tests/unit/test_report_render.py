"""Renderers: number formatting, Markdown, CSV round-trip, HTML that parses, terminal width."""

from __future__ import annotations

import base64
import csv
import io
import struct
import zlib
from html.parser import HTMLParser
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.report.aggregate import Cell, Stat, aggregate_samples
from harness.report.comparison import Comparison, build_comparison
from harness.report.csvfile import CSV_STAT_FIELDS, csv_fieldnames, render_csv
from harness.report.formatting import format_number, format_ratio, format_stat
from harness.report.markdown import render_markdown
from harness.report.page import FIGURES_SECTION_ID, render_html
from harness.report.terminal import render_text
from harness.runfiles.runinfo import RunInfo
from harness.runfiles.samples import METRICS, Sample

RANDWRITE = "randwrite-4k-nj8-qd1"
WRITE = "write-1m-nj1-qd16"
PAIRS: dict[str, dict[str, Any]] = {
    "single-az": {
        "pair": "single-az",
        "placement": "same-az",
        "mode": "replicated",
        "primary": "a1",
        "secondary": "a2",
        "az_primary": "az-a",
        "az_secondary": "az-a",
    },
    "multi-az": {
        "pair": "multi-az",
        "placement": "cross-az",
        "mode": "replicated",
        "primary": "a3",
        "secondary": "b1",
        "az_primary": "az-a",
        "az_secondary": "az-b",
    },
    "disc": {"pair": "single-az", "placement": "local", "mode": "disconnected", "primary": "a1"},
}
COMMON = {
    "scenario": "replicated_write",
    "impairment": "none",
    "run_id": "20261121-101500-ab12",
    "protocol": "C",
    "fio_version": "fio-3.33",
    "kernel": "6.1.0-28-amd64",
    "drbd_version": "8.4.11",
}
RUN_INFO = RunInfo(
    run_id="20261121-101500-ab12",
    inventory_path="inventories/lab.yaml",
    inventory_name="lab",
    profile="quick",
    started="2026-11-21T10:15:00Z",
    finished="2026-11-21T10:21:42Z",
    argv=("pytest", "scenarios/", "--repeat", "3"),
    versions={"harness": "0.1.0"},
)


def run_samples(
    repeats: int = 3,
    fail_reason: str = "bw 24.8 MiB/s < 0.65 × single-az",
    bw: tuple[float, float, float] = (41.2, 25.6, 52.3),
) -> list[Sample]:
    """The example run: single-az and multi-az on two workloads, one disconnected cell."""
    out: list[Sample] = []
    plan = [
        ("single-az", RANDWRITE, bw[0]),
        ("multi-az", RANDWRITE, bw[1]),
        ("single-az", WRITE, 212.0),
        ("multi-az", WRITE, 198.0),
        ("disc", RANDWRITE, bw[2]),
    ]
    for key, workload, base in plan:
        for r in range(repeats):
            factor = 1 + 0.03 * (r - 1)
            failing = key == "multi-az" and workload == RANDWRITE and r == 1
            metadata = {
                **COMMON,
                **PAIRS[key],
                "workload": workload,
                "repeat": r,
                "verdict": "fail" if failing else "pass",
                "verdict_reason": fail_reason if failing else "within bounds",
                "rtt_ms": 2.35 if key == "multi-az" else 0.31,
            }
            bs = 4096 if workload == RANDWRITE else 1 << 20
            values = {"bw": base * factor, "iops": base * factor * 1048576 / bs, "clat_p99": 2.0 / factor}
            out += [Sample(m, v, METRICS[m], metadata) for m, v in values.items()]
    return out


def comparison_of(samples: list[Sample]) -> Comparison:
    return build_comparison(aggregate_samples(samples))


def png(width: int = 1, height: int = 1) -> bytes:
    """A valid, tiny PNG (so the figure hook is tested with real PNG bytes)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + b"\xff\xff\xff" * width for _ in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


# --------------------------------------------------------------------------------------------
# Formatting


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0"),
        (0.0004, "0.0004"),
        (0.512, "0.512"),
        (1.7, "1.70"),
        (41.23, "41.2"),
        (212.4, "212"),
        (10547.2, "10547"),
    ],
)
def test_format_number(value: float, text: str) -> None:
    assert format_number(value) == text


def test_format_stat() -> None:
    assert format_stat(None) == ""
    assert format_stat(Stat("bw", "MiB/s", (41.2,))) == "41.2"
    three = Stat("bw", "MiB/s", (40.0, 41.2, 42.4))
    assert format_stat(three) == "41.2 ±3% n=3"
    assert format_stat(three, typical_n=3) == "41.2 ±3%"
    assert format_stat(Stat("bw", "MiB/s", (41.2,)), typical_n=3) == "41.2 n=1"
    assert format_stat(Stat("bw", "MiB/s", (41.0, 41.2, 41.3))) == "41.2 ±0.4% n=3"
    assert format_stat(Stat("x", "", (-1.0, 0.0, 1.0))) == "0 (-1.00–1.00) n=3"
    assert format_stat(three, show_spread=False) == "41.2 n=3"


def test_format_ratio() -> None:
    assert format_ratio(None) == ""
    assert format_ratio(0.6213) == "0.62×"


# --------------------------------------------------------------------------------------------
# Markdown


def test_markdown_has_header_tables_and_reasons() -> None:
    md = render_markdown(comparison_of(run_samples()), RUN_INFO)
    assert md.startswith("# Comparison — run 20261121-101500-ab12\n")
    assert "- **inventory**: lab (inventories/lab.yaml)" in md
    assert "- **profile**: quick" in md
    assert "fio-3.33 · kernel 6.1.0-28-amd64 · DRBD 8.4.11 · harness 0.1.0" in md
    assert "| single-az | drbd          | same-az     | a1 (az-a)" in md  # runs before md-nbd: DRBD
    assert "## replicated_write" in md
    assert "_Median of 3 repeats per cell; ±: half the min–max range._" in md
    for title in (
        "**Bandwidth (MiB/s)**",
        "**IOPS**",
        "**p99 completion latency (ms)**",
        "**Verdict and measured RTT**",
    ):
        assert title in md
    bw_table = md.split("**Bandwidth (MiB/s)**")[1].split("**IOPS**")[0]
    header, _, first, second = bw_table.strip().splitlines()
    assert [h.strip() for h in header.strip("|").split("|")] == [
        "workload",
        "impairment",
        "single-az (disconnected)",
        "single-az",
        "multi-az",
        "multi-az/single-az",
        "single-az repl/disc",
    ]
    assert [v.strip() for v in first.strip("|").split("|")] == [
        RANDWRITE,
        "none",
        "52.3 ±3%",
        "41.2 ±3%",
        "25.6 ±3%",
        "0.62×",
        "0.79×",
    ]
    assert [v.strip() for v in second.strip("|").split("|")] == [WRITE, "none", "", "212 ±3%", "198 ±3%", "0.93×", ""]
    assert "**FAIL** 1/3" in md
    assert "- **FAIL** 1/3 `replicated_write/multi-az/replicated/randwrite-4k-nj8-qd1/none`: bw 24.8" in md
    assert " 2.35 |" in md  # measured RTT of the multi-az pair


def test_markdown_escapes_pipes_and_warns_about_mixed_provenance() -> None:
    samples = run_samples(repeats=1)
    samples.append(Sample("bw", 1.0, "MiB/s", {**COMMON, **PAIRS["single-az"], "workload": "a|b", "kernel": "6.2"}))
    samples.append(Sample("bw", 1.0, "MiB/s", {**COMMON, **PAIRS["single-az"], "workload": "a|b", "kernel": "6.1"}))
    md = render_markdown(comparison_of(samples))
    assert "a\\|b" in md and "| a|b" not in md
    assert "## Warnings" in md and "repeats ran with different kernel (kernel: 6.2 | 6.1)" in md
    assert md.startswith("# Comparison — run 20261121-101500-ab12")  # run id from the samples


def test_markdown_of_nothing() -> None:
    md = render_markdown(build_comparison([]), RunInfo(run_id="r1"))
    assert "# Comparison — run r1" in md and "No cells" in md


# --------------------------------------------------------------------------------------------
# CSV


def read_csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


@given(st.lists(st.floats(min_value=1e-6, max_value=1e9, allow_nan=False), min_size=1, max_size=5))
def test_csv_round_trips_aggregated_values(values: list[float]) -> None:
    samples = [
        Sample("bw", v, "MiB/s", {**COMMON, **PAIRS["single-az"], "workload": RANDWRITE, "repeat": i})
        for i, v in enumerate(values)
    ]
    samples.append(Sample("iops", 7.0, "IOPS", {**COMMON, **PAIRS["multi-az"], "workload": RANDWRITE}))
    cells = aggregate_samples(samples)
    rows = read_csv(render_csv(cells))
    assert len(rows) == len(cells)
    for cell, row in zip(cells, rows, strict=True):
        assert row["cell"] == cell.key
        for metric in ("bw", "iops"):
            stat = cell.stats.get(metric)
            if stat is None:
                assert all(row[f"{metric}_{f}"] == "" for f in CSV_STAT_FIELDS)
                continue
            assert float(row[f"{metric}_median"]) == stat.median
            assert float(row[f"{metric}_min"]) == stat.min
            assert float(row[f"{metric}_max"]) == stat.max
            assert int(row[f"{metric}_n"]) == stat.n
            assert float(row[f"{metric}_spread"]) == stat.spread
        assert row["repeats"] == str(len(cell.repeats))


def test_csv_columns_and_metadata() -> None:
    cells = aggregate_samples(run_samples())
    text = render_csv(cells)
    rows = read_csv(text)
    header = text.splitlines()[0].split(",")
    assert header == csv_fieldnames(cells)
    assert header[:5] == ["scenario", "pair", "mode", "workload", "impairment"]
    for key in (
        "run_id",
        "fio_version",
        "kernel",
        "drbd_version",
        "protocol",
        "placement",
        "verdict",
        "verdict_reason",
    ):
        assert key in header
    for key in ("repeat", "rtt_ms"):  # per repeat: aggregated into repeats / rtt_*
        assert key not in header
    assert "rtt_median" in header and "clat_p99_spread" in header
    multi = next(r for r in rows if r["pair"] == "multi-az" and r["workload"] == RANDWRITE)
    assert multi["verdict"] == "fail" and multi["verdict_reason"].startswith("bw 24.8")
    assert multi["placement"] == "cross-az" and multi["secondary"] == "b1"
    assert float(multi["rtt_median"]) == 2.35
    disc = next(r for r in rows if r["mode"] == "disconnected")
    assert disc["secondary"] == "" and disc["placement"] == "local"


def test_csv_of_odd_metadata() -> None:
    meta = {**COMMON, **PAIRS["single-az"], "workload": RANDWRITE, "tc": {"delay": "1ms"}, "flag": True, "x": None}
    [row] = read_csv(render_csv(aggregate_samples([Sample("bw", 1.0, "MiB/s", meta)])))
    assert row["tc"] == '{"delay": "1ms"}' and row["flag"] == "true" and row["x"] == ""


# --------------------------------------------------------------------------------------------
# HTML


class Checker(HTMLParser):
    """Collects text and classes, and checks that every non-void tag is closed in order."""

    VOID = frozenset({"meta", "img", "br", "hr", "link", "input"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.text: list[str] = []
        self.classes: set[str] = set()
        self.ids: set[str] = set()
        self.images: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.classes.update((a.get("class") or "").split())
        if a.get("id"):
            self.ids.add(str(a["id"]))
        if tag == "img":
            self.images.append(str(a.get("src")))
        if tag == "script":
            self.errors.append("script tag")
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}> with open {self.stack[-3:]}")
        else:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(page: str) -> Checker:
    checker = Checker()
    checker.feed(page)
    checker.close()
    assert checker.errors == [] and checker.stack == []
    return checker


def test_html_parses_and_holds_the_table_values() -> None:
    figure = png(2, 2)
    page = render_html(comparison_of(run_samples()), RUN_INFO, figures=[("single vs multi AZ", figure)])
    assert page.startswith("<!DOCTYPE html>")
    assert "http://" not in page and "https://" not in page  # self-contained
    checker = parse(page)
    text = " ".join(checker.text)
    for value in ("20261121-101500-ab12", "inventories/lab.yaml", "quick", "52.3 ±3%", "41.2 ±3%", "0.62×", "FAIL 1/3"):
        assert value in text
    assert {"verdict-pass", "verdict-fail", "num", "ratio"} <= checker.classes
    assert {
        FIGURES_SECTION_ID,
        "comparison",
        "cells",
        "pairs",
        "not-passed",
        "scenario-replicated_write",
    } <= checker.ids
    [src] = checker.images
    assert src.startswith("data:image/png;base64,")
    assert base64.b64decode(src.split(",", 1)[1]) == figure
    assert "single vs multi AZ" in text


def test_html_escapes_and_placeholder_without_figures() -> None:
    samples = run_samples(repeats=2, fail_reason='<script>alert("x")</script> & more')
    page = render_html(comparison_of(samples))
    checker = parse(page)
    assert '<script>alert("x")</script> & more' in " ".join(checker.text)
    assert "No figures in this report." in page


def test_html_refuses_non_png_figure() -> None:
    with pytest.raises(ValueError, match="not PNG"):
        render_html(comparison_of(run_samples(1)), figures=[("x", b"GIF89a")])


def test_html_of_nothing_parses() -> None:
    parse(render_html(build_comparison([]), RunInfo(run_id="r")))


# --------------------------------------------------------------------------------------------
# Terminal


def test_text_side_by_side_fits_120_columns() -> None:
    text = render_text(comparison_of(run_samples()))
    lines = text.splitlines()
    assert all(len(line) <= 120 for line in lines)
    assert lines[0] == "replicated_write: Bandwidth (MiB/s), median of 3 repeats"
    assert "single-az disc" in lines[1] and "multi-az/single-az" in lines[1]
    assert "25.6 ±3% FAIL 1/3" in text and "0.62×" in text
    assert any(line.startswith("FAIL 1/3 replicated_write/multi-az/") for line in lines)
    assert lines[-1] == "result: 5 cells, repeats per cell: 3; 4 pass, 1 fail, 0 inconclusive"


def test_text_falls_back_to_one_line_per_cell_when_narrow() -> None:
    text = render_text(comparison_of(run_samples()), width=90)
    lines = text.splitlines()
    assert lines[0] == "replicated_write, median of 3 repeats"
    assert lines[1].split()[:3] == ["workload", "impairment", "pair"]
    assert all(len(line) <= 90 for line in lines)


@given(
    width=st.integers(min_value=20, max_value=200),
    name=st.text(alphabet="abcdefghij-", min_size=1, max_size=60),
)
def test_text_never_exceeds_width(width: int, name: str) -> None:
    samples = [
        Sample("bw", 1.0, "MiB/s", {**COMMON, **PAIRS["single-az"], "workload": name, "verdict": "inconclusive"}),
        Sample("bw", 2.0, "MiB/s", {**COMMON, **PAIRS["multi-az"], "workload": name, "pair": name * 2}),
    ]
    assert all(len(line) <= width for line in render_text(comparison_of(samples), width=width).splitlines())


def test_text_of_nothing() -> None:
    assert render_text(build_comparison([])) == "no cells measured"


def test_cells_are_plain_data() -> None:
    # The renderers take any iterable of cells, e.g. filtered ones.
    cells: list[Cell] = [c for c in aggregate_samples(run_samples()) if c.mode == "replicated"]
    assert len(read_csv(render_csv(iter(cells)))) == 4


def test_the_pairs_table_names_each_nodes_release_and_tool_versions() -> None:
    # metadata as the lab's mixed pair recorded it (run 20261128-060947-dcca, a3 -> b1)
    mixed = {
        **COMMON,
        **PAIRS["multi-az"],
        "workload": RANDWRITE,
        "repeat": 0,
        "verdict": "pass",
        "verdict_reason": "within bounds",
        "fio_version": "fio-3.25",
        "fio_version_secondary": "fio-3.39",
        "distro_primary": "Debian GNU/Linux 11 (bullseye)",
        "distro_secondary": "Debian GNU/Linux 13 (trixie)",
        "tools_primary": "iproute2-5.9.0 · iperf3 3.9 · iputils 20210202 · OpenSSH_8.4p1",
        "tools_secondary": "iproute2-6.15.0 · iperf3 3.18 · iputils 20240905 · OpenSSH_10.0p2",
    }
    md = render_markdown(comparison_of([Sample("bw", 1.65, "MiB/s", mixed)]), RUN_INFO)
    row = next(line for line in md.splitlines() if line.startswith("| multi-az"))
    assert (
        "Debian GNU/Linux 11 (bullseye)): fio-3.25 · iproute2-5.9.0 · iperf3 3.9 · iputils 20210202 · OpenSSH_8.4p1"
        in row
    )
    assert "fio-3.39 · iproute2-6.15.0 · iperf3 3.18 · iputils 20240905 · OpenSSH_10.0p2" in row
