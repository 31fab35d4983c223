"""fio's command line, built from a :class:`~harness.fio.spec.WorkloadSpec` (pure, no I/O).

The argv is a list, never a shell string: the remote layer quotes it with ``shlex`` and every
value stays one token.  Safety rules that must hold for *every* job live here, in one place,
rather than in each scenario, so no scenario can forget one:

* ``--direct=1 --ioengine=libaio``: block-device numbers, not page-cache numbers;
* ``--allow_file_create=0``: a mistyped ``/dev/drbd10`` fails instead of becoming a regular
  file under ``/dev`` (fio also creates missing parent directories, so a typo could otherwise
  write to the root filesystem);
* ``--allow_mounted_write=0`` spelled out for block devices, so the guard is visible in logs;
* paths are absolute and free of fio/shell metacharacters (``:`` is fio's file separator);
* ``--output-format=json --output=FILE``: stdout is not clean JSON (fio prints notes there).
"""

from __future__ import annotations

import re
from typing import Final, Literal

from harness.errors import ConfigError
from harness.fio.result import FioOutputError, FioVersion
from harness.fio.spec import WorkloadSpec
from harness.fio.text import fio_number_text

__all__ = [
    "SAFE_PATH_CHARS",
    "Target",
    "build_fio_argv",
    "check_safe_path",
    "fio_version_argv",
    "parse_fio_version_output",
]

#: What fio writes to: a block device (the DRBD device, a scratch volume) or a regular file
#: on a scratch filesystem that the caller created beforehand (filesystem cells).
Target = Literal["block", "file"]

#: Characters a path handed to fio may contain.  A whitelist, so every fio separator (``:``),
#: shell metacharacter (``; $ ` ' " \\ | & < > * ? ( ) { } [ ] ! ~ #``), ``%`` and ``=`` and
#: all whitespace are refused without having to enumerate them.
SAFE_PATH_CHARS: Final[str] = "A-Za-z0-9_./+-"
_SAFE_PATH_RE: Final = re.compile(rf"\A/[{SAFE_PATH_CHARS}]+\Z")
_MAX_PATH: Final = 4095
_KERNEL_FS_PREFIXES: Final = ("/proc/", "/sys/")


def check_safe_path(path: str, *, what: str = "path") -> str:
    """Return ``path`` if it is an absolute path fio and a shell will read as one token.

    Refused with :class:`ConfigError`: relative paths, ``.``/``..`` components, empty
    components, and any character outside :data:`SAFE_PATH_CHARS` (``:`` would make fio treat
    one path as two files; quotes, ``$``, backticks, ``;``, ``\\``, spaces or newlines could
    change what a remote shell runs).
    """
    if not isinstance(path, str) or not path:
        raise ConfigError(f"{what} must be a non-empty absolute path, got {path!r}")
    if not path.startswith("/"):
        raise ConfigError(f"{what} {path!r} must be absolute (start with '/')")
    if len(path) > _MAX_PATH:
        raise ConfigError(f"{what} is longer than {_MAX_PATH} characters")
    if not _SAFE_PATH_RE.match(path):
        bad = sorted({c for c in path if not re.match(rf"[{SAFE_PATH_CHARS}]", c)})
        raise ConfigError(
            f"{what} {path!r} contains characters fio or a shell would interpret: {bad!r} "
            f"(allowed: letters, digits and '_./+-')"
        )
    parts = path.split("/")[1:]
    if any(p in {"", ".", ".."} for p in parts):
        raise ConfigError(f"{what} {path!r} must be normalised (no empty, '.' or '..' components)")
    return path


def _check_target(filename: str, target: Target) -> None:
    check_safe_path(filename, what="fio filename")
    if target == "block":
        if not filename.startswith("/dev/"):
            raise ConfigError(f"fio filename {filename!r}: a block-device target must live under /dev/")
    elif target == "file":
        if filename.startswith(("/dev/", *_KERNEL_FS_PREFIXES)):
            raise ConfigError(f"fio filename {filename!r}: a file target must be on a scratch filesystem")
    else:
        raise ConfigError(f"unknown fio target kind {target!r} (use 'block' or 'file')")


def _flag(value: bool) -> str:
    return "1" if value else "0"


def _on(value: bool) -> int | None:
    """A switch that is written only when set (``--sync=1``), never as ``=0``."""
    return 1 if value else None


def _layout_args(spec: WorkloadSpec, target: Target) -> list[str]:
    """Where and how fio does I/O: the target, the guards, the pattern and the footprint."""
    block_size = f"--bs={spec.bs}" if spec.bs_max is None else f"--bsrange={spec.bs}-{spec.bs_max}"
    return [
        "--allow_file_create=0",
        # a file target lives on a mounted filesystem by design; a block device must not be mounted
        *(["--allow_mounted_write=0"] if target == "block" else []),
        "--direct=1",
        "--ioengine=libaio",
        f"--rw={spec.rw}",
        block_size,
        f"--iodepth={spec.iodepth}",
        f"--numjobs={spec.numjobs}",
        f"--size={spec.size}",
        f"--offset={spec.start_bytes}",
    ]


def _optional_args(spec: WorkloadSpec) -> list[str]:
    """The options a workload sets only when it needs them, in the order fio has always been
    given them (None: left out, so fio's own default holds)."""
    table: tuple[tuple[str, object], ...] = (
        ("offset_increment", spec.offset_increment),
        ("rwmixread", spec.rwmixread),
        ("runtime", spec.runtime_s),
        ("time_based", _on(spec.time_based)),
        ("ramp_time", spec.ramp_s or None),
        ("sync", _on(spec.sync)),
        ("fsync", spec.fsync or None),
        ("end_fsync", _on(spec.end_fsync)),
        ("norandommap", _on(spec.norandommap)),
        ("randseed", spec.randseed),
        ("number_ios", spec.number_ios),
    )
    return [f"--{option}={value}" for option, value in table if value is not None]


def _steady_state_args(spec: WorkloadSpec) -> list[str]:
    ss = spec.steady_state
    if ss is None:
        return []
    return [f"--ss={ss.criterion}", f"--ss_dur={ss.duration_s}", *([f"--ss_ramp={ss.ramp_s}"] if ss.ramp_s else [])]


def _report_args(output_path: str | None, status_interval: int | None) -> list[str]:
    """One JSON report (to ``output_path``, else stdout), optionally repeated every N seconds."""
    args = ["--group_reporting=1", "--eta=never", "--output-format=json"]
    if output_path is not None:
        args.append(f"--output={output_path}")
    if status_interval is not None:
        if isinstance(status_interval, bool) or status_interval < 1:
            raise ConfigError(f"status_interval must be a whole number of seconds >= 1, got {status_interval!r}")
        args.append(f"--status-interval={status_interval}")
    return args


def _file_args(extra_log_prefix: str | None, aux_path: str | None) -> list[str]:
    """The files fio writes beside its report: bandwidth logs and verify state."""
    args: list[str] = []
    if extra_log_prefix is not None:
        check_safe_path(extra_log_prefix, what="bandwidth log prefix")
        args += [f"--write_bw_log={extra_log_prefix}", "--log_avg_msec=1000"]
    if aux_path is not None:
        check_safe_path(aux_path, what="fio aux path")
        args.append(f"--aux-path={aux_path}")
    return args


def build_fio_argv(
    spec: WorkloadSpec,
    filename: str,
    output_path: str | None,
    *,
    status_interval: int | None = None,
    extra_log_prefix: str | None = None,
    target: Target = "block",
    aux_path: str | None = None,
    fio_binary: str = "fio",
) -> list[str]:
    """The argv that runs ``spec`` against ``filename`` and writes JSON to ``output_path``
    (``None``: to stdout, for streaming status reports over SSH while the node may die).

    ``status_interval`` (seconds) makes fio append a full JSON report every N seconds to the
    output file (parse it with :func:`harness.fio.report.parse_fio_json_stream`) - the failover
    scenario reads acknowledged writes from the last complete report.  ``extra_log_prefix``
    adds per-second bandwidth logs (``<prefix>_bw.<job>.log``, KiB/s) for plots.  ``target``
    is ``"block"`` for devices, ``"file"`` for a file the caller pre-created on a scratch
    filesystem (``allow_file_create=0`` holds in both cases).  ``aux_path`` is where fio keeps
    verify state files (``--aux-path``); without it they land in fio's working directory.
    """
    _check_target(filename, target)
    if output_path is not None:
        check_safe_path(output_path, what="fio output path")
    if fio_binary != "fio":
        check_safe_path(fio_binary, what="fio binary")
    return [
        fio_binary,
        f"--name={spec.name}",
        f"--filename={filename}",
        *_layout_args(spec, target),
        *_optional_args(spec),
        *_verify_args(spec),
        *_steady_state_args(spec),
        "--percentile_list=" + ":".join(fio_number_text(p) for p in spec.percentiles),
        *_report_args(output_path, status_interval),
        *_file_args(extra_log_prefix, aux_path),
    ]


def _verify_args(spec: WorkloadSpec) -> list[str]:
    v = spec.verify
    if v is None:
        return []
    args = [f"--verify={v.alg}"]
    if v.verify_only:
        # A verify-only pass writes nothing, so it has no write state to save.
        args += ["--verify_only=1", "--verify_state_save=0"]
    else:
        args += [f"--do_verify={_flag(v.do_verify)}", f"--verify_state_save={_flag(v.state_save)}"]
    if v.state_load:
        args.append("--verify_state_load=1")
    if v.fatal:
        args.append("--verify_fatal=1")
    if v.backlog is not None:
        args.append(f"--verify_backlog={v.backlog}")
    if v.dump:
        args.append("--verify_dump=1")
    return args


def fio_version_argv(fio_binary: str = "fio") -> list[str]:
    """``fio --version``: recorded as provenance and checked by preflight."""
    if fio_binary != "fio":
        check_safe_path(fio_binary, what="fio binary")
    return [fio_binary, "--version"]


def parse_fio_version_output(stdout: str) -> FioVersion:
    """The version printed by ``fio --version`` (``fio-3.33``; git builds add ``-12-gabcdef``)."""
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    if len(lines) != 1:
        raise FioOutputError(f"'fio --version' printed {len(lines)} lines, expected one such as 'fio-3.33': {stdout!r}")
    return FioVersion.parse(lines[0])
