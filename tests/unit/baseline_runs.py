"""Real recorded runs (``tests/data/runs``) and variants derived from them in code.

Regressed or improved runs are made by scaling recorded values, never by inventing numbers:
the spread between repeats stays the lab's real spread.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from harness.runfiles.samples import Sample, SampleStore, read_samples

DATA: Final = Path(__file__).resolve().parents[1] / "data" / "runs"
#: One run of replicated_write, two latency_sweep points and a failover cell; no repeats.
SINGLE: Final = "20261121-110501-f674"
#: The same cells, an hour later on the same lab.
LATER: Final = "20261121-120300-70b8"
#: replicated_write with three repeats per cell (three recorded runs), and the next three.
REPEATS_A: Final = "repeats3-a"
REPEATS_B: Final = "repeats3-b"

Where = Callable[[Mapping[str, Any]], bool]


def everywhere(_: Mapping[str, Any]) -> bool:
    return True


def cell_is(pair: str, workload: str, scenario: str = "replicated_write") -> Where:
    def match(m: Mapping[str, Any]) -> bool:
        return m.get("scenario") == scenario and m.get("pair") == pair and m.get("workload") == workload

    return match


def load(name: str) -> list[Sample]:
    return read_samples(DATA / name / "samples.ndjson")


def scaled(
    samples: Iterable[Sample], factor: float, metrics: Iterable[str] = ("bw", "iops"), where: Where = everywhere
) -> list[Sample]:
    """``samples`` with ``metrics`` multiplied by ``factor`` in the cells ``where`` selects."""
    chosen = set(metrics)
    return [
        dataclasses.replace(s, value=s.value * factor) if s.metric in chosen and where(s.metadata) else s
        for s in samples
    ]


def relabelled(samples: Iterable[Sample], where: Where = everywhere, **metadata: Any) -> list[Sample]:
    """``samples`` with metadata keys replaced in the cells ``where`` selects."""
    return [dataclasses.replace(s, metadata={**s.metadata, **metadata}) if where(s.metadata) else s for s in samples]


def write_run(reports: Path, run_id: str, samples: Iterable[Sample], run_json_from: str | None = None) -> Path:
    """A run directory ``reports/run_id`` holding ``samples`` (and a recorded run.json, if named)."""
    path = reports / run_id
    path.mkdir(parents=True, exist_ok=True)
    SampleStore(path / "samples.ndjson").append(samples)
    if run_json_from is not None:
        info = json.loads((DATA / run_json_from / "run.json").read_text())
        (path / "run.json").write_text(json.dumps({**info, "run_id": run_id}))
    return path


def replicated_write_bw(names: Iterable[str] = (REPEATS_A, REPEATS_B, LATER)) -> dict[str, list[float]]:
    """Each recorded replicated_write cell's bandwidth (MiB/s) over the runs ``names``, in run
    order, keyed ``pair/workload``: by default the seven runs of 21 Nov 2026."""
    cells: dict[str, list[float]] = {}
    for name in names:
        for s in load(name):
            if s.metric == "bw" and s.metadata.get("scenario") == "replicated_write":
                cells.setdefault(f"{s.metadata['pair']}/{s.metadata['workload']}", []).append(s.value)
    return cells
