"""Saved baselines on disk: ``reports/baselines/<inventory>/<name>/``.

A baseline is a copy of one run's ``samples.ndjson`` (the source of truth; cells, medians and
spreads are recomputed from it, so a later harness reads old baselines the same way it reads
old runs) and a ``baseline.json`` saying what it is::

    reports/baselines/
      prod-multi-az/                 the inventory's name: a baseline belongs to one cluster
        main/
          baseline.json              name, inventory, saved (UTC), run id, cells, the run's run.json
          samples.ndjson

Names become directory names, so they are checked before anything is written: letters,
digits, ``.``, ``_``, ``-``, not starting with ``.`` or ``-`` — no ``/``, no ``..``.  Saving
over an existing baseline, or into a directory of that name that holds no baseline, is refused
unless asked for; a file in the way is never replaced.  The replacement is swapped in with
renames, so a reader never sees half a baseline, and a baseline owns only ``baseline.json``
and ``samples.ndjson``: anything else in its directory (a README, notes) is kept.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from filelock import FileLock

from harness.errors import ConfigError
from harness.redact import redact_obj, redact_url
from harness.report.aggregate import aggregate_samples
from harness.runfiles.rundir import BASELINE_INFO, RunDir
from harness.runfiles.runinfo import RunInfo
from harness.runfiles.samples import Sample, read_samples
from harness.userfiles.jsonsafe import dumps, loads
from harness.userfiles.names import NAME_RULE, name_problem
from harness.userfiles.userfile import read_config_text

__all__ = [
    "BASELINES_DIR",
    "BaselineExists",
    "BaselineInfo",
    "BaselineStore",
    "NameTaken",
    "NotABaseline",
    "validate_name",
]

#: Directory under the reports root that holds baselines.
BASELINES_DIR: Final = "baselines"
_INFO_FILE: Final = BASELINE_INFO
_SAMPLES_FILE: Final = "samples.ndjson"
# What a baseline owns in its directory: only these are ever replaced or removed.
_OWNED: Final = frozenset({_INFO_FILE, _SAMPLES_FILE})
# Keys of baseline.json this version reads; others are kept as they are (``extra``).
_KNOWN: Final = frozenset({"name", "inventory", "saved", "run_id", "cells", "samples", "exitstatus", "run"})


def validate_name(name: str, what: str = "baseline name") -> str:
    """``name`` if it follows the one name rule (:mod:`harness.userfiles.names`); ConfigError
    saying what is allowed otherwise."""
    problem = name_problem(name)
    if problem == NAME_RULE:
        raise ConfigError(f"{what} {name!r}: {problem} (it names a directory under reports/baselines/)")
    if problem is not None:
        raise ConfigError(f"{what} {name!r} is reserved: {problem}")
    return name


@dataclass(frozen=True)
class BaselineInfo:
    """What ``baseline.json`` records about one saved baseline."""

    name: str
    inventory: str
    saved: str
    run_id: str
    cells: int
    samples: int
    path: Path
    #: The source run's pytest exit status when known (a baseline saved from a failing run says so).
    exitstatus: int | None = None
    run: RunInfo | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def samples_ndjson(self) -> Path:
        return self.path / _SAMPLES_FILE

    def read_samples(self) -> list[Sample]:
        return read_samples(self.samples_ndjson)

    def to_dict(self) -> dict[str, Any]:
        return {
            **dict(self.extra),
            "name": self.name,
            "inventory": self.inventory,
            "saved": self.saved,
            "run_id": self.run_id,
            "cells": self.cells,
            "samples": self.samples,
            "exitstatus": self.exitstatus,
            "run": None if self.run is None else self.run.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: Path) -> BaselineInfo:
        where = str(path / _INFO_FILE)
        try:
            run = data.get("run")
            exitstatus = data.get("exitstatus")
            # its texts are shown and written (list, show, compare's Markdown): redacted as a run's are
            return cls(
                name=redact_url(str(data["name"])),
                inventory=redact_url(str(data["inventory"])),
                saved=redact_url(str(data["saved"])),
                run_id=redact_url(str(data["run_id"])),
                cells=int(data["cells"]),
                samples=int(data["samples"]),
                path=path,
                exitstatus=None if exitstatus is None else int(exitstatus),
                run=None if run is None else RunInfo.from_dict(run, where=where),
                extra=MappingProxyType({k: redact_obj(v) for k, v in data.items() if k not in _KNOWN}),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"{where}: not baseline metadata ({exc})") from None

    @classmethod
    def read(cls, path: Path) -> BaselineInfo:
        """The baseline in directory ``path``; ConfigError if it is not one."""
        info = path / _INFO_FILE
        if not os.path.lexists(info):
            raise ConfigError(f"{path}: not a baseline (no {_INFO_FILE})")
        text = read_config_text(info, "baseline metadata")  # regular, bounded, UTF-8
        try:
            data = loads(text)
        except (ValueError, RecursionError) as exc:  # RecursionError: arrays nested thousands deep
            raise ConfigError(f"{info}: not valid JSON: {exc}") from None
        if not isinstance(data, Mapping):
            raise ConfigError(f"{info}: not baseline metadata (expected an object)")
        return cls.from_dict(data, path)


class NameTaken(ConfigError):
    """Something is at the baseline's path already and overwriting was not asked for."""

    #: What the overwrite option would do here, for the hint.
    overwrite_does = "to replace it"

    def with_hint(self, overwrite_option: str) -> str:
        """The message and what to do, naming the caller's own overwrite option."""
        return f"{self}; nothing was changed: choose another name, or pass {overwrite_option} {self.overwrite_does}"


class BaselineExists(NameTaken):
    """Saving would replace a baseline and overwriting was not asked for."""

    def __init__(self, info: BaselineInfo) -> None:
        super().__init__(
            f"baseline {info.name!r} of inventory {info.inventory!r} already exists "
            f"(saved {info.saved} from run {info.run_id})"
        )
        self.info = info


class NotABaseline(NameTaken):
    """The baseline's directory exists with other files in it and no baseline."""

    overwrite_does = "to save the baseline there (those files are kept)"

    def __init__(self, path: Path, others: list[str]) -> None:
        super().__init__(f"{path} exists and holds no baseline ({', '.join(others)})")


def _not_owned(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir() if p.name not in _OWNED)


def _link_or_copy(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
    # a hard link is the same file, untouched; a copy where links are not possible
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError:
        shutil.copy2(src, dst, follow_symlinks=False)


def _carry_over(old: Path, new: Path) -> None:
    """Put everything in ``old`` that the baseline does not own into ``new``, as it is."""
    for name in _not_owned(old):
        entry = old / name
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, new / name, symlinks=True, copy_function=_link_or_copy)
        else:
            _link_or_copy(entry, new / name)


def _inventory_of(info: RunInfo | None, samples: Sequence[Sample]) -> str | None:
    if info is not None and info.inventory_name:
        return info.inventory_name
    names = {str(s.metadata["inventory"]) for s in samples if s.metadata.get("inventory")}
    return names.pop() if len(names) == 1 else None


class BaselineStore:
    """The baselines under ``reports_root/baselines``."""

    def __init__(self, reports_root: Path) -> None:
        self.root = reports_root / BASELINES_DIR

    def path(self, inventory: str, name: str) -> Path:
        validate_name(inventory, "inventory name")
        return self.root / inventory / validate_name(name)

    def exists(self, inventory: str, name: str) -> bool:
        return (self.path(inventory, name) / _INFO_FILE).exists()

    def check_save(self, inventory: str, name: str, *, overwrite: bool) -> None:
        """Raise unless baseline ``name`` may be saved: :class:`NameTaken` when something is
        there and ``overwrite`` is false; ConfigError for a file or link in the way (always)."""
        target = self.path(inventory, name)
        if not os.path.lexists(target):
            return
        if target.is_symlink() or not target.is_dir():
            kind = "a symbolic link" if target.is_symlink() else "not a directory"
            raise ConfigError(
                f"{target} exists and is {kind}; nothing was changed: choose another name or move it away"
            )
        if overwrite:
            return
        if (target / _INFO_FILE).exists():
            raise BaselineExists(BaselineInfo.read(target))
        raise NotABaseline(target, _not_owned(target))

    def kept_files(self, info: BaselineInfo) -> list[str]:
        """What is in a baseline's directory besides the baseline (kept over every save)."""
        return _not_owned(info.path)

    def load(self, inventory: str, name: str) -> BaselineInfo:
        path = self.path(inventory, name)
        if not (path / _INFO_FILE).exists():
            known = ", ".join(b.name for b in self.saved(inventory)) or "none"
            raise ConfigError(f"no baseline {name!r} for inventory {inventory!r} (saved for it: {known})")
        return BaselineInfo.read(path)

    def saved(self, inventory: str | None = None) -> list[BaselineInfo]:
        """Saved baselines, by inventory then name; directories that are not baselines are skipped."""
        if not self.root.is_dir():
            return []
        out = []
        for inv_dir in sorted(self.root.iterdir()):
            if not inv_dir.is_dir() or (inventory is not None and inv_dir.name != inventory):
                continue
            out += [BaselineInfo.read(d) for d in sorted(inv_dir.iterdir()) if (d / _INFO_FILE).is_file()]
        return out

    def find(self, name: str, inventory: str | None = None) -> BaselineInfo:
        """Baseline ``name`` of ``inventory``; with no inventory, the only baseline of that name."""
        validate_name(name)
        if inventory is not None:
            return self.load(inventory, name)
        found = [b for b in self.saved() if b.name == name]
        if len(found) == 1:
            return found[0]
        if not found:
            known = ", ".join(sorted({f"{b.inventory}/{b.name}" for b in self.saved()})) or "none"
            raise ConfigError(f"no baseline named {name!r} under {self.root} (saved: {known})")
        inventories = ", ".join(b.inventory for b in found)
        raise ConfigError(f"baseline {name!r} exists for several inventories ({inventories}); name the inventory")

    def save(
        self,
        name: str,
        run: RunDir,
        samples: Sequence[Sample],
        run_info: RunInfo | None,
        *,
        inventory: str | None = None,
        overwrite: bool = False,
        exitstatus: int | None = None,
        now: datetime | None = None,
    ) -> BaselineInfo:
        """Save ``run``'s ``samples`` (as read: validated, redacted) as baseline ``name`` of
        ``inventory`` (default: the run's own); ``run_info`` is its record, when it has one.

        Both are what the caller holds in memory already: nothing of the run is read here.
        """
        validate_name(name)
        if not samples:
            raise ConfigError(f"{run.samples_ndjson}: no samples; a baseline needs at least one measured cell")
        inventory = inventory or _inventory_of(run_info, samples)
        if inventory is None:
            raise ConfigError(f"{run.path}: cannot tell which inventory this run measured; name it explicitly")
        target = self.path(inventory, name)
        tmp = target.parent / f".{name}.{os.getpid()}.new"
        old = target.parent / f".{name}.{os.getpid()}.old"
        try:
            return self._save_locked(
                target=target,
                tmp=tmp,
                old=old,
                name=name,
                inventory=inventory,
                run=run,
                samples=samples,
                run_info=run_info,
                exitstatus=exitstatus,
                now=now,
                overwrite=overwrite,
            )
        except OSError as exc:  # a read-only or full file system, a file where a directory should be
            shutil.rmtree(tmp, ignore_errors=True)
            if old.exists() and not target.exists():
                with contextlib.suppress(OSError):
                    old.rename(target)  # the baseline it was replacing stays as it was
            raise ConfigError(f"{self.root}: cannot save baseline {name!r} there: {exc.strerror or exc}") from None

    def _save_locked(
        self,
        *,
        target: Path,
        tmp: Path,
        old: Path,
        name: str,
        inventory: str,
        run: RunDir,
        samples: Sequence[Sample],
        run_info: RunInfo | None,
        exitstatus: int | None,
        now: datetime | None,
        overwrite: bool,
    ) -> BaselineInfo:
        target.parent.mkdir(parents=True, exist_ok=True)
        # The lock lives with the run locks, not in baselines/, which may be committed to git.
        locks = self.root.parent / ".locks"
        locks.mkdir(exist_ok=True)
        with FileLock(str(locks / f"baseline-{inventory}-{name}.lock")):
            self.check_save(inventory, name, overwrite=overwrite)
            info = BaselineInfo(
                name=name,
                inventory=inventory,
                saved=(now or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="seconds"),
                run_id=run_info.run_id if run_info is not None else run.run_id,
                cells=len(aggregate_samples(samples)),
                samples=len(samples),
                path=target,
                exitstatus=exitstatus,
                run=run_info,
            )
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir()
            # The samples as read (validated, redacted), not the file's bytes: a run written by an
            # older harness may hold text that is redacted only on reading.
            (tmp / _SAMPLES_FILE).write_text("".join(f"{s.to_json()}\n" for s in samples), encoding="utf-8")
            (tmp / _INFO_FILE).write_text(dumps(info.to_dict(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
            if target.exists():
                _carry_over(target, tmp)
                target.rename(old)
            tmp.rename(target)
            shutil.rmtree(old, ignore_errors=True)
        return info
