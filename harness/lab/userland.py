"""What userland a lab guest runs: its distribution and the versions of the tools the harness drives.

One shell probe serves twice: a built root is checked with it before it is used (run in a
chroot on the host: every tool must answer), and ``harness lab status`` runs it on each guest
over SSH.  The probe prints ``key<TAB>first line of the tool's answer`` lines; the parser keeps
only the version in each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from harness.probes.toolversions import parse_tool_version

__all__ = ["KEY_TOOLS", "PROBE_SCRIPT", "Userland", "parse_probe"]

#: tool -> (command whose output names the version, pattern of the version in it; None: the
#: tool is one the preflight reads, and :mod:`harness.probes.toolversions` parses it).  The commands
#: print to stderr or stdout depending on the tool and its version: both are read.
_TOOLS: Final[dict[str, tuple[str, str | None]]] = {
    "fio": ("fio --version", None),
    "iproute2": ("tc -V", None),
    # drbdadm --version also asks modinfo about the kernel module (absent in a chroot): that
    # noise goes to stderr, the versions to stdout
    "drbd-utils": ("drbdadm --version 2>/dev/null | grep '^DRBDADM_VERSION='", r"DRBDADM_VERSION=(\S+)"),
    "openssh": ("ssh -V", None),
    "iperf3": ("iperf3 --version", None),
    "iputils": ("ping -V", None),
    "mdadm": ("mdadm --version", r"mdadm - v(\S+)"),
    "xfsprogs": ("mkfs.xfs -V", r"version (\S+)"),
    "e2fsprogs": ("mke2fs -V", r"mke2fs (\S+)"),
    "sudo": ("sudo -V", r"Sudo version (\S+)"),
    "kmod": ("modprobe --version", r"kmod version (\S+)"),
    "procps": ("pkill -V", r"procps(?:-ng)? (\S+)"),
}
#: our names of the tools harness.probes.toolversions reads -> its names
_PREFLIGHT_NAMES: Final = {"fio": "fio", "iproute2": "tc", "openssh": "ssh", "iperf3": "iperf3", "iputils": "ping"}
#: the tools whose versions matter most to the harness's parsers (status shows these)
KEY_TOOLS: Final = ("fio", "iproute2", "drbd-utils", "openssh", "iperf3", "iputils")


def _probe_script() -> str:
    lines = [
        # os-release is a shell fragment; a subshell keeps its variables out of the probe
        'printf \'os\\t%s\\n\' "$( . /etc/os-release 2>/dev/null; echo "$PRETTY_NAME")"',
        'printf \'codename\\t%s\\n\' "$( . /etc/os-release 2>/dev/null; echo "$VERSION_CODENAME")"',
        "printf 'debian_version\\t%s\\n' \"$(cat /etc/debian_version 2>/dev/null)\"",
    ]
    for tool, (command, _) in _TOOLS.items():
        lines.append(f"printf '{tool}\\t%s\\n' \"$( ({command}) 2>&1 | tr '\\n' ' ' | head -c 400)\"")
    return "\n".join(lines) + "\n"


#: POSIX sh; needs only printf, cat, tr and the probed tools themselves
PROBE_SCRIPT: Final = _probe_script()


@dataclass(frozen=True)
class Userland:
    """A guest's distribution and tool versions (a missing tool has no entry)."""

    os: str
    codename: str
    debian_version: str
    versions: dict[str, str] = field(default_factory=dict)

    def missing(self) -> list[str]:
        """Tools the probe asked about that did not answer with a version."""
        return [tool for tool in _TOOLS if tool not in self.versions]

    def describe(self, tools: tuple[str, ...] = KEY_TOOLS) -> str:
        """Short text: ``Debian 11.11 (bullseye): fio 3.25, iproute2 5.10.0, ...``."""
        name = f"Debian {self.debian_version}" if self.debian_version else (self.os or "?")
        where = f"{name} ({self.codename})" if self.codename else name
        said = ", ".join(f"{t} {self.versions[t]}" for t in tools if t in self.versions)
        return f"{where}: {said}" if said else where


def _preflight_version(tool: str, text: str) -> str:
    """The bare version (``6.1.0``, ``9.2p1``) of a tool the preflight's parser reads; "" if none."""
    found = parse_tool_version(_PREFLIGHT_NAMES[tool], text)
    if found.version is None:
        return ""
    parts = found.version.parts
    # OpenSSH's portable release number is its third part: 9.2p1
    openssh = tool == "openssh" and len(parts) > 2
    bare = f"{parts[0]}.{parts[1]}p{parts[2]}" if openssh else ".".join(map(str, parts))
    return f"{found.flavour} {bare}" if found.flavour else bare


def parse_probe(text: str) -> Userland:
    """Read :data:`PROBE_SCRIPT`'s output."""
    raw: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("\t")
        if sep:
            raw[key.strip()] = value.strip()
    versions: dict[str, str] = {}
    for tool, (_, pattern) in _TOOLS.items():
        if pattern is None:
            found = _preflight_version(tool, raw.get(tool, ""))
            if found:
                versions[tool] = found
        elif match := re.search(pattern, raw.get(tool, "")):
            versions[tool] = match.group(1)
    return Userland(raw.get("os", ""), raw.get("codename", ""), raw.get("debian_version", ""), versions)
