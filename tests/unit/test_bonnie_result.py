"""bonnie++'s CSV: recorded lines from the lab, and properties of the parser on any line."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.bonnie import PHASES, BonnieOutputError, bonnie_values, job_for_memory, meminfo_total_kib
from harness.bonnie.result import parse_bonnie_csv
from harness.errors import ConfigError

DATA = Path(__file__).parent.parent / "data" / "bonnie"


def _read(name: str) -> str:
    return (DATA / name).read_text()


def test_ext4_line_recorded_on_the_lab() -> None:
    (r,) = parse_bonnie_csv(_read("bonnie-2.00a-lab-ext4-n16.csv"))
    assert (r.format_version, r.version, r.name, r.concurrency, r.file_size, r.num_files_k) == (
        "1.98",
        "2.00a",
        "a1-ext4",
        1,
        "512M",
        16,
    )
    block = r.phase("seq-output-block")
    assert block.rate == 220200 * 1024 and block.cpu_pct == 93 and block.latency_s == pytest.approx(5767e-6)
    assert r.phase("seq-output-char").rate == 123 * 1024
    assert r.phase("seq-rewrite").rate == 182236 * 1024
    assert r.phase("seq-input-char").latency_s == pytest.approx(0.298)
    assert r.phase("seq-input-block").rate == 199365 * 1024
    seeks = r.phase("random-seeks")
    assert (seeks.kind, seeks.rate, seeks.cpu_pct) == ("ops", 9519, 447)
    assert r.phase("seq-create").rate == 14264 and r.phase("seq-delete").rate == 31028
    assert r.phase("random-create").rate == 25979 and r.phase("random-delete").rate == 30960
    stat = r.phase("seq-stat")
    assert stat.rate is None and stat.too_fast and stat.cpu_pct is None
    assert stat.latency_s == pytest.approx(1135e-6)


def test_xfs_line_with_every_file_phase_too_fast() -> None:
    (r,) = parse_bonnie_csv(_read("bonnie-2.00a-lab-xfs-n4.csv"))
    assert r.num_files_k == 4
    assert r.phase("seq-output-block").rate == 70261 * 1024
    assert r.phase("random-seeks").rate == 11958
    files = [p for p in r.phases if p.name.endswith(("create", "stat", "delete"))]
    assert len(files) == 6 and all(p.too_fast and p.rate is None for p in files)
    assert r.phase("seq-output-char").latency_s == pytest.approx(0.417)


def test_samples_hold_only_what_was_measured() -> None:
    (r,) = parse_bonnie_csv(_read("bonnie-2.00a-lab-ext4-n16.csv"))
    rows = bonnie_values(r)
    assert rows["bonnie-seq-output-block"]["bw"] == pytest.approx(220200 / 1024)
    assert rows["bonnie-random-seeks"]["ops"] == 9519
    assert "ops" not in rows["bonnie-seq-stat"] and rows["bonnie-seq-stat"]["lat_max"] == pytest.approx(1.135)
    assert set(rows) == {"bonnie-" + name for name, _, _ in PHASES}


def test_the_text_table_is_not_csv() -> None:
    with pytest.raises(BonnieOutputError, match="format"):
        parse_bonnie_csv(_read("bonnie-2.00a-lab-ext4-n16.txt"))


def test_empty_output_is_an_error() -> None:
    with pytest.raises(BonnieOutputError, match="no CSV result line"):
        parse_bonnie_csv("# only a comment\n\n")


def test_truncated_line_is_an_error() -> None:
    line = _read("bonnie-2.00a-lab-ext4-n16.csv").strip()
    with pytest.raises(BonnieOutputError, match="fields"):
        parse_bonnie_csv(line.rsplit(",", 3)[0])


_FIELD = st.one_of(st.just(""), st.just("+++++"), st.integers(0, 10**7).map(str))
_LATENCY = st.one_of(
    st.just(""), st.builds(lambda n, u: f"{n}{u}", st.integers(0, 10**6), st.sampled_from(["us", "ms", "s"]))
)


@given(st.lists(_FIELD, min_size=38, max_size=38), st.lists(_LATENCY, min_size=12, max_size=12))
def test_any_well_formed_line_parses_into_twelve_phases(fields: list[str], latencies: list[str]) -> None:
    row = ["1.98", "2.00a", "host", "1", "123", "512M", "", *fields[7:38], *latencies]
    row[21] = fields[21] if fields[21] != "+++++" else "16"
    (r,) = parse_bonnie_csv(",".join(row))
    assert [p.name for p in r.phases] == [name for name, _, _ in PHASES]
    for phase, (_, kind, at) in zip(r.phases, PHASES, strict=True):
        assert phase.too_fast == (row[at] == "+++++")
        if row[at] in ("", "+++++"):
            assert phase.rate is None
        else:
            assert phase.rate == int(row[at]) * (1024 if kind == "throughput" else 1)


@given(st.integers(1, 2**40))
def test_job_follows_bonnies_twice_the_ram_rule(mem_kib: int) -> None:
    job = job_for_memory("/run/harness/r/mnt-x/bonnie", "a1-xfs", mem_kib)
    assert job.ram_mib * 1024 >= mem_kib and job.size_mib == 2 * job.ram_mib
    argv = job.argv()
    assert argv[argv.index("-s") + 1] == str(job.size_mib) and argv[argv.index("-r") + 1] == str(job.ram_mib)
    assert "-q" in argv and argv[argv.index("-u") + 1] == "0:0"


def test_meminfo_and_bad_jobs() -> None:
    assert meminfo_total_kib("MemTotal:         240976 kB\nMemFree: 1 kB\n") == 240976
    with pytest.raises(ConfigError):
        meminfo_total_kib("MemFree: 1 kB\n")
    with pytest.raises(ConfigError, match="plain absolute path"):
        job_for_memory("/run/../etc", "a1", 1024)
    with pytest.raises(ConfigError, match="label"):
        job_for_memory("/run/harness/b", "a1; rm -rf /", 1024)
