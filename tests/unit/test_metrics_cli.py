"""``harness metrics RUN``: prints, writes and refuses, on a real recorded run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from harness.cli import main

RUN = Path(__file__).parent.parent / "data" / "disk_runs" / "20261125-115711-97ce"


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return Path(shutil.copytree(RUN, tmp_path / RUN.name))


def test_prints_the_exposition_of_a_finished_run(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metrics", str(run_dir)]) == 0
    families = {f.name: f for f in text_string_to_metric_families(capsys.readouterr().out)}
    seeks = [
        s
        for s in families["harness_filesystem_operations_per_second"].samples
        if s.labels["workload"] == "bonnie-random-seeks"
    ]
    assert {s.labels["mode"] for s in seeks} == {"xfs", "ext4"} and all(s.value > 0 for s in seeks)
    assert {(s.labels["scenario"], s.labels["node"]) for s in seeks} == {("filesystems", "a1")}
    assert families["harness_run_info"].samples[0].labels["run_id"] == RUN.name


def test_openmetrics_format_ends_with_eof(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metrics", str(run_dir), "--format", "openmetrics"]) == 0
    assert capsys.readouterr().out.endswith("# EOF\n")


def test_writes_a_textfile_and_refuses_a_non_prom_name(run_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "harness.prom"
    assert main(["metrics", str(run_dir), "--openmetrics-file", str(target)]) == 0
    assert "harness_write_bandwidth_bytes_per_second{" in target.read_text()
    assert main(["metrics", str(run_dir), "--openmetrics-file", str(tmp_path / "harness.txt")]) == 2
