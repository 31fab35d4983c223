"""Run metadata (``reports/<run-id>/run.json``): what ran, against what, when, with which tools.

Its own module because both the renderers (report header) and :mod:`harness.report.run_dir`
(which reads and writes the file) need it, and neither should import the other.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from harness.errors import ConfigError
from harness.jsonsafe import dumps

__all__ = ["RunInfo"]

_KNOWN = ("run_id", "inventory_path", "inventory_name", "profile", "started", "finished", "argv", "versions")


def _opt_str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return None if value is None else str(value)


@dataclass(frozen=True)
class RunInfo:
    """Metadata of one run; times are ISO 8601 strings (written by the plugin, shown verbatim)."""

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
    #: Keys this version of the harness does not know, kept so a re-render loses nothing.
    extra: Mapping[str, Any] = field(default_factory=dict)

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
        }

    def to_json(self) -> str:
        return dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "run.json") -> RunInfo:
        if not isinstance(data, Mapping) or not data.get("run_id"):
            raise ConfigError(f"{where}: not run metadata (an object with a run_id is expected)")
        argv = data.get("argv") or []
        versions = data.get("versions") or {}
        if not isinstance(argv, list) or not isinstance(versions, Mapping):
            raise ConfigError(f"{where}: argv must be a list and versions an object")
        return cls(
            run_id=str(data["run_id"]),
            inventory_path=_opt_str(data, "inventory_path"),
            inventory_name=_opt_str(data, "inventory_name"),
            profile=_opt_str(data, "profile"),
            started=_opt_str(data, "started"),
            finished=_opt_str(data, "finished"),
            argv=tuple(str(a) for a in argv),
            versions=MappingProxyType({str(k): str(v) for k, v in versions.items()}),
            extra=MappingProxyType({k: v for k, v in data.items() if k not in _KNOWN}),
        )

    @classmethod
    def from_json(cls, text: str, *, where: str = "run.json") -> RunInfo:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ConfigError(f"{where}: not valid JSON: {exc}") from None
        return cls.from_dict(data, where=where)
