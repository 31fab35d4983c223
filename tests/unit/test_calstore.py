"""Calibrations kept across runs (harness.prediction.calstore) and the calibration cells' scale."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.fio.profiles import PROFILES
from harness.prediction.calibrate import QUICK_CALIBRATION_RUNTIME_S, PairCalibration, cells_profile
from harness.prediction.calstore import CalibrationStore, parse_age

PROVENANCE = {
    "pair": "single-az",
    "protocol": "C",
    "profile": "quick",
    "inventory_sha256": "0123456789abcdef",
    "kernel_primary": "5.10.0",
    "drbd_primary": "8.4.11",
    "fio_primary": "fio-3.25",
    "instance_type_primary": "lab-uml",
}
NOW = 1_795_600_000.0
DAY = 86400.0


def _calibration(measured_at: float, *, full: bool = True) -> PairCalibration:
    # the single-az figures measured on lab7 (2026-11-25)
    quick = PairCalibration(
        "single-az", "C", local_write_ms=0.0607, local_iops=16483.3, rtt_ms=0.11, measured_at=measured_at
    )
    return replace(quick, replicated_write_ms=0.327, replicated_rtt_ms=0.123, path_mbit=3387.9) if full else quick


def test_a_stored_calibration_comes_back_equal_and_marked_reused(tmp_path: Path) -> None:
    store = CalibrationStore(tmp_path)
    saved = store.save(_calibration(NOW - DAY), PROVENANCE)
    assert saved.id.startswith("single-az-") and not saved.reused
    found = store.find(PROVENANCE, full=True, now=NOW)
    assert found is not None and found.reused
    assert found.id == saved.id and found.measured_at == saved.measured_at
    assert found.replicated_write_ms == saved.replicated_write_ms and found.notes == saved.notes
    assert "reused" in found.source and saved.id in found.source


@given(st.sampled_from(sorted(PROVENANCE)), st.text(min_size=1, max_size=12))
def test_any_changed_provenance_measures_afresh(tmp_path_factory: pytest.TempPathFactory, key: str, value: str) -> None:
    store = CalibrationStore(tmp_path_factory.mktemp("cal"))
    store.save(_calibration(NOW - 60), PROVENANCE)
    changed = {**PROVENANCE, key: PROVENANCE[key] + value}
    assert store.find(changed, full=True, now=NOW) is None
    assert store.find({**PROVENANCE, "drbd_secondary": "9.2.0"}, full=True, now=NOW) is None


def test_too_old_or_recalibrate_measures_afresh(tmp_path: Path) -> None:
    CalibrationStore(tmp_path).save(_calibration(NOW - 8 * DAY), PROVENANCE)
    assert CalibrationStore(tmp_path).find(PROVENANCE, full=True, now=NOW) is None  # default: 7 days
    assert CalibrationStore(tmp_path, max_age_s=9 * DAY).find(PROVENANCE, full=True, now=NOW) is not None
    assert CalibrationStore(tmp_path, max_age_s=9 * DAY, recalibrate=True).find(PROVENANCE, full=True, now=NOW) is None


def test_a_quick_calibration_does_not_stand_in_for_a_full_one(tmp_path: Path) -> None:
    store = CalibrationStore(tmp_path)
    store.save(_calibration(NOW - 60, full=False), PROVENANCE)
    assert store.find(PROVENANCE, full=True, now=NOW) is None
    assert store.find(PROVENANCE, full=False, now=NOW) is not None


def test_the_newest_matching_calibration_wins_and_damaged_files_are_skipped(tmp_path: Path) -> None:
    store = CalibrationStore(tmp_path)
    store.save(_calibration(NOW - 3 * DAY), PROVENANCE)
    newest = store.save(_calibration(NOW - DAY), PROVENANCE)
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "other.json").write_text('{"provenance": 3}', encoding="utf-8")
    found = store.find(PROVENANCE, full=True, now=NOW)
    assert found is not None and found.id == newest.id


def test_no_directory_no_calibration(tmp_path: Path) -> None:
    assert CalibrationStore(tmp_path / "absent").find(PROVENANCE, full=False, now=NOW) is None


@given(st.integers(min_value=0, max_value=10_000), st.sampled_from([("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]))
def test_parse_age_units(number: int, unit: tuple[str, int]) -> None:
    assert parse_age(f"{number}{unit[0]}") == number * unit[1]
    assert parse_age(str(number)) == number


@pytest.mark.parametrize("text", ["", "d", "-1d", "7w", "inf", "nan", "1e999h"])
def test_parse_age_refuses(text: str) -> None:
    with pytest.raises(ConfigError):
        parse_age(text)


def test_only_the_quick_profile_shortens_the_calibration_cells() -> None:
    quick = cells_profile(PROFILES["quick"])
    assert quick.runtime_s == QUICK_CALIBRATION_RUNTIME_S < PROFILES["quick"].runtime_s
    assert quick.sizes == PROFILES["quick"].sizes
    assert cells_profile(PROFILES["standard"]) == PROFILES["standard"]
