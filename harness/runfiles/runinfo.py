"""A run's record, ``reports/<run-id>/run.json``: what ran, against what, when, with which tools.

The one writer and reader of run.json.  The pytest plugin writes it once, at the end of a run;
the report header, the baseline gate, ``harness baseline save`` and ``harness compare`` read it.
One key set::

    run_id          the run's id (reports/<run-id>/)
    inventory_path  the inventory file the run read
    inventory_name  its ``name:``
    profile         quick | standard | full
    started         ISO 8601, UTC, seconds
    finished        ISO 8601, UTC, seconds
    argv            the command line
    versions        controller-side tools: harness, python, pytest, pytest-xdist (node-side
                    fio/kernel/DRBD versions travel with every sample: they can differ per node)
    exitstatus      pytest's exit status of the run, after the run's own gates judged it
    clock_offsets   each node's clock minus the controller's, read after preflight ("start")
                    and at the end of the run ("end"): ``{phase: {node: {offset_s,
                    uncertainty_s} | {error}}}`` (:mod:`harness.runfiles.clockskew`)
    interrupted     the test a Ctrl-C/SIGTERM/SIGHUP ended and the signal, when one did

Older files stay readable: ``inventory`` is the old name of ``inventory_path`` and ``started``
was once a Unix time; both are read as what they mean.  Keys this version does not know are
kept (:attr:`RunInfo.extra`), so reading and writing again loses nothing.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from harness.errors import ConfigError
from harness.redact import redact_obj, redact_url
from harness.userfiles.jsonsafe import dumps, loads
from harness.userfiles.userfile import read_config_text

__all__ = ["RUN_JSON", "RunInfo", "iso_time", "tool_versions"]

#: File name of the record inside a run directory.
RUN_JSON: Final = "run.json"
_KNOWN: Final = (
    "run_id",
    "inventory_path",
    "inventory_name",
    "profile",
    "started",
    "finished",
    "argv",
    "versions",
    "exitstatus",
    "clock_offsets",
    "interrupted",
)
#: Keys written by older harness versions, and the key each one is now.
_RENAMED: Final = {"inventory": "inventory_path"}
#: Distributions whose versions :func:`tool_versions` records (when installed).
_TOOLS: Final = ("harness", "pytest", "pytest-xdist")


def iso_time(when: float | datetime) -> str:
    """``2026-11-21T10:15:00+00:00``: a Unix time or a datetime in UTC, to the second."""
    moment = when if isinstance(when, datetime) else datetime.fromtimestamp(when, UTC)
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def tool_versions() -> dict[str, str]:
    """Versions of the controller-side tools: python and the installed :data:`_TOOLS`."""
    versions = {"python": platform.python_version()}
    for name in _TOOLS:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def _time(data: Mapping[str, Any], key: str, where: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool):
        raise ConfigError(f"{where}: {key} must be a time")
    if isinstance(value, int | float):  # an older harness wrote a Unix time
        try:
            return iso_time(float(value))
        except (OverflowError, OSError, ValueError):
            raise ConfigError(f"{where}: {key} {value!r} is no time") from None
    return str(value)


def _opt_str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return None if value is None else str(value)


def _opt_int(data: Mapping[str, Any], key: str, where: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{where}: {key} must be an integer")
    return value


def _write_atomic(path: Path, text: str) -> None:
    # A reader (CI artifact upload, a re-render) never sees a half-written file.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


@dataclass(frozen=True)
class RunInfo:
    """The record of one run; times are ISO 8601 strings (shown verbatim in the report header)."""

    run_id: str
    inventory_path: str | None = None
    inventory_name: str | None = None
    profile: str | None = None
    started: str | None = None
    finished: str | None = None
    argv: tuple[str, ...] = ()
    #: Tool versions of the controller side (harness, python, pytest...); node-side versions
    #: (fio, kernel, DRBD) travel with every sample instead, because they can differ per node.
    versions: Mapping[str, str] = field(default_factory=dict)
    #: pytest's exit status, when the run finished (a baseline saved from a failing run says so).
    exitstatus: int | None = None
    #: Each node's clock offset at the start and at the end of the run (:mod:`harness.runfiles.clockskew`).
    clock_offsets: Mapping[str, Any] = field(default_factory=dict)
    #: ``tests/x.py::test_y by SIGTERM`` when an interrupt (Ctrl-C, SIGTERM, SIGHUP) ended the run
    interrupted: str | None = None
    #: Keys this version of the harness does not know, kept so a re-render loses nothing.
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # The command line quotes what the user typed (--results-db postgresql://ci:SECRET@db,
        # --pushgateway https://u:SECRET@...): redacted when a record is made or read, so run.json,
        # report.html, a saved baseline and the results database all get the clean text.
        object.__setattr__(self, "argv", tuple(redact_url(a) for a in self.argv))
        object.__setattr__(self, "extra", MappingProxyType(redact_obj(dict(self.extra))))
        # ... and so is every other text of it: a run.json from elsewhere may name its inventory
        # (or anything) with a URL that holds a password, which history would print
        for name in ("inventory_path", "inventory_name", "profile", "interrupted"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, redact_url(value))
        object.__setattr__(self, "versions", MappingProxyType(redact_obj(dict(self.versions))))
        object.__setattr__(self, "clock_offsets", MappingProxyType(redact_obj(dict(self.clock_offsets))))

    def to_dict(self) -> dict[str, Any]:
        return {
            **dict(self.extra),
            "run_id": self.run_id,
            "inventory_path": self.inventory_path,
            "inventory_name": self.inventory_name,
            "profile": self.profile,
            "started": self.started,
            "finished": self.finished,
            "argv": list(self.argv),
            "versions": dict(self.versions),
            "exitstatus": self.exitstatus,
            "clock_offsets": dict(self.clock_offsets),
            "interrupted": self.interrupted,
        }

    def to_json(self) -> str:
        return dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = RUN_JSON) -> RunInfo:
        if not isinstance(data, Mapping) or not data.get("run_id"):
            raise ConfigError(f"{where}: not run metadata (an object with a run_id is expected)")
        current = dict(data)
        for old, new in _RENAMED.items():
            value = current.pop(old, None)
            if current.get(new) is None:
                current[new] = value
        argv = current.get("argv") or []
        versions = current.get("versions") or {}
        clocks = current.get("clock_offsets") or {}
        if not isinstance(argv, list) or not isinstance(versions, Mapping) or not isinstance(clocks, Mapping):
            raise ConfigError(f"{where}: argv must be a list, versions and clock_offsets objects")
        return cls(
            run_id=str(current["run_id"]),
            inventory_path=_opt_str(current, "inventory_path"),
            inventory_name=_opt_str(current, "inventory_name"),
            profile=_opt_str(current, "profile"),
            started=_time(current, "started", where),
            finished=_time(current, "finished", where),
            argv=tuple(str(a) for a in argv),
            versions=MappingProxyType({str(k): str(v) for k, v in versions.items()}),
            exitstatus=_opt_int(current, "exitstatus", where),
            clock_offsets=MappingProxyType(dict(clocks)),
            interrupted=_opt_str(current, "interrupted"),
            extra=MappingProxyType({k: v for k, v in current.items() if k not in _KNOWN}),
        )

    @classmethod
    def from_json(cls, text: str, *, where: str = RUN_JSON) -> RunInfo:
        try:
            data = loads(text)
        except (ValueError, RecursionError) as exc:  # RecursionError: arrays nested thousands deep
            raise ConfigError(f"{where}: not valid JSON: {exc}") from None
        return cls.from_dict(data, where=where)

    @classmethod
    def read(cls, path: Path) -> RunInfo | None:
        """The record in file ``path``, or ``None`` when it was never written (an interrupted run)."""
        if not os.path.lexists(path):
            return None
        return cls.from_json(read_config_text(path, "run record"), where=str(path))

    def write(self, path: Path) -> Path:
        """Write the record to ``path`` (replaced whole, never half-written); returns ``path``."""
        _write_atomic(path, self.to_json())
        return path
