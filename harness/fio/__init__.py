"""fio for the harness: what to run, running it on a node, and what it brought back.

``spec`` says what to run (``options`` holds its verify and steady-state settings, ``config``
reads it from text, ``profiles`` scales it), ``command`` turns it into fio's argv, ``report``
and ``terse`` turn fio's output (JSON 2.x/3.x, status-interval streams, terse v3) into the
normalised records of ``result``, one :class:`FioResult`; these are pure.
``runner`` starts a job on a node and hands back its ``job`` handle, whose wait gives one
``outcome`` (report, timings, overhead, bandwidth logs); ``samples`` turns that outcome into
the numbers a cell records.
"""

from harness.fio.command import (
    SAFE_PATH_CHARS,
    Target,
    build_fio_argv,
    check_safe_path,
    fio_version_argv,
    parse_fio_version_output,
)
from harness.fio.options import SS_METRICS, VERIFY_ALGS, SsMetric, SteadyState, VerifySpec
from harness.fio.profiles import PROFILES, Profile
from harness.fio.report import parse_fio_json, parse_fio_json_stream, parse_last_fio_report
from harness.fio.result import (
    DirectionStats,
    DiskUtil,
    FioOutputError,
    FioResult,
    FioVersion,
    GroupResult,
    SteadyStateResult,
)
from harness.fio.spec import DEFAULT_PERCENTILES, LABEL_ZONE_BYTES, RW_MODES, RwMode, WorkloadSpec, precondition_fill
from harness.fio.terse import parse_fio_terse
from harness.fio.text import fio_number_text, fio_size_text

__all__ = [
    "DEFAULT_PERCENTILES",
    "LABEL_ZONE_BYTES",
    "PROFILES",
    "RW_MODES",
    "SAFE_PATH_CHARS",
    "SS_METRICS",
    "VERIFY_ALGS",
    "DirectionStats",
    "DiskUtil",
    "FioOutputError",
    "FioResult",
    "FioVersion",
    "GroupResult",
    "Profile",
    "RwMode",
    "SsMetric",
    "SteadyState",
    "SteadyStateResult",
    "Target",
    "VerifySpec",
    "WorkloadSpec",
    "build_fio_argv",
    "check_safe_path",
    "fio_number_text",
    "fio_size_text",
    "fio_version_argv",
    "parse_fio_json",
    "parse_fio_json_stream",
    "parse_fio_terse",
    "parse_fio_version_output",
    "parse_last_fio_report",
    "precondition_fill",
]
