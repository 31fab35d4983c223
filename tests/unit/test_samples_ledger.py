"""Samples NDJSON store and the write-ahead ledger."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.runfiles.ledger import Ledger
from harness.runfiles.samples import Sample, SampleStore, cell_key, read_samples

meta = st.fixed_dictionaries(
    {
        "scenario": st.sampled_from(["replicated_write", "latency_sweep"]),
        "pair": st.sampled_from(["single-az", "multi-az"]),
        "mode": st.sampled_from(["replicated", "disconnected"]),
        "workload": st.from_regex(r"\A[a-z0-9-]{1,20}\Z"),
        "impairment": st.sampled_from(["none", "rtt5ms"]),
        "rtt_ms": st.floats(0, 100),
    }
)


@given(st.floats(min_value=0, allow_nan=False, allow_infinity=False), meta)  # a negative bw is corrupt
def test_sample_round_trip(value: float, metadata: dict[str, object]) -> None:
    sample = Sample("bw", value, "MiB/s", metadata, timestamp=1.5)
    back = Sample.from_json(sample.to_json())
    assert back == sample
    assert back.cell == cell_key(metadata)


def test_nan_is_stored_as_null_and_read_back_as_nan(tmp_path: Path) -> None:
    store = SampleStore(tmp_path / "s.ndjson")
    store.append([Sample("clat_p99", float("nan"), "ms", {"scenario": "x"})])
    assert '"value": null' in (tmp_path / "s.ndjson").read_text()
    assert math.isnan(read_samples(tmp_path / "s.ndjson")[0].value)


def test_store_appends(tmp_path: Path) -> None:
    store = SampleStore(tmp_path / "r" / "s.ndjson")
    store.append([Sample("bw", 1.0, "MiB/s")])
    store.append([Sample("iops", 2.0, "IOPS"), Sample("bw", 3.0, "MiB/s")])
    assert [s.value for s in store] == [1.0, 2.0, 3.0]


def test_bad_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "s.ndjson"
    path.write_text(Sample("bw", 1.0, "MiB/s").to_json() + "\n{not json\n")
    with pytest.raises(ConfigError, match=r"s.ndjson:2: not a sample record"):
        read_samples(path)


def test_ledger_open_faults(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.ndjson", "20261121-101500-ab12")
    ledger.record("impair-intent", {"token": "a", "node": "n1"})
    ledger.record("impair-intent", {"token": "b", "node": "n2"})
    ledger.record("impair-cleared", {"token": "a"})
    assert [e["token"] for e in ledger.open_faults()] == ["b"]
    assert all(e["run_id"] == "20261121-101500-ab12" for e in ledger.entries())


def test_ledger_redacts_secrets(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.ndjson", "20261121-101500-ab12")
    ledger.record(
        "cmd", {"stderr": "sudo: password=hunter2 rejected", "key": "-----BEGIN OPENSSH PRIVATE KEY-----\nabc"}
    )
    text = (tmp_path / "ledger.ndjson").read_text()
    assert "hunter2" not in text and "abc" not in text and "***redacted***" in text
