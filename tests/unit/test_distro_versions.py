"""The distributions the lab cannot run (RHEL 8/9, Amazon Linux 2023, Ubuntu 20.04/22.04/24.04):
their public outputs (tests/data/versions/public/SOURCES.md and the iperf3/fio public folders)
read by the harness's own readers, and judged by preflight's rules."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.cell.record import os_release_name
from harness.drbd.commands import describe_version, parse_drbdadm_version
from harness.probes.toolversions import PROBES, assess, parse_tool_version

DATA = Path(__file__).resolve().parents[1] / "data"
PUBLIC = DATA / "versions" / "public"

OS_RELEASES = {
    "os-release-rhel-8.9": "Red Hat Enterprise Linux 8.9 (Ootpa)",
    "os-release-rhel-9.3": "Red Hat Enterprise Linux 9.3 (Plow)",
    "os-release-amzn-2023": "Amazon Linux 2023",
    "os-release-ubuntu-22.04.2": "Ubuntu 22.04.2 LTS",
    "os-release-ubuntu-22.04.5": "Ubuntu 22.04.5 LTS",
    "os-release-ubuntu-24.04.3": "Ubuntu 24.04.3 LTS",
}


@pytest.mark.parametrize(("name", "pretty"), sorted(OS_RELEASES.items()))
def test_os_release_through_the_probe_and_the_recorder(name: str, pretty: str, tmp_path: Path) -> None:
    path = PUBLIC / name
    # preflight's own probe (a shell sourcing the file), pointed at the recorded file
    script = PROBES["os"][2].replace("/etc/os-release", str(path))
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True).stdout
    assert parse_tool_version("os", out).describe() == pretty
    # the sample provenance reads the file itself
    assert os_release_name(path.read_text()) == pretty


# file, tool, whether the tool prints it on stderr, what the harness shows, preflight's verdict
LINES = [
    ("ssh-V-el9.4.txt", "ssh", True, "OpenSSH_8.7p1", "ok"),
    ("ssh-V-amzn-2023.txt", "ssh", True, "OpenSSH_8.7p1", "ok"),
    ("iperf3-version-ubuntu-22.04.5-line1.txt", "iperf3", False, "iperf3 3.9", "ok"),
    ("fio-version-ubuntu-22.04.5-built.txt", "fio", False, "fio-3.38", "ok"),
    ("ping-V-ubuntu-20.04.txt", "ping", False, "iputils 20190709", "warn"),
    ("ping-V-ubuntu-22.04.3.txt", "ping", False, "iputils 20211215", "ok"),
]


@pytest.mark.parametrize(("name", "tool", "stderr", "shown", "status"), LINES)
def test_version_lines(name: str, tool: str, stderr: bool, shown: str, status: str) -> None:
    text = (PUBLIC / name).read_text()
    found = parse_tool_version(tool, "" if stderr else text, text if stderr else "")
    assert found.describe() == shown
    assert assess(found)[0] == status


def test_ubuntu_24_04_iproute2_read_by_the_tc_reader() -> None:
    # `ip -V`, not `tc -V`: both come from one iproute2 build and print the same
    # `iproute2-<version>` tag, which is all the tc reader takes from the line
    text = (PUBLIC / "ip-V-ubuntu-24.04.txt").read_text()
    found = parse_tool_version("tc", text)
    assert (found.describe(), found.line) == ("iproute2-6.1.0", "ip utility, iproute2-6.1.0, libbpf 1.3.0")
    assert assess(found) == ("ok", "iproute2-6.1.0")


def test_ubuntu_20_04_ping_warns_naming_both_versions() -> None:
    status, detail = assess(parse_tool_version("ping", (PUBLIC / "ping-V-ubuntu-20.04.txt").read_text()))
    assert status == "warn"
    assert detail.startswith("iputils 20190709 found; the harness is tested from iputils 20210202")


@pytest.mark.parametrize(
    ("name", "utils"), [("drbdadm-version-debian-11.txt", "9.15.0"), ("drbdadm-version-fedora-34.txt", "9.16.0")]
)
def test_drbdadm_version_with_an_escaped_buildtag(name: str, utils: str) -> None:
    text = (PUBLIC / name).read_text()
    parsed = parse_drbdadm_version(text)
    assert (parsed.kernel, parsed.kernel_code, parsed.utils, parsed.api) == ("8.4.11", 0x08040B, utils, 1)
    assert not parsed.is_drbd9
    assert parsed.build_tag is not None and parsed.build_tag.startswith("GIT-hash: ")
    assert describe_version(text) == f"DRBD kernel 8.4.11, utils {utils}"


@pytest.mark.parametrize(
    ("path", "shown", "status"),
    [
        ("iperf3/public/iperf3-3.16-ubuntu-24.04-statuspage.json", "iperf3 3.16", "ok"),
        ("iperf3/public/iperf3-3.7-ubuntu-20.04-robotframework.json", "iperf3 3.7", "warn"),
    ],
)
def test_iperf3_versions_the_json_names(path: str, shown: str, status: str) -> None:
    version = json.loads((DATA / path).read_text())["start"]["version"]
    found = parse_tool_version("iperf3", version)
    assert (found.describe(), assess(found)[0]) == (shown, status)


@pytest.mark.parametrize(
    ("path", "shown", "status"),
    [
        ("fio/public/fio-3.16-randrw-lat-percentiles-superbenchmark.json", "fio-3.16", "warn"),  # Ubuntu 20.04
        ("fio/public/fio-3.28-gtod-reduce-metrics-operator.json", "fio-3.28", "ok"),  # Ubuntu 22.04
    ],
)
def test_ubuntu_fio_packages_from_their_reports(path: str, shown: str, status: str) -> None:
    found = parse_tool_version("fio", json.loads((DATA / path).read_text())["fio version"])
    assert found.describe() == shown
    verdict, detail = assess(found)
    assert verdict == status
    if status == "warn":
        assert detail.startswith(f"{shown} found; the harness is tested from fio-3.25")
