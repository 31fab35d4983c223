"""The versions of the node-side tools the harness drives and parses, read once per node.

What each tool prints for its version (all recorded; tests/data/<tool>/):

* ``tc -V``: ``tc utility, iproute2-6.1.0, libbpf 1.1.2``; before 5.8 a snapshot date,
  ``iproute2-ss200127`` (5.5.0, Ubuntu 20.04) or ``iproute2-ss190107`` (Debian 10's 4.20);
  Debian 11's 5.10 package prints ``iproute2-5.9.0``;
* ``fio --version``: ``fio-3.33``;
* ``iperf3 --version``: ``iperf 3.9 (cJSON 1.7.13)``;
* ``ping -V``: ``ping from iputils 20210202`` (older: ``ping utility, iputils-s20180629``);
  BusyBox's ping has no ``-V`` and says ``BusyBox v1.30.1 (...) multi-call binary.`` on stderr;
* ``ssh -V`` (stderr): ``OpenSSH_8.4p1 Debian-5+deb11u3, OpenSSL 1.1.1w  11 Sep 2023``;
* ``/etc/os-release``'s ``PRETTY_NAME``.

:data:`REQUIREMENTS` says, per tool, the oldest version the harness's parsers and command
lines are tested with (recorded outputs) and, where the harness truly cannot work with an older
one, the version it needs and why (the hard floors live there and nowhere else).
:func:`assess` turns a version into a preflight status: BLOCK below the needed version, warn
below the tested one, with the version found and the version wanted in the message.  Also
read here: ``/proc/net/psched``, which tc needs to convert times (see
:mod:`harness.impair.qdiscs`): unreadable, tc would set every netem delay 15.625 times too
short, so it blocks.  Nothing here runs a command.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol

__all__ = [
    "PROBES",
    "REQUIREMENTS",
    "Requirement",
    "ToolVersion",
    "Version",
    "assess",
    "assess_psched",
    "node_version_checks",
    "node_versions",
    "parse_tool_version",
]

Status = Literal["ok", "warn", "BLOCK"]

#: the tools whose versions are read and judged (``os`` and ``psched`` are read alongside)
TOOLS: Final = ("tc", "fio", "iperf3", "ping", "ssh")


class CommandOutput(Protocol):
    """What a probe printed (a :class:`harness.remote.CommandResult` is one)."""

    @property
    def ok(self) -> bool: ...

    @property
    def stdout(self) -> str: ...

    @property
    def stderr(self) -> str: ...


@dataclass(frozen=True, order=True)
class Version:
    """A comparable version; ``text`` is how the tool spelled it."""

    parts: tuple[int, ...]
    text: str = field(default="", compare=False)

    def __str__(self) -> str:
        return self.text or ".".join(map(str, self.parts))


@dataclass(frozen=True)
class ToolVersion:
    """What one node said for one tool: ``version`` is None when it printed nothing we read."""

    tool: str
    version: Version | None
    line: str
    flavour: str = ""  # "busybox" for BusyBox's ping

    def describe(self) -> str:
        if self.version is None:
            return self.line or "missing"
        return f"{self.flavour + ' ' if self.flavour else ''}{self.version}"


@dataclass(frozen=True)
class Requirement:
    """What the harness knows about a tool's versions."""

    tested: Version
    tested_with: str
    needed: Version | None = None
    needed_for: str = ""


#: read-only commands, one per tool, that print its version (to stdout or stderr)
PROBES: Final[Mapping[str, Sequence[str]]] = {
    "tc": ["tc", "-V"],
    "fio": ["fio", "--version"],
    "iperf3": ["sh", "-c", "command -v iperf3 >/dev/null && iperf3 --version"],
    "ping": ["ping", "-V"],
    "ssh": ["ssh", "-V"],
    "os": ["sh", "-c", '. /etc/os-release 2>/dev/null && printf "%s\\n" "$PRETTY_NAME"'],
    "psched": ["cat", "/proc/net/psched"],
}

#: tested: the oldest version whose real output the parsers are tested on (tests/data/);
#: needed: the hard floor, below which the harness cannot work, with the reason and where it is
#: documented (None: no floor is known, and below ``tested`` is only a warning).  No floor for
#: tc: no release boundary the harness depends on is documented (5.10's u32 text-in-JSON, netem
#: times and missing tbf peakrate are handled), and a tc that prints no JSON at all is blocked by
#: preflight's qdisc read-back, which names the tc version found.
REQUIREMENTS: Final[Mapping[str, Requirement]] = {
    "tc": Requirement(Version((5, 9, 0), "iproute2-5.9.0"), "Debian 11's iproute2 5.10"),
    "fio": Requirement(
        Version((3, 25), "fio-3.25"),
        "Debian 11's fio 3.25",
        needed=Version((2, 2, 10), "fio-2.2.10"),
        needed_for=(
            "failover and partition cells count the acknowledged writes from the write total_ios of fio's "
            "JSON, which fio 2.1.4 does not print and 2.2.10 does (tests/data/fio): without it no write "
            "would count as acknowledged and the oracle would verify nothing"
        ),
    ),
    "iperf3": Requirement(
        Version((3, 9), "iperf3 3.9"),
        "Debian 11's iperf3 3.9",
        needed=Version((3, 0, 11), "iperf3 3.0.11"),
        needed_for=(
            "the path-rate server runs `iperf3 -s -1`, and -1/--one-off came with iperf 3.0.11 "
            "(esnet/iperf RELNOTES.md); upgrade iperf3, or remove it to skip the path-rate measurement"
        ),
    ),
    "ping": Requirement(Version((20210202,), "iputils 20210202"), "Debian 11's iputils-ping"),
    "ping/busybox": Requirement(Version((1, 30, 1), "busybox 1.30.1"), "Debian 11's busybox"),
}

# snapshot tags of iproute2 before 5.8, to the release they name
_IPROUTE_SNAPSHOTS: Final = {
    "190107": (4, 20, 0),  # Debian 10's 4.20.0 package (iproute2/iproute2#31)
    "191125": (5, 4, 0),
    "200127": (5, 5, 0),  # Ubuntu 20.04
}
_PATTERNS: Final[Mapping[str, re.Pattern[str]]] = {
    "tc": re.compile(r"iproute2-(?:ss(?P<ss>\d{6})|(?P<v>\d+(?:\.\d+)+))"),
    "fio": re.compile(r"\bfio-(?P<v>\d+\.\d+(?:\.\d+)?)"),
    "iperf3": re.compile(r"\biperf (?P<v>\d+\.\d+(?:\.\d+)?)"),
    "ping": re.compile(r"\biputils[- ]s?(?P<v>\d{8})\b"),
    "ssh": re.compile(r"\bOpenSSH_(?P<v>\d+\.\d+)(?:p(?P<p>\d+))?"),
}
_BUSYBOX: Final = re.compile(r"\bBusyBox v(?P<v>\d+\.\d+(?:\.\d+)?)")


def _parts(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def parse_tool_version(tool: str, stdout: str, stderr: str = "") -> ToolVersion:
    """Read ``tool``'s version from what its :data:`PROBES` command printed."""
    text = f"{stdout}\n{stderr}"
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if tool == "os":
        return ToolVersion(tool, None, first)
    if tool == "ping" and (busybox := _BUSYBOX.search(text)):
        return ToolVersion(tool, Version(_parts(busybox["v"]), busybox["v"]), first, flavour="busybox")
    pattern = _PATTERNS.get(tool)
    match = pattern.search(text) if pattern else None
    if match is None:
        return ToolVersion(tool, None, first)
    if tool == "tc" and match["ss"]:
        ss = match["ss"]
        known = _IPROUTE_SNAPSHOTS.get(ss)
        # an unknown snapshot tag is still older than 5.8, which dropped them
        return ToolVersion(tool, Version(known or (5, 7, 99), f"iproute2-ss{ss}"), first)
    parts = _parts(match["v"])
    if tool == "ssh" and match["p"]:
        parts += (int(match["p"]),)
    spelled = {
        "tc": f"iproute2-{match['v']}",
        "fio": f"fio-{match['v']}",
        "iperf3": f"iperf3 {match['v']}",
        "ping": f"iputils {match['v']}",
    }.get(tool, match[0].split()[-1])
    return ToolVersion(tool, Version(parts, spelled), first)


def assess(found: ToolVersion, requirements: Mapping[str, Requirement] = REQUIREMENTS) -> tuple[Status, str]:
    """Preflight status and detail for one tool: the version found against ``requirements``."""
    key = f"{found.tool}/{found.flavour}" if found.flavour else found.tool
    req = requirements.get(key)
    if found.version is None or req is None:
        return "ok", found.describe()
    if req.needed is not None and found.version < req.needed:
        return "BLOCK", f"{found.describe()} found, {req.needed} or newer needed ({req.needed_for})"
    if found.version < req.tested:
        return "warn", (
            f"{found.describe()} found; the harness is tested from {req.tested} ({req.tested_with}) "
            "and older releases may print what its parsers do not know"
        )
    return "ok", found.describe()


def assess_psched(ok: bool, stdout: str) -> tuple[Status, str]:
    """``/proc/net/psched`` must be readable where tc runs (see :mod:`harness.impair.qdiscs`)."""
    fields = stdout.split()
    if ok and len(fields) >= 2:
        return "ok", f"/proc/net/psched {' '.join(fields[:4])}"
    return "BLOCK", (
        "/proc/net/psched is not readable (a chroot or container without /proc?): tc would take kernel "
        "ticks for microseconds and set every netem delay 15.625 times too short"
    )


def node_versions(outputs: Mapping[str, CommandOutput]) -> dict[str, str]:
    """Tool → version as found (``missing`` when the probe printed nothing), plus ``os``:
    the per-node provenance of a sample."""
    found = {}
    for tool in (*TOOLS, "os"):
        if tool in outputs:
            out = outputs[tool]
            found[tool] = parse_tool_version(tool, out.stdout, out.stderr).describe()
    return found


def node_version_checks(outputs: Mapping[str, CommandOutput]) -> list[tuple[str, Status, str]]:
    """Preflight lines ``(check, status, detail)`` for the :data:`PROBES` outputs of one node.

    A missing tool is not judged here (preflight already blocks on a missing fio or tc; iperf3
    is optional), only the versions of the tools that answered, and /proc/net/psched."""
    checks: list[tuple[str, Status, str]] = []
    for tool in TOOLS:
        out = outputs.get(tool)
        if out is None:
            continue
        found = parse_tool_version(tool, out.stdout, out.stderr)
        if found.version is None:
            if tool == "iperf3" and not out.stdout.strip():
                checks.append(("iperf3 version", "ok", "not installed: the path-rate measurement is skipped"))
            continue
        status, detail = assess(found)
        checks.append((f"{tool} version", status, detail))
    if "os" in outputs:
        checks.append(("os", "ok", parse_tool_version("os", outputs["os"].stdout).describe()))
    if "psched" in outputs:
        psched = outputs["psched"]
        checks.append(("psched", *assess_psched(psched.ok, psched.stdout)))
    return checks
