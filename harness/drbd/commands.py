"""The DRBD commands the harness may run, as argv lists (pure), and parsers for version output.

Every builder validates the resource name first and returns a list the remote layer quotes
with ``shlex`` — so nothing from an inventory can become a second word or an option.  The name
follows the inventory's own rule (:mod:`harness.fields`: 1-64 of letters, digits and ``_.+-``),
which refuses the two names drbdadm would read as something else:

* a leading ``-`` (``--discard-my-data`` would be taken as an option);
* ``all``, drbdadm's keyword for *every* configured resource — ``drbdadm down all`` on a
  production cluster must be impossible to reach from a typo.

What is deliberately missing: builders for ``--discard-my-data``,
``invalidate``/``invalidate-remote``, ``primary --force``, ``secondary --force``, ``resume-io``,
``new-current-uuid --clear-bitmap``.  Those repair or override DRBD's own safety decisions and
may throw data away; the harness reports the state and leaves the decision to a human.
``tests/unit/test_drbd_commands.py`` asserts that no builder can emit them.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from harness.drbd.errors import DrbdOutputError
from harness.errors import ConfigError
from harness.fields import RESOURCE_PATTERN, reserved_resource_name

__all__ = [
    "FORBIDDEN_TOKENS",
    "READ_ONLY_BUILDERS",
    "STATE_CHANGE_BUILDERS",
    "DrbdVersion",
    "check_resource_name",
    "connect_argv",
    "cstate_argv",
    "describe_version",
    "disconnect_argv",
    "down_argv",
    "dstate_argv",
    "dump_argv",
    "events2_now_argv",
    "events2_watch_argv",
    "get_gi_argv",
    "parse_drbdadm_version",
    "parse_proc_drbd_version",
    "primary_argv",
    "proc_drbd_argv",
    "role_argv",
    "secondary_argv",
    "sh_dev_argv",
    "sh_ll_dev_all_argv",
    "sh_ll_dev_argv",
    "show_argv",
    "show_defaults_argv",
    "status_json_argv",
    "up_argv",
    "verify_argv",
    "version_argv",
]

_RESOURCE_RE: Final = re.compile(RESOURCE_PATTERN)

#: Tokens no builder may ever produce: they override DRBD's own safety decisions and may throw
#: data away.  ``--force`` covers ``primary --force`` and ``secondary --force``; the others are
#: DRBD's repair/override commands.
FORBIDDEN_TOKENS: Final = frozenset(
    {
        "--discard-my-data",
        "invalidate",
        "invalidate-remote",
        "--force",
        "resume-io",
        "new-current-uuid",
        "--clear-bitmap",
    }
)


def check_resource_name(name: str) -> str:
    """Return ``name`` if it is a DRBD resource name safe to pass to drbdadm/drbdsetup."""
    if isinstance(name, str) and name.startswith("-"):
        raise ConfigError(f"DRBD resource name {name!r} starts with '-'; drbdadm would read it as an option")
    if not isinstance(name, str) or not _RESOURCE_RE.fullmatch(name):
        raise ConfigError(f"DRBD resource name {name!r} is not allowed: use 1-64 of letters, digits and '_.+-'")
    if reserved_resource_name(name):
        raise ConfigError(f"DRBD resource name {name!r} is drbdadm's keyword for every resource; refused")
    return name


# -- read-only queries --------------------------------------------------------------------------
def events2_now_argv(resource: str) -> list[str]:
    """Current state of one resource, statistics included, then exit (the main probe)."""
    return ["drbdsetup", "events2", "--now", "--statistics", check_resource_name(resource)]


def events2_watch_argv(resource: str) -> list[str]:
    """Stream the resource's state changes with timestamps (run under a node-side deadline)."""
    return ["drbdsetup", "events2", "--timestamps", "--statistics", check_resource_name(resource)]


def sh_dev_argv(resource: str) -> list[str]:
    """The DRBD device of the resource (``/dev/drbdN``) as drbdadm resolves it on the node."""
    return ["drbdadm", "sh-dev", check_resource_name(resource)]


def sh_ll_dev_argv(resource: str) -> list[str]:
    """The backing ("lower-level") device, which the harness must never write to."""
    return ["drbdadm", "sh-ll-dev", check_resource_name(resource)]


def show_argv(resource: str) -> list[str]:
    """Effective kernel configuration of the resource (run metadata; baselines compare it)."""
    return ["drbdsetup", "show", check_resource_name(resource)]


def show_defaults_argv(resource: str) -> list[str]:
    """The running configuration with every default spelled out (``protocol C; # default``),
    so the config audit reads what the kernel does, not what it guesses from absent keys."""
    return ["drbdsetup", "show", "--show-defaults", check_resource_name(resource)]


def dump_argv(resource: str) -> list[str]:
    """The configuration file's view of the resource (handlers live only there, not in the
    kernel).  ``-v``: a plain ``dump RES`` prints the resource without the ``common`` section
    it inherits from (drbdadm skips ``expand_common`` for dump unless verbose)."""
    return ["drbdadm", "-v", "dump", check_resource_name(resource)]


def status_json_argv(resource: str) -> list[str]:
    """``drbdsetup status --json`` — DRBD 9 utils only (8.4's drbdsetup has no JSON)."""
    return ["drbdsetup", "status", "--json", "--verbose", "--statistics", check_resource_name(resource)]


def get_gi_argv(resource: str) -> list[str]:
    """The resource's data generation UUIDs and flags, one line (:mod:`harness.drbd.generations`)."""
    return ["drbdadm", "get-gi", check_resource_name(resource)]


def cstate_argv(resource: str) -> list[str]:
    return ["drbdadm", "cstate", check_resource_name(resource)]


def dstate_argv(resource: str) -> list[str]:
    return ["drbdadm", "dstate", check_resource_name(resource)]


def role_argv(resource: str) -> list[str]:
    return ["drbdadm", "role", check_resource_name(resource)]


def sh_ll_dev_all_argv() -> list[str]:
    """The backing device of every resource configured on the node, one per line, including
    resources the inventory does not name (the scratch-device guard: a disk that backs any DRBD
    resource is not scratch).  The only builder that says ``all``, and it only reads."""
    return ["drbdadm", "sh-ll-dev", "all"]


def version_argv() -> list[str]:
    """Kernel module and utils versions, as shell variable assignments."""
    return ["drbdadm", "--version"]


def proc_drbd_argv() -> list[str]:
    """/proc/drbd: version on every DRBD, per-minor status on 8.x (pre-8.4.6 fallback)."""
    return ["cat", "/proc/drbd"]


# -- the few state changes of the lab and failover scenarios -----------------------------------
def primary_argv(resource: str) -> list[str]:
    """Promote.  Never with ``--force``: DRBD refuses to promote without good data, and it is right."""
    return ["drbdadm", "primary", check_resource_name(resource)]


def secondary_argv(resource: str) -> list[str]:
    return ["drbdadm", "secondary", check_resource_name(resource)]


def disconnect_argv(resource: str) -> list[str]:
    return ["drbdadm", "disconnect", check_resource_name(resource)]


def connect_argv(resource: str) -> list[str]:
    """Reconnect.  Never with ``--discard-my-data`` (that is split-brain recovery for a human)."""
    return ["drbdadm", "connect", check_resource_name(resource)]


def down_argv(resource: str) -> list[str]:
    return ["drbdadm", "down", check_resource_name(resource)]


def up_argv(resource: str) -> list[str]:
    return ["drbdadm", "up", check_resource_name(resource)]


def verify_argv(resource: str, start_sector: int = 0, stop_sector: int | None = None) -> list[str]:
    """Start an online verify of ``[start_sector, stop_sector)`` (512-byte sectors; to the end
    when ``stop_sector`` is None).  It reads both replicas and compares checksums; it never
    writes, it only marks what differs out of sync for the next resync.  drbdadm hands the
    options after ``--`` to drbdsetup (``drbdsetup verify MINOR --start=S --stop=E``)."""
    if start_sector < 0 or (stop_sector is not None and stop_sector <= start_sector):
        raise ValueError(f"verify range [{start_sector}, {stop_sector}) is empty or negative")
    opts = [f"--start={start_sector}"] + ([f"--stop={stop_sector}"] if stop_sector is not None else [])
    return ["drbdadm", "--", *opts, "verify", check_resource_name(resource)]


#: Every builder that takes a resource, by name: the test that no builder emits a forbidden token
#: walks these.
READ_ONLY_BUILDERS: Final[Mapping[str, Callable[[str], list[str]]]] = {
    "events2_now": events2_now_argv,
    "events2_watch": events2_watch_argv,
    "sh_dev": sh_dev_argv,
    "sh_ll_dev": sh_ll_dev_argv,
    "show": show_argv,
    "show_defaults": show_defaults_argv,
    "dump": dump_argv,
    "status_json": status_json_argv,
    "cstate": cstate_argv,
    "dstate": dstate_argv,
    "role": role_argv,
    "get_gi": get_gi_argv,
}
STATE_CHANGE_BUILDERS: Final[Mapping[str, Callable[[str], list[str]]]] = {
    "primary": primary_argv,
    "secondary": secondary_argv,
    "disconnect": disconnect_argv,
    "connect": connect_argv,
    "down": down_argv,
    "up": up_argv,
    "verify": verify_argv,
}


# -- versions -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class DrbdVersion:
    """Versions of the kernel module and of drbd-utils, for run provenance."""

    kernel: str | None
    kernel_code: int | None = None
    utils: str | None = None
    api: int | None = None
    build_tag: str | None = None

    @property
    def kernel_major(self) -> int | None:
        return int(self.kernel.split(".", 1)[0]) if self.kernel else None

    @property
    def is_drbd9(self) -> bool:
        return (self.kernel_major or 0) >= 9


def describe_version(text: str) -> str:
    """``drbdadm --version`` in one line, for preflight's tool check."""
    parsed = parse_drbdadm_version(text)
    return f"DRBD kernel {parsed.kernel}, utils {parsed.utils or '?'}"


def _code_to_version(code: int) -> str:
    # DRBD packs the version as 0xMMmmpp: 0x08040b is 8.4.11.
    return f"{code >> 16 & 0xFF}.{code >> 8 & 0xFF}.{code & 0xFF}"


def parse_drbdadm_version(text: str) -> DrbdVersion:
    """Parse ``drbdadm --version`` (``KEY=value`` lines; values are shell-escaped).

    ``DRBD_KERNEL_VERSION_CODE`` is what every drbdadm prints, in lower or upper case hex;
    ``DRBD_KERNEL_VERSION`` and ``DRBDADM_VERSION`` are missing from some builds (the lab's
    drbdadm-84 prints neither), so the kernel version falls back to the code.
    """
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and re.fullmatch(r"[A-Z_]+", key):
            try:
                words = shlex.split(value)
            except ValueError:
                words = [value]
            values[key] = " ".join(words)
    code_text = values.get("DRBD_KERNEL_VERSION_CODE")
    code: int | None = None
    if code_text is not None:
        try:
            code = int(code_text, 16)
        except ValueError:
            raise DrbdOutputError(f"drbdadm --version: bad DRBD_KERNEL_VERSION_CODE {code_text!r}") from None
    kernel = values.get("DRBD_KERNEL_VERSION") or (_code_to_version(code) if code is not None else None)
    if kernel is None and "DRBDADM_VERSION" not in values:
        raise DrbdOutputError("drbdadm --version printed no DRBD version (is drbd-utils installed?)")
    api = values.get("DRBDADM_API_VERSION")
    return DrbdVersion(
        kernel=kernel,
        kernel_code=code,
        utils=values.get("DRBDADM_VERSION"),
        api=int(api) if api and api.isdigit() else None,
        build_tag=values.get("DRBDADM_BUILDTAG"),
    )


def parse_proc_drbd_version(text: str) -> str:
    """The module version from /proc/drbd's first line (``version: 8.4.11 (api:1/...)``)."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    m = re.match(r"^version:\s+(\d+\.\d+\.\d+\S*)", first)
    if not m:
        raise DrbdOutputError(f"/proc/drbd: first line is not a DRBD version line: {first!r}")
    return m.group(1)
