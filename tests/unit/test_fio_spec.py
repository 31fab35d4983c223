"""WorkloadSpec validation, ids, layout checks and profiles (harness.fio.spec)."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError, HarnessError
from harness.fio import (
    DEFAULT_PERCENTILES,
    LABEL_ZONE_BYTES,
    PROFILES,
    RW_MODES,
    SteadyState,
    VerifySpec,
    WorkloadSpec,
    fio_size_text,
    precondition_fill,
)
from harness.units import parse_size

MiB = 1024**2
GiB = 1024**3

_BLOCKS = [512, 4096, 8192, 16384, 32768, 65536, MiB]
_MIXED = {"rw", "randrw"}
_WRITES = {"write", "randwrite", "rw", "randrw"}


@st.composite
def workload_specs(draw: st.DrawFn) -> WorkloadSpec:
    """Valid, verify-free workloads across the whole option space."""
    rw = draw(st.sampled_from(RW_MODES))
    bs = draw(st.sampled_from(_BLOCKS))
    bs_max = draw(st.none() | st.sampled_from([b for b in _BLOCKS if b >= bs]))
    size = (bs_max or bs) * draw(st.integers(1, 4096))
    time_based = draw(st.booleans())
    runtime = draw(st.integers(1, 600)) if time_based else draw(st.none() | st.integers(1, 600))
    writes = rw in _WRITES
    return WorkloadSpec(
        name=draw(st.from_regex(r"\A[a-z0-9][a-z0-9_.-]{0,20}\Z")),
        rw=rw,
        size=size,
        bs=bs,
        bs_max=bs_max,
        numjobs=draw(st.integers(1, 64)),
        iodepth=draw(st.integers(1, 256)),
        offset=512 * draw(st.integers(0, 2**20)),
        offset_increment=draw(st.none() | st.integers(0, 2**20).map(lambda n: n * 512)),
        runtime_s=runtime,
        ramp_s=draw(st.integers(0, 30)),
        time_based=time_based,
        rwmixread=draw(st.none() | st.integers(0, 100)) if rw in _MIXED else None,
        fsync=draw(st.integers(0, 32)) if writes else 0,
        sync=draw(st.booleans()) if writes else False,
        end_fsync=draw(st.booleans()) if writes else False,
        norandommap=draw(st.booleans()),
        randseed=draw(st.none() | st.integers(0, 2**32)),
        number_ios=draw(st.none() | st.integers(1, 10**6)),
    )


def _spec(**overrides: Any) -> WorkloadSpec:
    fields: dict[str, Any] = {"name": "cell", "rw": "randwrite", "size": 64 * MiB}
    fields.update(overrides)
    return WorkloadSpec(**fields)


# -- ids --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"bs": 4096, "numjobs": 8, "iodepth": 1}, "randwrite-4k-nj8-qd1"),
        ({"rw": "write", "bs": MiB, "iodepth": 32}, "write-1m-nj1-qd32"),
        (
            {"rw": "randrw", "rwmixread": 70, "bs": 4096, "bs_max": 32768, "numjobs": 4},
            "randrw70-4k-32k-nj4-qd1",
        ),
        ({"rw": "randread", "bs": 6144}, "randread-6k-nj1-qd1"),
        ({"sync": True, "fsync": 1, "end_fsync": True}, "randwrite-4k-nj1-qd1-sync-fsync1-endfsync"),
        ({"norandommap": True}, "randwrite-4k-nj1-qd1-norandommap"),
        ({"randseed": 7, "verify": VerifySpec()}, "randwrite-4k-nj1-qd1-verify"),
        (
            {"randseed": 7, "verify": VerifySpec(verify_only=True, state_load=True)},
            "randwrite-4k-nj1-qd1-verifyonly",
        ),
        (
            {"runtime_s": 60, "steady_state": SteadyState("iops", 10, duration_s=30)},
            "randwrite-4k-nj1-qd1-ss",
        ),
    ],
)
def test_id_is_readable_and_fixed(overrides: dict[str, Any], expected: str) -> None:
    assert _spec(**overrides).id() == expected


def test_id_with_size_names_the_per_job_size() -> None:
    assert _spec(numjobs=8, size=3 * GiB).id(with_size=True) == "randwrite-4k-nj8-qd1-3g"


@given(workload_specs())
def test_id_is_stable_and_safe(spec: WorkloadSpec) -> None:
    ident = spec.id()
    assert re.fullmatch(r"[a-z0-9.-]+", ident)
    assert dataclasses.replace(spec).id() == ident
    # Profile-dependent fields and the job name never change the id ...
    assert spec.replace(name="other", runtime_s=999, time_based=True, ramp_s=0).id() == ident
    assert spec.replace(size=spec.size * 2).id() == ident
    # ... but everything that shapes the I/O does.
    assert spec.replace(numjobs=spec.numjobs + 1).id() != ident
    assert spec.replace(iodepth=spec.iodepth + 1).id() != ident
    assert spec.replace(bs=spec.bs * 2, bs_max=None, size=spec.size * 2).id() != ident
    other_rw = next(m for m in RW_MODES if m != spec.rw)
    changed = spec.replace(rw=other_rw, rwmixread=None, fsync=0, sync=False, end_fsync=False)
    assert changed.id() != ident


# -- validation -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"name": "has space"}, "workload name"),
        ({"name": "a:b"}, "workload name"),
        ({"name": "x;rm"}, "workload name"),
        ({"name": ""}, "workload name"),
        ({"rw": "trim"}, "rw must be one of"),
        ({"size": 0}, "size must be positive"),
        ({"size": -4096}, "size must be positive"),
        ({"size": 1000}, "multiple of 512"),
        ({"size": 2048, "bs": 4096}, "smaller than one block"),
        ({"bs": 1000}, "bs must be a positive multiple of 512"),
        ({"bs": 0}, "bs must be a positive multiple of 512"),
        ({"bs": 8192, "bs_max": 4096}, "upper bound is below"),
        ({"numjobs": 0}, "numjobs must be >= 1"),
        ({"iodepth": 0}, "iodepth must be >= 1"),
        ({"rwmixread": 70}, "rwmixread only applies"),
        ({"rw": "randrw", "rwmixread": 101}, "percentage 0-100"),
        ({"rw": "randread", "fsync": 1}, "need a write workload"),
        ({"fsync": -1}, "fsync must be >= 0"),
        ({"offset": 100}, "offset must be"),
        ({"offset_increment": 100}, "offset_increment must be"),
        ({"runtime_s": 0}, "runtime must be > 0"),
        ({"ramp_s": -1}, "ramp must be >= 0"),
        ({"time_based": True}, "time_based needs a runtime"),
        ({"randseed": -1}, "randseed must be >= 0"),
        ({"number_ios": 0}, "number_ios must be > 0"),
        ({"percentiles": ()}, "must not be empty"),
        ({"percentiles": (99.0, 50.0)}, "strictly increasing"),
        ({"percentiles": (0.0, 50.0)}, r"\(0, 100\]"),
        ({"percentiles": (50.0, 100.5)}, r"\(0, 100\]"),
        ({"percentiles": (50.0, 99.9999999)}, "at most 6 decimals"),
        ({"percentiles": tuple(float(p) for p in range(1, 23))}, "at most 20"),
        ({"steady_state": SteadyState("iops", 10, duration_s=5)}, "needs a runtime"),
        (
            {"runtime_s": 5, "steady_state": SteadyState("iops", 10, duration_s=5, ramp_s=1)},
            "could never be attained",
        ),
        ({"randseed": 1, "norandommap": True, "verify": VerifySpec()}, "norandommap"),
        (
            {"randseed": 1, "time_based": True, "runtime_s": 5, "verify": VerifySpec(verify_only=True)},
            "verify_only cannot be time_based",
        ),
        (
            {"randseed": 1, "time_based": True, "runtime_s": 5, "verify": VerifySpec(do_verify=False)},
            "must not be time_based",
        ),
        ({"randseed": 1, "runtime_s": 5, "verify": VerifySpec(verify_only=True)}, "must not have a runtime"),
        ({"randseed": 1, "ramp_s": 2, "verify": VerifySpec()}, "must not use ramp_time"),
        ({"verify": VerifySpec(do_verify=False)}, "fixed randseed"),
        ({"verify": VerifySpec(verify_only=True)}, "fixed randseed"),
        ({"rw": "read", "verify": VerifySpec(verify_only=True)}, "writes nothing to verify"),
        ({"randseed": 1, "numjobs": 2, "verify": VerifySpec()}, "disjoint regions"),
        (
            {"randseed": 1, "numjobs": 2, "offset_increment": 32 * MiB, "verify": VerifySpec()},
            "disjoint regions",
        ),
    ],
)
def test_bad_workloads_are_refused_with_a_clear_message(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _spec(**overrides)


def test_valid_verify_pair_for_the_failover_oracle() -> None:
    write = _spec(
        numjobs=2,
        iodepth=16,
        offset_increment=64 * MiB,
        randseed=1234,
        verify=VerifySpec(alg="crc32c", do_verify=False, state_save=True),
    )
    check = write.replace(verify=VerifySpec(alg="crc32c", verify_only=True, state_load=True))
    assert write.verify is not None and write.verify.replays_later
    assert check.verify is not None and check.verify.replays_later
    assert check.footprint_bytes == write.footprint_bytes == LABEL_ZONE_BYTES + 128 * MiB


def test_in_job_verify_may_be_time_based() -> None:
    spec = _spec(time_based=True, runtime_s=30, verify=VerifySpec(backlog=64))
    assert spec.verify is not None and not spec.verify.replays_later


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"alg": "null"}, "unknown checksum"),
        ({"alg": "md4"}, "unknown checksum"),
        ({"state_load": True}, "state_load only makes sense with verify_only"),
        ({"backlog": 0}, "positive number of blocks"),
        ({"verify_only": True, "backlog": 8}, "writes nothing"),
    ],
)
def test_bad_verify_settings(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        VerifySpec(**kwargs)


def test_spec_is_frozen_and_errors_are_harness_errors() -> None:
    spec = _spec()
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.size = 1  # type: ignore[misc]
    # the command line turns a HarnessError into its one line and exit code: a bad spec is a
    # usage error (2) that names the workload and the field
    with pytest.raises(HarnessError, match=r"^workload cell: numjobs must be >= 1, got 0$") as info:
        _spec(numjobs=0)
    assert info.value.exit_code == 2
    assert spec.percentiles == DEFAULT_PERCENTILES


# -- layout vs device -------------------------------------------------------------------------


def test_check_fits_exact_and_one_byte_short() -> None:
    spec = _spec(numjobs=8, size=64 * MiB, offset_increment=64 * MiB)
    assert spec.footprint_bytes == 513 * MiB
    spec.check_fits(513 * MiB)
    with pytest.raises(ConfigError, match=r"8 job\(s\) x 64MiB every 64MiB from offset 1MiB ends at byte 537919488"):
        spec.check_fits(513 * MiB - 1)


def test_check_fits_shared_region_and_offset() -> None:
    shared = _spec(numjobs=8, size=64 * MiB)
    assert shared.footprint_bytes == 65 * MiB
    shared.check_fits(65 * MiB)
    offset = _spec(size=64 * MiB, offset=GiB)
    with pytest.raises(ConfigError, match="from offset 1GiB"):
        offset.check_fits(GiB)
    with pytest.raises(ConfigError, match="target size must be positive"):
        shared.check_fits(0)


@given(workload_specs(), st.integers(1, 2**45))
def test_check_fits_refuses_exactly_the_layouts_that_overflow(spec: WorkloadSpec, device: int) -> None:
    # no job writes the label zone at the start of the target
    end = LABEL_ZONE_BYTES + spec.offset + (spec.numjobs - 1) * (spec.offset_increment or 0) + spec.size
    assert spec.footprint_bytes == end
    if end <= device:
        spec.check_fits(device)
    else:
        with pytest.raises(ConfigError, match="but the target holds only"):
            spec.check_fits(device)


# -- construction from configuration text ----------------------------------------------------


def test_from_mapping_reads_human_units() -> None:
    spec = WorkloadSpec.from_mapping(
        {
            "name": "svc",
            "rw": "randrw",
            "rwmixread": 70,
            "bsrange": "4k-32k",
            "size": "1g",
            "numjobs": 4,
            "iodepth": 8,
            "offset_increment": "1g",
            "runtime": "2m",
            "ramp": "5s",
            "time_based": True,
            "percentiles": [50, 99, 99.9],
        }
    )
    assert (spec.bs, spec.bs_max, spec.size, spec.offset_increment) == (4096, 32768, GiB, GiB)
    assert (spec.runtime_s, spec.ramp_s, spec.time_based) == (120, 5, True)
    assert spec.percentiles == (50.0, 99.0, 99.9)
    assert spec.id() == "randrw70-4k-32k-nj4-qd8"


def test_from_mapping_verify_and_steady_state() -> None:
    write = WorkloadSpec.from_mapping(
        {
            "name": "ack",
            "rw": "randwrite",
            "bs": "4k",
            "size": "256M",
            "randseed": 42,
            "verify": {"alg": "xxhash", "do_verify": False, "state_save": True},
        }
    )
    assert write.verify == VerifySpec(alg="xxhash", do_verify=False, state_save=True)
    ss = WorkloadSpec.from_mapping(
        {
            "name": "pre",
            "rw": "randwrite",
            "size": "1g",
            "runtime": 600,
            "time_based": True,
            "steady_state": {"criterion": "iops_slope:0.5%", "duration": "60s", "ramp": "10s"},
        }
    )
    assert ss.steady_state == SteadyState("iops_slope", 0.5, duration_s=60, ramp_s=10)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"name": "a", "rw": "write", "size": "1g", "blocksize": "4k"}, r"unknown key\(s\) \['blocksize'\]"),
        ({"name": "a", "rw": "write", "size": "1g", "bs": "4k", "bsrange": "4k-8k"}, "either bs or bsrange"),
        ({"rw": "write", "size": "1g"}, "missing required key 'name'"),
        ({"name": "a", "rw": "write"}, "missing required key 'size'"),
        ({"name": "a", "rw": 3, "size": "1g"}, "expected text"),
        ({"name": "a", "rw": "write", "size": "1 potato"}, "workload size"),
        ({"name": "a", "rw": "write", "size": "1g", "runtime": "1.5s"}, "whole seconds"),
        ({"name": "a", "rw": "write", "size": "1g", "runtime": [5]}, "expected a duration"),
        ({"name": "a", "rw": "write", "size": 1.5}, "expected a size"),
        ({"name": "a", "rw": "write", "size": "1g", "numjobs": "8"}, "expected an integer"),
        ({"name": "a", "rw": "write", "size": "1g", "numjobs": True}, "expected an integer"),
        ({"name": "a", "rw": "write", "size": "1g", "time_based": "yes"}, "expected true or false"),
        ({"name": "a", "rw": "write", "size": "1g", "verify": "crc32c"}, "expected a mapping"),
        (
            {"name": "a", "rw": "write", "size": "1g", "verify": {"algo": "md5"}},
            r"unknown key\(s\) \['algo'\]",
        ),
        ({"name": "a", "rw": "write", "size": "1g", "verify": {"alg": 5}}, "expected text"),
        ({"name": "a", "rw": "write", "size": "1g", "steady_state": "iops:1%"}, "expected"),
        ({"name": "a", "rw": "write", "size": "1g", "steady_state": {"duration": 5}}, "'criterion'"),
        ({"name": "a", "rw": "write", "size": "1g", "steady_state": {"criterion": "iops:1%"}}, "'duration'"),
        ({"name": "a", "rw": "write", "size": "1g", "percentiles": [50, "p99"]}, "list of numbers"),
    ],
)
def test_from_mapping_refuses_bad_input(data: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        WorkloadSpec.from_mapping(data)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("iops:10%", SteadyState("iops", 10.0, duration_s=30)),
        ("bw_slope:0.25%", SteadyState("bw_slope", 0.25, duration_s=30)),
        ("bw:50000000", SteadyState("bw", 50000000.0, duration_s=30, percent=False)),
    ],
)
def test_steady_state_parse_and_criterion(text: str, expected: SteadyState) -> None:
    parsed = SteadyState.parse(text, duration_s=30)
    assert parsed == expected
    assert parsed.criterion == text


@pytest.mark.parametrize("text", ["iops", "lat:10%", "iops:-1%", "iops:ten"])
def test_steady_state_parse_refuses_garbage(text: str) -> None:
    with pytest.raises(ConfigError, match="steady state"):
        SteadyState.parse(text, duration_s=30)


def test_steady_state_limits() -> None:
    with pytest.raises(ConfigError, match="duration must be > 0"):
        SteadyState("iops", 10, duration_s=0)
    with pytest.raises(ConfigError, match="limit must be > 0"):
        SteadyState("iops", 0, duration_s=5)


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (512, "512"),
        (4096, "4k"),
        (6144, "6k"),
        (MiB, "1m"),
        (3 * GiB, "3g"),
        (1536 * MiB, "1536m"),
        (1024**4, "1t"),
    ],
)
def test_fio_size_text(n: int, text: str) -> None:
    assert fio_size_text(n) == text


@given(st.integers(1, 2**50))
def test_fio_size_text_round_trips_through_parse_size(n: int) -> None:
    assert parse_size(fio_size_text(n)) == n


# -- profiles ---------------------------------------------------------------------------------


def test_profiles_are_the_three_documented_ones() -> None:
    assert list(PROFILES) == ["quick", "standard", "full"]
    quick, standard, full = PROFILES["quick"], PROFILES["standard"], PROFILES["full"]
    assert (quick.runtime_s, quick.ramp_s, quick.sizes) == (5, 1, (64 * MiB,))
    assert (standard.runtime_s, standard.ramp_s, standard.sizes) == (30, 5, (GiB,))
    assert (full.runtime_s, full.sizes) == (120, (GiB, 3 * GiB, 6 * GiB))
    with pytest.raises(TypeError):
        PROFILES["huge"] = quick  # type: ignore[index]


def test_full_profile_reproduces_the_datakeeper_study() -> None:
    # fio -direct=1 -rw=randwrite -bs=4k -size=1g|3g|6g -numjobs=8 -runtime=120
    base = _spec(name="dk", numjobs=8)
    cells = PROFILES["full"].expand(base)
    assert [c.size for c in cells] == [GiB, 3 * GiB, 6 * GiB]
    assert {c.runtime_s for c in cells} == {120}
    assert [c.id(with_size=True) for c in cells] == [
        "randwrite-4k-nj8-qd1-1g",
        "randwrite-4k-nj8-qd1-3g",
        "randwrite-4k-nj8-qd1-6g",
    ]


def test_profile_apply_keeps_shape_and_scales_disjoint_regions() -> None:
    base = _spec(numjobs=8, iodepth=4, size=GiB, offset_increment=GiB, time_based=True, runtime_s=120, fsync=1)
    quick = PROFILES["quick"].apply(base)
    assert (quick.size, quick.offset_increment, quick.runtime_s, quick.ramp_s) == (64 * MiB, 64 * MiB, 5, 1)
    assert quick.id() == base.id()
    assert quick.time_based and quick.fsync == 1
    with pytest.raises(ConfigError, match="has sizes"):
        PROFILES["quick"].apply(base, size=GiB)


def test_profile_apply_to_verify_workloads_keeps_the_oracle_complete() -> None:
    write = _spec(randseed=9, verify=VerifySpec(do_verify=False))
    check = _spec(randseed=9, verify=VerifySpec(verify_only=True, state_load=True))
    for name in PROFILES:
        assert PROFILES[name].apply(write).ramp_s == 0
        scaled = PROFILES[name].apply(check)
        assert (scaled.ramp_s, scaled.runtime_s) == (0, None)


def test_profile_apply_revalidates() -> None:
    base = _spec(time_based=True, runtime_s=600, steady_state=SteadyState("iops", 10, duration_s=60))
    with pytest.raises(ConfigError, match="could never be attained"):
        PROFILES["quick"].apply(base)


# -- precondition -----------------------------------------------------------------------------


def test_precondition_fill_is_a_sequential_size_bound_write() -> None:
    spec = precondition_fill(10 * GiB, 99)
    assert (spec.name, spec.rw, spec.bs, spec.time_based, spec.runtime_s) == (
        "fill-99pct",
        "write",
        MiB,
        False,
        None,
    )
    assert spec.size == int((10 * GiB - LABEL_ZONE_BYTES) * 99 / 100) // MiB * MiB
    assert 10 * GiB * 0.98 < spec.size <= 10 * GiB * 0.99
    spec.check_fits(10 * GiB)
    assert precondition_fill(10 * GiB, 100).footprint_bytes == 10 * GiB


@pytest.mark.parametrize(("device", "percent"), [(GiB, 0), (GiB, 101), (MiB // 2, 50)])
def test_precondition_fill_refuses_nonsense(device: int, percent: float) -> None:
    with pytest.raises(ConfigError, match=r"fill percentage|less than one"):
        precondition_fill(device, percent)
