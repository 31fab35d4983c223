"""fio argv building, path safety and the version probe (harness.fio.command)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.fio import (
    PROFILES,
    RW_MODES,
    FioOutputError,
    FioVersion,
    SteadyState,
    VerifySpec,
    WorkloadSpec,
    build_fio_argv,
    check_safe_path,
    fio_version_argv,
    parse_fio_version_output,
)

DATA = Path(__file__).resolve().parent.parent / "data" / "fio"
MiB = 1024**2
OUT = "/run/harness/r1/cell.json"

#: Characters that fio or a remote shell would interpret inside a path.
METACHARS = list(":,; \t\n\r'\"`$\\|&<>*?(){}[]!#~%=\x00")

_segment = st.from_regex(r"\A[A-Za-z0-9_+-][A-Za-z0-9_.+-]{0,15}\Z")
safe_paths = st.lists(_segment, min_size=1, max_size=5).map(lambda parts: "/" + "/".join(parts))
device_paths = st.lists(_segment, min_size=1, max_size=3).map(lambda parts: "/dev/" + "/".join(parts))


@st.composite
def specs(draw: st.DrawFn) -> WorkloadSpec:
    rw = draw(st.sampled_from(RW_MODES))
    bs = draw(st.sampled_from([512, 4096, 65536, MiB]))
    bs_max = draw(st.none() | st.just(bs * 4))
    time_based = draw(st.booleans())
    return WorkloadSpec(
        name=draw(st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,30}\Z")),
        rw=rw,
        size=(bs_max or bs) * draw(st.integers(1, 10_000)),
        bs=bs,
        bs_max=bs_max,
        numjobs=draw(st.integers(1, 64)),
        iodepth=draw(st.integers(1, 128)),
        offset=512 * draw(st.integers(0, 1000)),
        offset_increment=draw(st.none() | st.integers(0, 1000).map(lambda n: 512 * n)),
        runtime_s=draw(st.integers(1, 300)) if time_based else None,
        ramp_s=draw(st.integers(0, 10)),
        time_based=time_based,
        rwmixread=draw(st.integers(0, 100)) if rw in {"rw", "randrw"} else None,
        randseed=draw(st.none() | st.integers(0, 2**63)),
        percentiles=tuple(
            sorted(draw(st.sets(st.floats(0.001, 100.0).map(lambda p: round(p, 3)), min_size=1, max_size=20)))
        ),
    )


def _quick_randwrite_nj8() -> WorkloadSpec:
    base = WorkloadSpec(
        name="randwrite-4k-nj8-qd1",
        rw="randwrite",
        bs=4096,
        numjobs=8,
        iodepth=1,
        size=1024**3,
        offset_increment=1024**3,
        time_based=True,
        runtime_s=120,
    )
    return PROFILES["quick"].apply(base)


def test_example_argv_quick_profile_randwrite_4k_nj8() -> None:
    argv = build_fio_argv(_quick_randwrite_nj8(), "/dev/drbd1", "/run/harness/r1/randwrite-4k-nj8-qd1.json")
    assert argv == [
        "fio",
        "--name=randwrite-4k-nj8-qd1",
        "--filename=/dev/drbd1",
        "--allow_file_create=0",
        "--allow_mounted_write=0",
        "--direct=1",
        "--ioengine=libaio",
        "--rw=randwrite",
        "--bs=4096",
        "--iodepth=1",
        "--numjobs=8",
        "--size=67108864",
        "--offset=1048576",
        "--offset_increment=67108864",
        "--runtime=5",
        "--time_based=1",
        "--ramp_time=1",
        "--percentile_list=50:90:99:99.9:99.99",
        "--group_reporting=1",
        "--eta=never",
        "--output-format=json",
        "--output=/run/harness/r1/randwrite-4k-nj8-qd1.json",
    ]


@given(specs(), device_paths, safe_paths)
def test_argv_invariants(spec: WorkloadSpec, filename: str, output: str) -> None:
    argv = build_fio_argv(spec, filename, output)
    assert argv[0] == "fio"
    for required in (
        "--direct=1",
        "--ioengine=libaio",
        "--allow_file_create=0",
        "--allow_mounted_write=0",
        "--group_reporting=1",
        "--output-format=json",
        f"--output={output}",
        f"--filename={filename}",
        f"--name={spec.name}",
    ):
        assert argv.count(required) == 1, required
    for token in argv[1:]:
        # One option per token, values never split or interpreted by a shell.
        assert re.fullmatch(r"--[a-z_-]+(=[^\s'\"`;$\\]+)?", token), token
    assert shlex.split(shlex.join(argv)) == argv
    assert len({t.split("=", 1)[0] for t in argv[1:]}) == len(argv) - 1, "an option appears twice"


@given(specs(), safe_paths.filter(lambda p: not p.startswith(("/dev/", "/proc/", "/sys/"))))
def test_file_target_keeps_allow_file_create_0(spec: WorkloadSpec, filename: str) -> None:
    argv = build_fio_argv(spec, filename, OUT, target="file")
    assert "--allow_file_create=0" in argv
    assert "--direct=1" in argv
    assert "--allow_mounted_write=0" not in argv


@given(safe_paths, st.sampled_from(METACHARS), st.data())
def test_metacharacter_paths_are_always_rejected(path: str, bad: str, data: st.DataObject) -> None:
    at = data.draw(st.integers(1, len(path)))
    poisoned = path[:at] + bad + path[at:]
    with pytest.raises(ConfigError):
        check_safe_path(poisoned)
    spec = WorkloadSpec(name="x", rw="write", size=MiB)
    with pytest.raises(ConfigError):
        build_fio_argv(spec, "/dev/" + poisoned.lstrip("/"), OUT)
    with pytest.raises(ConfigError):
        build_fio_argv(spec, "/dev/drbd1", poisoned)
    with pytest.raises(ConfigError):
        build_fio_argv(spec, "/dev/drbd1", OUT, extra_log_prefix=poisoned)
    with pytest.raises(ConfigError):
        build_fio_argv(spec, "/dev/drbd1", OUT, aux_path=poisoned)


@given(st.text(max_size=40))
def test_accepted_paths_only_contain_safe_characters(path: str) -> None:
    try:
        check_safe_path(path)
    except ConfigError:
        return
    assert re.fullmatch(r"/[A-Za-z0-9_./+-]+", path)
    assert not any(c in path for c in METACHARS)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("", "non-empty absolute path"),
        ("dev/drbd1", "must be absolute"),
        ("./drbd1", "must be absolute"),
        ("/dev/drbd1:/dev/sda", "':'"),
        ("/dev/drbd 1", "' '"),
        ("/dev/drbd1;reboot", "';'"),
        ("/dev/$(id)", "'\\$'"),
        ("/dev/`id`", "'`'"),
        ("/dev/drbd1\n", "'\\\\n'"),
        ("/dev/dr\\bd1", "'\\\\\\\\'"),
        ("/dev/'drbd1'", '"\'"'),
        ("/dev/../sda", "normalised"),
        ("/dev/./drbd1", "normalised"),
        ("/dev//drbd1", "normalised"),
        ("/dev/drbd1/", "normalised"),
        ("/" + "a" * 5000, "longer than"),
    ],
)
def test_bad_paths_name_the_problem(path: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        check_safe_path(path)


def test_target_kind_is_checked() -> None:
    spec = WorkloadSpec(name="x", rw="write", size=MiB)
    with pytest.raises(ConfigError, match="must live under /dev/"):
        build_fio_argv(spec, "/mnt/scratch/f", OUT)
    with pytest.raises(ConfigError, match="scratch filesystem"):
        build_fio_argv(spec, "/dev/drbd1", OUT, target="file")
    with pytest.raises(ConfigError, match="scratch filesystem"):
        build_fio_argv(spec, "/proc/sysrq-trigger", OUT, target="file")
    with pytest.raises(ConfigError, match="unknown fio target kind"):
        build_fio_argv(spec, "/dev/drbd1", OUT, target="nfs")  # type: ignore[arg-type]


def test_every_optional_argument_in_order() -> None:
    """The whole argv of a job that sets every option: each one once, in fio's reading order
    (the argv is recorded in the ledger and compared across runs, so its order is pinned)."""
    spec = WorkloadSpec(
        name="svc",
        rw="randrw",
        rwmixread=70,
        bs=4096,
        bs_max=32768,
        size=64 * MiB,
        offset=MiB,
        offset_increment=128 * MiB,
        runtime_s=60,
        ramp_s=3,
        time_based=True,
        fsync=4,
        sync=True,
        end_fsync=True,
        norandommap=True,
        randseed=5,
        number_ios=1000,
        steady_state=SteadyState("iops", 10, duration_s=20, ramp_s=5),
        percentiles=(50.0, 99.999),
    )
    argv = build_fio_argv(
        spec,
        "/dev/drbd1",
        OUT,
        status_interval=1,
        extra_log_prefix="/run/harness/r1/svc",
        aux_path="/run/harness/r1",
        fio_binary="/usr/bin/fio",
    )
    assert argv == [
        "/usr/bin/fio",
        "--name=svc",
        "--filename=/dev/drbd1",
        "--allow_file_create=0",
        "--allow_mounted_write=0",
        "--direct=1",
        "--ioengine=libaio",
        "--rw=randrw",
        "--bsrange=4096-32768",
        "--iodepth=1",
        "--numjobs=1",
        "--size=67108864",
        "--offset=2097152",  # the label zone, then the job's own offset
        "--offset_increment=134217728",
        "--rwmixread=70",
        "--runtime=60",
        "--time_based=1",
        "--ramp_time=3",
        "--sync=1",
        "--fsync=4",
        "--end_fsync=1",
        "--norandommap=1",
        "--randseed=5",
        "--number_ios=1000",
        "--ss=iops:10%",
        "--ss_dur=20",
        "--ss_ramp=5",
        "--percentile_list=50:99.999",
        "--group_reporting=1",
        "--eta=never",
        "--output-format=json",
        f"--output={OUT}",
        "--status-interval=1",
        "--write_bw_log=/run/harness/r1/svc",
        "--log_avg_msec=1000",
        "--aux-path=/run/harness/r1",
    ]


def test_a_verify_only_pass_on_a_file_streaming_to_stdout() -> None:
    """A file target drops the mounted-write guard (a file is on a mounted filesystem by
    design), no output path means JSON on stdout, and every verify setting comes after the
    job's seed, in order."""
    spec = WorkloadSpec(
        name="ack",
        rw="randwrite",
        size=64 * MiB,
        randseed=1234,
        verify=VerifySpec(alg="md5", verify_only=True, state_load=True, fatal=True, dump=True),
    )
    assert build_fio_argv(spec, "/mnt/s/fio.dat", None, target="file") == [
        "fio",
        "--name=ack",
        "--filename=/mnt/s/fio.dat",
        "--allow_file_create=0",
        "--direct=1",
        "--ioengine=libaio",
        "--rw=randwrite",
        "--bs=4096",
        "--iodepth=1",
        "--numjobs=1",
        "--size=67108864",
        "--offset=1048576",
        "--randseed=1234",
        "--verify=md5",
        "--verify_only=1",
        "--verify_state_save=0",
        "--verify_state_load=1",
        "--verify_fatal=1",
        "--verify_dump=1",
        "--percentile_list=50:90:99:99.9:99.99",
        "--group_reporting=1",
        "--eta=never",
        "--output-format=json",
    ]


def test_verify_arguments_for_write_and_verify_only_phases() -> None:
    write = WorkloadSpec(
        name="ack",
        rw="randwrite",
        size=64 * MiB,
        iodepth=16,
        randseed=1234,
        verify=VerifySpec(alg="crc32c", do_verify=False, state_save=True, fatal=True),
    )
    check = write.replace(verify=VerifySpec(alg="crc32c", verify_only=True, state_load=True))
    w = build_fio_argv(write, "/dev/drbd1", OUT)
    v = build_fio_argv(check, "/dev/drbd1", OUT)
    assert w[w.index("--verify=crc32c") :][:4] == [
        "--verify=crc32c",
        "--do_verify=0",
        "--verify_state_save=1",
        "--verify_fatal=1",
    ]
    assert v[v.index("--verify=crc32c") :][:4] == [
        "--verify=crc32c",
        "--verify_only=1",
        "--verify_state_save=0",
        "--verify_state_load=1",
    ]
    assert "--randseed=1234" in w and "--randseed=1234" in v
    backlog = build_fio_argv(write.replace(verify=VerifySpec(backlog=64)), "/dev/drbd1", OUT)
    assert "--verify_backlog=64" in backlog and "--do_verify=1" in backlog
    plain = build_fio_argv(write.replace(verify=None), "/dev/drbd1", OUT)
    assert not any(t.startswith("--verify") or t.startswith("--do_verify") for t in plain)


@pytest.mark.parametrize("interval", [0, -1, True])
def test_status_interval_must_be_positive_seconds(interval: int) -> None:
    spec = WorkloadSpec(name="x", rw="write", size=MiB)
    with pytest.raises(ConfigError, match="status_interval"):
        build_fio_argv(spec, "/dev/drbd1", OUT, status_interval=interval)


def test_fio_binary_must_be_safe() -> None:
    spec = WorkloadSpec(name="x", rw="write", size=MiB)
    with pytest.raises(ConfigError, match="fio binary"):
        build_fio_argv(spec, "/dev/drbd1", OUT, fio_binary="fio; reboot")
    with pytest.raises(ConfigError, match="fio binary"):
        fio_version_argv("bin/fio")


# -- version probe ----------------------------------------------------------------------------


def test_version_probe_argv() -> None:
    assert fio_version_argv() == ["fio", "--version"]
    assert fio_version_argv("/usr/local/bin/fio") == ["/usr/local/bin/fio", "--version"]


def test_version_probe_on_real_output() -> None:
    # tests/data/fio/fio-3.33-version.txt: `fio --version` on this machine's Debian 12 fio.
    version = parse_fio_version_output((DATA / "fio-3.33-version.txt").read_text())
    assert (version.major, version.minor, version.patch) == (3, 33, 0)
    assert str(version) == "fio-3.33"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("fio-2.2.10\n", (2, 2, 10)),
        ("fio-2.1.4", (2, 1, 4)),
        ("fio-3.33-12-gabc1234\n", (3, 33, 0)),
        ("  fio-3.42  \n", (3, 42, 0)),
    ],
)
def test_version_probe_variants(text: str, expected: tuple[int, int, int]) -> None:
    version = parse_fio_version_output(text)
    assert (version.major, version.minor, version.patch) == expected


@pytest.mark.parametrize("text", ["", "bash: fio: command not found\n", "fio-3.33\nextra\n", "3.33"])
def test_version_probe_refuses_other_output(text: str) -> None:
    with pytest.raises(FioOutputError):
        parse_fio_version_output(text)


def test_versions_compare_numerically() -> None:
    # io_bytes switched from KiB to bytes in 2.21, after 2.2.10 (minor 21 > minor 2).
    assert FioVersion.parse("fio-2.2.10") < FioVersion.parse("fio-2.21") < FioVersion.parse("fio-3.0")
    assert FioVersion.parse("fio-3.33") == FioVersion.parse("fio-3.33-dirty")
