"""``reports/<run-id>/``: the directory one run writes, the ``latest`` link, and re-rendering.

Layout (issue 3, deliverable 10; issue 6)::

    reports/
      20261121-101500-ab12/     one run
        run.json                RunInfo: inventory, profile, started/finished, argv, versions
        junit.xml               pytest --junitxml
        samples.ndjson          every Sample (the source of truth)
        series.ndjson           per-second bandwidth of cells, when the runner recorded it
        comparison.md/.csv      the tables, rendered from samples.ndjson alone
        report.html             one self-contained page: tables and plots
        plots/*.png             the plots of report.html as files
      latest -> 20261121-101500-ab12   relative symlink, so the tree can be moved or archived

Everything here besides samples.ndjson and series.ndjson is derived: :func:`render_run`
rebuilds it from them (and run.json, if present), which is what ``harness report RUN_DIR`` does.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from harness.errors import ConfigError
from harness.report.aggregate import aggregate_samples
from harness.report.comparison import Comparison, build_comparison
from harness.report.render import render_csv, render_html, render_markdown
from harness.report.run_info import RunInfo
from harness.runid import GENERATED_RUN_ID, new_run_id, validate_run_id
from harness.samples import read_samples
from harness.series import CellSeries, read_series

if TYPE_CHECKING:  # plots pulls in matplotlib, imported only when a report is rendered
    from harness.report.plots import Plot

__all__ = [
    "LATEST",
    "RunDir",
    "list_runs",
    "load_comparison",
    "render_run",
    "run_plots",
    "update_latest",
    "write_report",
]

#: Name of the symlink to the newest run inside the reports root (a reserved run id).
LATEST: Final = "latest"


def _write_atomic(path: Path, content: str | bytes) -> None:
    # A reader (CI artifact upload, a browser reloading) never sees a half-written file.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    if isinstance(content, bytes):
        tmp.write_bytes(content)
    else:
        tmp.write_text(content, encoding="utf-8")
    os.replace(tmp, path)


@dataclass(frozen=True)
class RunDir:
    """One run's directory; the paths of everything in it."""

    path: Path

    @classmethod
    def create(cls, reports_root: Path, run_id: str | None = None) -> RunDir:
        """Make a new, empty run directory under ``reports_root`` (never reuses an existing one)."""
        if run_id is not None:
            validate_run_id(run_id)
        reports_root.mkdir(parents=True, exist_ok=True)
        for _ in range(16):
            candidate = reports_root / (run_id or new_run_id())
            try:
                candidate.mkdir()
            except FileExistsError:
                if run_id is not None:
                    raise ConfigError(f"{candidate}: a run with this id already exists") from None
                continue  # same second, same random tail: draw again
            return cls(candidate)
        raise ConfigError(f"{reports_root}: could not find a free run id")  # pragma: no cover

    @classmethod
    def open(cls, path: Path) -> RunDir:
        """An existing run directory (``reports/latest`` is followed); ConfigError if there is none."""
        if not path.exists():
            raise ConfigError(f"{path}: no such run directory")
        if not path.is_dir():
            raise ConfigError(f"{path}: not a directory (expected reports/<run-id>/)")
        return cls(path.resolve())

    @property
    def run_id(self) -> str:
        return self.path.name

    @property
    def junit_xml(self) -> Path:
        return self.path / "junit.xml"

    @property
    def samples_ndjson(self) -> Path:
        return self.path / "samples.ndjson"

    @property
    def run_json(self) -> Path:
        return self.path / "run.json"

    @property
    def comparison_md(self) -> Path:
        return self.path / "comparison.md"

    @property
    def comparison_csv(self) -> Path:
        return self.path / "comparison.csv"

    @property
    def report_html(self) -> Path:
        return self.path / "report.html"

    @property
    def plots_dir(self) -> Path:
        return self.path / "plots"

    @property
    def series_ndjson(self) -> Path:
        return self.path / "series.ndjson"

    def read_series(self) -> list[CellSeries]:
        """The run's per-second series; none when the run recorded none (older runs, or a runner without it)."""
        return read_series(self.series_ndjson) if self.series_ndjson.exists() else []

    def write_run_info(self, info: RunInfo) -> Path:
        _write_atomic(self.run_json, info.to_json())
        return self.run_json

    def read_run_info(self) -> RunInfo | None:
        """The run's metadata, or ``None`` when run.json was never written (an interrupted run)."""
        if not self.run_json.exists():
            return None
        return RunInfo.from_json(self.run_json.read_text(encoding="utf-8"), where=str(self.run_json))


def update_latest(reports_root: Path, run_dir: RunDir) -> Path:
    """Point ``reports_root/latest`` at ``run_dir`` with a relative symlink, replaced atomically.

    The new link is made under a temporary name and renamed over the old one, so ``latest``
    always exists and always points at a complete run, even if two runs finish together.
    """
    latest = reports_root / LATEST
    if latest.exists() and not latest.is_symlink():
        raise ConfigError(f"{latest}: exists and is not a symlink; move it away so it can point at the newest run")
    target = os.path.relpath(run_dir.path.resolve(), reports_root.resolve())
    tmp = reports_root / f".{LATEST}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    os.symlink(target, tmp, target_is_directory=True)
    try:
        os.replace(tmp, latest)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    return latest


def list_runs(reports_root: Path) -> list[RunDir]:
    """Run directories under ``reports_root``, oldest first.

    A run directory is one named like a generated run id, or any directory holding run.json or
    samples.ndjson (a user-chosen ``--run-id``); ``latest`` and other links are not runs.
    Generated ids sort by time; ordering is by name, which keeps that and is stable.
    """
    if not reports_root.is_dir():
        return []
    runs = []
    for entry in reports_root.iterdir():
        if entry.is_symlink() or not entry.is_dir():
            continue
        run = RunDir(entry)
        if GENERATED_RUN_ID.match(entry.name) or run.run_json.exists() or run.samples_ndjson.exists():
            runs.append(run)
    return sorted(runs, key=lambda r: r.run_id)


def load_comparison(run_dir: RunDir) -> tuple[Comparison, RunInfo]:
    """The comparison of a run from its samples.ndjson, and its run info (minimal when absent)."""
    if not run_dir.samples_ndjson.exists():
        raise ConfigError(
            f"{run_dir.path}: no samples.ndjson — not a run directory, "
            "or the run was interrupted before any cell finished"
        )
    comparison = build_comparison(aggregate_samples(read_samples(run_dir.samples_ndjson)))
    return comparison, run_dir.read_run_info() or RunInfo(run_id=run_dir.run_id)


def run_plots(run: RunDir, comparison: Comparison) -> list[Plot]:
    """Every plot the run has data for: its cells and its series.ndjson."""
    # Imported here, not at the top: matplotlib costs half a second, and this module is loaded
    # by the pytest plugin in every xdist worker, while only the controller renders the report.
    from harness.report.plots import run_plots as plots_of

    return plots_of(comparison.cells, run.read_series())


def write_report(
    run: RunDir, comparison: Comparison, info: RunInfo | None = None, plots: Sequence[Plot] = ()
) -> list[Path]:
    """Write comparison.md and .csv, report.html with ``plots`` and plots/*.png; returns their paths.

    PNGs in plots/ that are not among ``plots`` are removed: they would be from an earlier
    rendering and no longer match report.html.
    """
    outputs: list[tuple[Path, str | bytes]] = [
        (run.comparison_md, render_markdown(comparison, info)),
        (run.comparison_csv, render_csv(comparison.cells)),
        (run.report_html, render_html(comparison, info, [p.figure for p in plots])),
    ]
    names = [p.name for p in plots]
    if len(set(names)) != len(names):
        raise ValueError(f"plot names must be unique: {names}")
    if plots:
        run.plots_dir.mkdir(exist_ok=True)
        outputs += [(run.plots_dir / f"{p.name}.png", p.png) for p in plots]
    if run.plots_dir.is_dir():
        keep = {f"{name}.png" for name in names}
        for stale in run.plots_dir.glob("*.png"):
            if stale.name not in keep:
                stale.unlink()
    for path, content in outputs:
        _write_atomic(path, content)
    return [path for path, _ in outputs]


def render_run(run_dir: RunDir | Path, extra_plots: Sequence[Plot] = ()) -> list[Path]:
    """(Re)write the run's tables, report.html and plots from its samples and series; returns the paths.

    ``extra_plots`` go after the run's own (e.g. a baseline comparison made by the caller).
    """
    run = run_dir if isinstance(run_dir, RunDir) else RunDir.open(run_dir)
    comparison, info = load_comparison(run)
    return write_report(run, comparison, info, [*run_plots(run, comparison), *extra_plots])
