"""The textfile through a real node_exporter: Debian's ``prometheus-node-exporter`` 1.5 (taken
out of its package into .tools/bin by scripts/bootstrap), with only its textfile collector, on
127.0.0.1 at a free port, reading two clusters' files from one directory.

The collector merges every ``*.prom`` file, and a series two files share is dropped while the
scrape still answers 200; so the test counts: every series of both files comes back, with its
value, and the collector reports no error."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from harness.export import RunMetrics, write_textfile
from harness.report.aggregate import aggregate_samples
from harness.runfiles.runinfo import RunInfo
from harness.runfiles.samples import read_samples
from tests.integration.daemons import daemon_binary, free_port, get, serving

RUN = Path(__file__).parent.parent / "data" / "runs" / "20261121-110501-f674"
INVENTORIES = ("cluster-a", "cluster-b")

Series = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def _series(text: str, prefix: str = "harness_") -> Series:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name.startswith(prefix)
    }


@pytest.fixture(scope="module")
def textfiles(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("textfile")
    cells = tuple(aggregate_samples(read_samples(RUN / "samples.ndjson")))
    for inventory in INVENTORIES:
        info = RunInfo(run_id="20261121-110501-f674", inventory_name=inventory, exitstatus=0)
        write_textfile(directory / f"harness-{inventory}.prom", RunMetrics(cells, info))
    return directory


@pytest.fixture(scope="module")
def scraped(textfiles: Path) -> Iterator[str]:
    binary = daemon_binary("prometheus-node-exporter", "prometheus-node-exporter")
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    argv = [
        binary,
        f"--web.listen-address=127.0.0.1:{port}",
        "--collector.disable-defaults",
        "--collector.textfile",
        f"--collector.textfile.directory={textfiles}",
    ]
    with serving(argv, url, what="node_exporter"):
        yield get(url)


def test_two_inventories_files_come_back_with_no_series_dropped(textfiles: Path, scraped: str) -> None:
    written: Series = {}
    for inventory in INVENTORIES:
        mine = _series((textfiles / f"harness-{inventory}.prom").read_text())
        assert mine and not set(mine) & set(written)
        written |= mine
    assert _series(scraped) == written  # every series, every value: 0 dropped


def test_the_collector_read_both_files_without_error(textfiles: Path, scraped: str) -> None:
    node = _series(scraped, prefix="node_textfile")
    assert node[("node_textfile_scrape_error", ())] == 0.0
    files = {dict(labels)["file"] for name, labels in node if name == "node_textfile_mtime_seconds"}
    assert files == {str(textfiles / f"harness-{inventory}.prom") for inventory in INVENTORIES}
