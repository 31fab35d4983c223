"""Node tool versions: read from recorded outputs (tests/data/versions/SOURCES.md, ping/, tc/),
judged against what the harness is tested with, and reported by preflight before any change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.probes import toolversions
from harness.probes.toolversions import (
    Requirement,
    Version,
    assess,
    node_version_checks,
    node_versions,
    parse_tool_version,
)
from tests.doubles import Answer
from tests.unit.reliability.support import finding, lab_node, preflight

DATA = Path(__file__).resolve().parents[1] / "data"


def _read(name: str) -> str:
    return (DATA / name).read_text()


@pytest.mark.parametrize(
    ("tool", "file", "stderr", "parts", "shown"),
    [
        ("tc", "versions/tc-V-iproute2-5.10.txt", False, (5, 9, 0), "iproute2-5.9.0"),
        ("tc", "versions/tc-V-iproute2-6.1.txt", False, (6, 1, 0), "iproute2-6.1.0"),
        ("tc", "versions/tc-V-iproute2-6.15.txt", False, (6, 15, 0), "iproute2-6.15.0"),
        ("tc", "versions/tc-V-ubuntu-20.04-public.txt", False, (5, 5, 0), "iproute2-ss200127"),
        ("fio", "fio/fio-3.25-version.txt", False, (3, 25), "fio-3.25"),
        ("fio", "fio/fio-3.33-version.txt", False, (3, 33), "fio-3.33"),
        ("iperf3", "versions/iperf3-3.9-version.txt", False, (3, 9), "iperf3 3.9"),
        ("iperf3", "versions/iperf3-3.18-version.txt", False, (3, 18), "iperf3 3.18"),
        ("ping", "ping/iputils-20210202-V.txt", False, (20210202,), "iputils 20210202"),
        ("ping", "ping/iputils-20240905-V.txt", False, (20240905,), "iputils 20240905"),
        ("ping", "versions/busybox-1.30.1-ping-V.txt", True, (1, 30, 1), "busybox 1.30.1"),
        ("ssh", "versions/openssh-8.4p1-ssh-V.txt", True, (8, 4, 1), "OpenSSH_8.4p1"),
        ("ssh", "versions/openssh-9.2p1-ssh-V.txt", True, (9, 2, 1), "OpenSSH_9.2p1"),
    ],
)
def test_recorded_versions_are_read(tool: str, file: str, stderr: bool, parts: tuple[int, ...], shown: str) -> None:
    text = _read(file)
    found = parse_tool_version(tool, "" if stderr else text, text if stderr else "")
    assert found.version is not None and found.version.parts == parts
    assert found.describe() == shown


def test_older_than_tested_warns_with_both_versions() -> None:
    status, detail = assess(parse_tool_version("tc", _read("versions/tc-V-ubuntu-20.04-public.txt")))
    assert status == "warn"
    assert detail.startswith("iproute2-ss200127 found; the harness is tested from iproute2-5.9.0 (Debian 11's")
    for tool, file in (("tc", "versions/tc-V-iproute2-5.10.txt"), ("fio", "fio/fio-3.25-version.txt")):
        assert assess(parse_tool_version(tool, _read(file)))[0] == "ok"


def test_older_than_needed_blocks_naming_found_and_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    # the mechanism, with a floor for fio as a requirement would state one
    floor = Requirement(Version((3, 2), "fio-3.2"), "x", Version((3, 30), "fio-3.30"), "--some-option")
    monkeypatch.setitem(toolversions.REQUIREMENTS, "fio", floor)
    status, detail = assess(parse_tool_version("fio", _read("fio/fio-3.25-version.txt")))
    assert (status, detail) == ("BLOCK", "fio-3.25 found, fio-3.30 or newer needed (--some-option)")


@given(st.tuples(st.integers(0, 99), st.integers(0, 99)), st.tuples(st.integers(0, 99), st.integers(0, 99)))
def test_fio_versions_order_like_their_numbers(a: tuple[int, int], b: tuple[int, int]) -> None:
    va = parse_tool_version("fio", f"fio-{a[0]}.{a[1]}\n").version
    vb = parse_tool_version("fio", f"fio-{b[0]}.{b[1]}\n").version
    assert va is not None and vb is not None
    assert (va < vb) == (a < b)


def _outputs(**answers: Answer) -> dict[str, Any]:
    class Out:
        def __init__(self, a: Answer) -> None:
            self.ok, self.stdout, self.stderr = a.rc == 0, a.stdout, a.stderr

    return {k: Out(v) for k, v in answers.items()}


def test_node_versions_for_provenance() -> None:
    outputs = _outputs(
        tc=Answer(_read("versions/tc-V-iproute2-5.10.txt")),
        fio=Answer(_read("fio/fio-3.25-version.txt")),
        iperf3=Answer(""),
        ping=Answer(stderr=_read("versions/busybox-1.37.0-ping-V.txt"), rc=1),
        ssh=Answer(stderr=_read("versions/openssh-8.4p1-ssh-V.txt")),
        os=Answer(_read("versions/os-release-pretty-name-debian12.txt")),
    )
    assert node_versions(outputs) == {
        "tc": "iproute2-5.9.0",
        "fio": "fio-3.25",
        "iperf3": "missing",
        "ping": "busybox 1.37.0",
        "ssh": "OpenSSH_8.4p1",
        "os": "Debian GNU/Linux 12 (bookworm)",
    }
    checks = {check: status for check, status, _ in node_version_checks(outputs)}
    assert checks == {
        "tc version": "ok",
        "fio version": "ok",
        "iperf3 version": "ok",
        "ping version": "ok",
        "ssh version": "ok",
        "os": "ok",
    }


def test_preflight_reports_versions_and_blocks_an_unreadable_psched() -> None:
    report = preflight({"a1": lab_node("a1"), "a2": lab_node("a2")})
    assert finding(report, "a1", "tc version").status == "ok"
    assert finding(report, "a1", "psched").status == "ok"
    old = lab_node("a1", tc=Answer(_read("versions/tc-V-ubuntu-20.04-public.txt")))
    no_psched = lab_node("a2", v_psched=Answer(stderr="cat: /proc/net/psched: No such file or directory\n", rc=1))
    report = preflight({"a1": old, "a2": no_psched})
    tc = finding(report, "a1", "tc version")
    assert tc.status == "warn" and "iproute2-ss200127 found" in tc.detail
    psched = finding(report, "a2", "psched")
    assert psched.status == "BLOCK" and "15.625 times too short" in psched.detail
    assert not report.ok
