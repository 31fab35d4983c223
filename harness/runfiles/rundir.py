"""``reports/<run-id>/``: the directory one run writes, every file's place in it, and ``latest``.

The one owner of run directories: a run's directory is made here, exclusively (a run never
reuses one: an earlier run's results or a user's notes there are kept, and the run is refused),
and ``reports/latest`` is pointed at a finished run here.  Layout::

    reports/
      20261121-101500-ab12/     one run (a generated id; a user's --run-id such as nightly-42 too)
        run.json                the run's record (harness.runfiles.runinfo: the one reader and writer)
        junit.xml               pytest's JUnit (a copy of it when --junitxml names another file)
        junit-strict.xml        the same, valid against Jenkins' xUnit schema
        summary.md              the first screen: what failed and why, where the tables are
        bounds.txt              every relative bound judged, and the model's fit
        preflight.txt           what the read-only preflight found
        samples.ndjson          every Sample (the source of truth)
        series.ndjson           per-second bandwidth of cells, when the runner recorded it
        ledger.ndjson           every change made to a node, and its undo
        comparison.md/.csv      the tables, rendered from samples.ndjson alone
        report.html             one self-contained page: tables and plots
        plots/*.png             the plots of report.html as files
        baseline-compare.md     the comparison with a baseline, when one was asked for
      latest -> 20261121-101500-ab12   relative symlink, so the tree can be moved or archived
      calibrations/<pair>-<time>-<hex>.json   pairs' calibrations, reused across runs
                                (harness.prediction.calstore; not a run)

Everything besides samples.ndjson, series.ndjson, ledger.ndjson and run.json is derived:
``harness report RUN_DIR`` rebuilds it from them (:mod:`harness.report.publish`).
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from harness.errors import ConfigError
from harness.runfiles.runid import GENERATED_RUN_ID, new_run_id, validate_run_id
from harness.runfiles.runinfo import RUN_JSON, RunInfo
from harness.runfiles.series import CellSeries, read_series
from harness.userfiles.names import LATEST

__all__ = [
    "BASELINE_INFO",
    "CALIBRATIONS",
    "LATEST",
    "RunDir",
    "RunExists",
    "calibrations_dir",
    "list_runs",
    "update_latest",
]

#: Directory of the stored calibrations inside the reports root (shared by every run).
CALIBRATIONS: Final = "calibrations"
#: The file that makes a directory a saved baseline (harness.baseline.store), never a run to write into.
BASELINE_INFO: Final = "baseline.json"


def calibrations_dir(reports_root: Path) -> Path:
    """Where the pairs' calibrations are kept between runs."""
    return reports_root / CALIBRATIONS


class RunExists(ConfigError):
    """A run directory of the asked-for id is there already (an earlier run, or a user's)."""


@dataclass(frozen=True)
class RunDir:
    """One run's directory; the paths of everything in it."""

    path: Path

    @classmethod
    def create(cls, reports_root: Path, run_id: str | None = None) -> RunDir:
        """Make a new, empty run directory under ``reports_root``; never reuses an existing one.

        With ``run_id`` (checked by the run id rule) a directory that exists is :class:`RunExists`;
        without, a fresh id is drawn until one is free.
        """
        if run_id is not None:
            validate_run_id(run_id)
        if os.path.lexists(reports_root) and not reports_root.is_dir():
            raise ConfigError(f"{reports_root}: not a directory (it should hold the runs' directories)")
        try:
            reports_root.mkdir(parents=True, exist_ok=True)
            for _ in range(16):
                candidate = reports_root / (run_id or new_run_id())
                try:
                    candidate.mkdir()
                except FileExistsError:
                    if run_id is not None:
                        raise RunExists(f"{candidate}: a run with this id already exists") from None
                    continue  # same second, same random tail: draw again
                return cls(candidate)
        except OSError as exc:  # a file in the way, a read-only or full file system
            raise ConfigError(f"{reports_root}: cannot make a run directory there: {exc.strerror}") from None
        raise ConfigError(f"{reports_root}: could not find a free run id")  # pragma: no cover

    @classmethod
    def unused(cls, reports_root: Path, run_id: str | None = None) -> RunDir:
        """A run directory of an id no run has used, not made yet (:meth:`ensure` makes it when
        something is to be written); :class:`RunExists` when ``run_id`` names one that exists."""
        if run_id is not None:
            validate_run_id(run_id)
        candidate = reports_root / (run_id or new_run_id())
        while run_id is None and os.path.lexists(candidate):
            candidate = reports_root / new_run_id()
        if os.path.lexists(candidate):
            raise RunExists(f"{candidate}: a run with this id already exists")
        return cls(candidate)

    @classmethod
    def of(cls, reports_root: Path, run_id: str) -> RunDir:
        """The directory of run ``run_id`` under ``reports_root``, whether or not it was made yet
        (an xdist worker is handed the id of the run its controller created)."""
        return cls(reports_root / validate_run_id(run_id))

    @classmethod
    def open(cls, path: Path) -> RunDir:
        """An existing run directory (``reports/latest`` is followed, to a run beside it only);
        ConfigError if there is none."""
        if not path.exists():
            raise ConfigError(f"{path}: no such run directory")
        if not path.is_dir():
            raise ConfigError(f"{path}: not a directory (expected reports/<run-id>/)")
        target = path.resolve()
        if path.name == LATEST and path.is_symlink() and target.parent != path.parent.resolve():
            raise ConfigError(
                f"{path}: points at {target}, not at a run of its reports root; the harness does not follow it"
            )
        return cls(target)

    def check_writable(self) -> None:
        """Refuse to write reports into a directory that is a saved baseline (or a link out of it)."""
        if (self.path / BASELINE_INFO).exists():
            raise ConfigError(f"{self.path}: is a saved baseline, not a run; the harness never writes into it")
        if self.plots_dir.is_symlink():
            raise ConfigError(
                f"{self.plots_dir}: is a symlink; the harness writes plots only into the run's own directory"
            )

    def ensure(self) -> RunDir:
        """Make the directory if it is not there yet (a run that writes no reports, made by
        :meth:`unused`, when a cell of it still measures)."""
        self.path.mkdir(parents=True, exist_ok=True)
        return self

    @property
    def run_id(self) -> str:
        return self.path.name

    @property
    def reports_root(self) -> Path:
        return self.path.parent

    @property
    def run_json(self) -> Path:
        return self.path / RUN_JSON

    @property
    def junit_xml(self) -> Path:
        return self.path / "junit.xml"

    @property
    def junit_strict_xml(self) -> Path:
        return self.path / "junit-strict.xml"

    @property
    def preflight_txt(self) -> Path:
        return self.path / "preflight.txt"

    @property
    def lab_doctor_txt(self) -> Path:
        """The lab doctor's verdict, written when a run on the embedded lab had failures."""
        return self.path / "lab-doctor.txt"

    @property
    def samples_ndjson(self) -> Path:
        return self.path / "samples.ndjson"

    @property
    def series_ndjson(self) -> Path:
        return self.path / "series.ndjson"

    @property
    def ledger_ndjson(self) -> Path:
        return self.path / "ledger.ndjson"

    @property
    def comparison_md(self) -> Path:
        return self.path / "comparison.md"

    @property
    def summary_md(self) -> Path:
        """The run's first screen: what failed and why, and where the tables are."""
        return self.path / "summary.md"

    @property
    def bounds_txt(self) -> Path:
        """Every relative bound judged at the end of the run, and the model's fit."""
        return self.path / "bounds.txt"

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
    def plots_written(self) -> Path:
        """The names of the plots the harness last wrote into plots/ (the only ones it removes)."""
        return self.path / ".plots-written"

    def read_series(self) -> list[CellSeries]:
        """The run's per-second series; none when the run recorded none (older runs, or a runner without it)."""
        return read_series(self.series_ndjson) if self.series_ndjson.exists() else []

    def write_run_info(self, info: RunInfo) -> Path:
        return info.write(self.run_json)

    def read_run_info(self) -> RunInfo | None:
        """The run's record, or ``None`` when run.json was never written (an interrupted run)."""
        return RunInfo.read(self.run_json)

    def run_info(self) -> RunInfo:
        """The run's record; a minimal one naming the directory when run.json was never written."""
        return self.read_run_info() or RunInfo(run_id=self.run_id)


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
