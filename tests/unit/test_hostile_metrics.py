"""A run's metrics for Prometheus from hostile run data: whatever a cell's identity says
(quotes, newlines, a scenario named like a path), ``harness metrics`` prints an exposition
Prometheus' own parser reads back, with the same values, and ``--openmetrics-file`` writes that
one file and nothing else.  The run is the recorded lab run tests/data/runs/20261121-110501-f674
with its identities replaced in code; the fuzz target replaces them with any text, a password
among them, and writes the textfile or prints."""

from __future__ import annotations

import dataclasses
import math
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from harness.runfiles.samples import IDENTITY_KEYS, SampleStore, read_samples
from tests.unit.fuzz_tally import surface
from tests.unit.hostile_inputs import FUZZ, no_sentinel, run_cli, secret_forms, unchanged
from tests.unit.promtool import check_metrics

RUN = Path(__file__).resolve().parents[1] / "data" / "runs" / "20261121-110501-f674"


def _run(tmp_path: Path, identity: dict[str, str]) -> Path:
    run = tmp_path / "reports" / RUN.name
    run.mkdir(parents=True)
    shutil.copy(RUN / "run.json", run / "run.json")
    samples = [
        dataclasses.replace(s, metadata={**s.metadata, **identity}) for s in read_samples(RUN / "samples.ndjson")
    ]
    SampleStore(run / "samples.ndjson").append(samples)
    return run


def _exposition_reads_back(text: str) -> None:
    families = list(text_string_to_metric_families(text))
    assert families and check_metrics(text).returncode == 0  # promtool's lint finds nothing
    assert all(math.isfinite(s.value) for f in families for s in f.samples)


@pytest.mark.parametrize(
    "identity",
    [
        {"scenario": "../../etc/passwd", "pair": 'a"b', "workload": "w\nx"},
        {"scenario": "9lives", "pair": "\\", "impairment": "{x}"},
        {"scenario": "", "mode": "é" * 50},
    ],
)
def test_hostile_identities_give_an_exposition_prometheus_reads(tmp_path: Path, identity: dict[str, str]) -> None:
    run = _run(tmp_path, identity)
    _exposition_reads_back(run_cli(["metrics", str(run)]).clean((0,)).stdout)


def test_the_textfile_is_the_one_file_written(tmp_path: Path) -> None:
    run = _run(tmp_path, {})
    (tmp_path / "prom").mkdir()
    with unchanged(tmp_path, allowed=["prom/run.prom"]):
        run_cli(["metrics", str(run), "--openmetrics-file", str(tmp_path / "prom" / "run.prom")]).clean((0,))
    _exposition_reads_back((tmp_path / "prom" / "run.prom").read_text())


@pytest.mark.parametrize(
    ("target", "message"),
    [("nodir/x.prom", "no such directory for the metrics textfile"), ("x.txt", "reads only *.prom files")],
)
def test_a_textfile_that_cannot_be_written_is_refused(tmp_path: Path, target: str, message: str) -> None:
    run = _run(tmp_path, {})
    with unchanged(tmp_path):
        assert message in run_cli(["metrics", str(run), "--openmetrics-file", str(tmp_path / target)]).refusal()


# -- the fuzz target ----------------------------------------------------------------------------


@FUZZ
@given(
    identity=st.dictionaries(st.sampled_from(IDENTITY_KEYS), st.text(max_size=40) | secret_forms(), max_size=5),
    textfile=st.booleans(),
)
@surface("metrics: run identities")
def test_fuzz_metric_identities(
    tmp_path_factory: pytest.TempPathFactory, identity: dict[str, str], textfile: bool
) -> None:
    """Any identity: an exposition that reads back (or a refusal of the run), printed or in the
    one textfile asked for; nothing else written, no password in either."""
    tmp = tmp_path_factory.mktemp("metrics")
    run = _run(tmp, identity)
    (tmp / "prom").mkdir()
    prom = tmp / "prom" / "run.prom"
    argv = ["metrics", str(run), *(["--openmetrics-file", str(prom)] if textfile else [])]
    with unchanged(tmp, allowed=["prom/run.prom"] if textfile else []):
        outcome = run_cli(argv).clean()
    no_sentinel(identity.values(), [outcome.stdout, outcome.stderr], [prom] if prom.exists() else [])
    if outcome.code == 0:
        _exposition_reads_back(prom.read_bytes().decode() if textfile else outcome.stdout)  # no newline translated
