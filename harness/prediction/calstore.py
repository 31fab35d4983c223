"""Calibrations kept across runs: a pair's calibration is reused while what it measured is unchanged.

A calibration measures the pair's parts (disk, path, DRBD on both nodes).  It stays true while
those parts are the same, so a run reuses the newest stored calibration of the pair whose
provenance matches exactly (both nodes' kernel, DRBD, fio and tool versions and distribution,
their instance types, the pair's protocol, the hash of the whole inventory, the profile that
scaled the calibration cells) and that is younger than ``max_age_s``.  Anything else, or
``recalibrate``, measures afresh and stores the result.  The directory is
:meth:`harness.runfiles.rundir.calibrations_dir` (``reports/calibrations/``), one JSON file per calibration.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import secrets
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from harness.errors import ConfigError
from harness.prediction.calibration import PairCalibration
from harness.userfiles.jsonsafe import dumps

__all__ = ["DEFAULT_MAX_AGE_S", "CalibrationStore", "calibration_age", "inventory_hash", "parse_age"]

#: reuse a calibration for a week unless told otherwise (a cluster that changed has new provenance)
DEFAULT_MAX_AGE_S = 7 * 86400.0

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_age(text: str) -> float:
    """``7d``, ``12h``, ``90m``, ``30s`` or plain seconds; ``0`` never reuses."""
    value = text.strip().lower()
    unit = _UNITS.get(value[-1:])
    number = value[:-1] if unit is not None else value
    try:
        seconds = float(number) * (unit or 1.0)
    except ValueError:
        raise ConfigError(f"calibration max age {text!r}: expected e.g. 7d, 12h, 90m or seconds") from None
    if not seconds >= 0 or seconds == float("inf"):
        raise ConfigError(f"calibration max age {text!r}: must be a finite age >= 0")
    return seconds


def calibration_age(text: str) -> float:
    """:func:`parse_age` as a command-line option type."""
    try:
        return parse_age(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def inventory_hash(inventory: Any) -> str:
    """SHA-256 of the inventory's validated content (comments and key order do not count)."""
    text = json.dumps(inventory.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _calibration_from(data: Mapping[str, Any]) -> PairCalibration:
    known = {f.name for f in fields(PairCalibration)}
    values = {k: v for k, v in data.items() if k in known}
    values["notes"] = tuple(values.get("notes", ()))
    values["left_out"] = tuple(values.get("left_out", ()))
    return PairCalibration(**values)


@dataclass(frozen=True)
class CalibrationStore:
    """Where calibrations are kept and when one may be reused."""

    directory: Path
    max_age_s: float = DEFAULT_MAX_AGE_S
    recalibrate: bool = False

    def find(self, provenance: Mapping[str, str], *, full: bool, now: float | None = None) -> PairCalibration | None:
        """The newest stored calibration of exactly this provenance, young enough and complete
        enough (``full``), marked reused; None when there is none or ``recalibrate``."""
        if self.recalibrate or not self.directory.is_dir():
            return None
        now = time.time() if now is None else now
        best: PairCalibration | None = None
        for path in self.directory.glob("*.json"):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                if data.get("provenance") != dict(provenance):
                    continue
                found = _calibration_from(data["calibration"])
            except (OSError, ValueError, TypeError, KeyError, AttributeError):
                continue  # a damaged or foreign file is not a calibration: measure instead
            if now - found.measured_at > self.max_age_s or (full and not found.full):
                continue
            if best is None or found.measured_at > best.measured_at:
                best = found
        return replace(best, reused=True) if best is not None else None

    def save(self, calibration: PairCalibration, provenance: Mapping[str, str]) -> PairCalibration:
        """Store a fresh calibration under a new id; returns it with that id."""
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(calibration.measured_at))
        stored = replace(calibration, id=f"{calibration.pair}-{stamp}-{secrets.token_hex(2)}", reused=False)
        self.directory.mkdir(parents=True, exist_ok=True)
        body = asdict(stored)
        body.pop("reused")
        path = self.directory / f"{stored.id}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(dumps({"provenance": dict(provenance), "calibration": body}, indent=2), encoding="utf-8")
        os.replace(tmp, path)  # a reader never sees half a file
        return stored
