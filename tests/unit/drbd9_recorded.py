"""The DRBD 9.2.18 recordings (tests/data/drbd/drbd-9.2.18, sources and states in its README.md):
each file's node, resource, command and state, read from its name, and what the configuration
recorded beside them says.

Names are ``<node>.<resource>.<command>.<n>-<state>.txt`` (``.json`` for ``status --json``,
``.stderr`` for the standard error of the same command); files without a resource cover all of
them (``all``) or none."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final

from harness.drbd.config import find_resources, parse_config
from harness.drbd.layout import ResourceLayout, layout_of_dump, layout_of_show
from harness.drbd.state import ResourceState

DIR: Final = Path(__file__).resolve().parent.parent / "data" / "drbd" / "drbd-9.2.18"
RESOURCES: Final = ("r-sa", "r-ma", "r3", "single-az")
#: every recorded file; the README is their source, not a recording
FILES: Final = sorted(p.name for p in DIR.iterdir() if p.name != "README.md")


@dataclass(frozen=True)
class Recording:
    name: str
    node: str
    resource: str | None
    command: str
    state: str | None
    stderr: bool
    #: the command covered every resource (``events2 ... all``, ``status --json`` of all)
    every: bool = False

    @property
    def number(self) -> int | None:
        """The state's number in its resource's scenario (``8`` of ``8-diskless-tiebreaker``)."""
        head = (self.state or "").split("-", 1)[0].rstrip("abc")
        return int(head) if head.isdigit() else None

    def text(self) -> str:
        return (DIR / self.name).read_text()

    @property
    def stdout(self) -> str:
        """What the command printed on stdout (this file, or the one a ``.stderr`` goes with)."""
        return (DIR / self.name.removesuffix(".stderr")).read_text()

    @property
    def stderr_text(self) -> str:
        path = DIR / (self.name if self.stderr else f"{self.name}.stderr")
        return path.read_text() if path.exists() else ""

    def sibling(self, command: str, suffix: str = ".txt") -> Path | None:
        """The file of another command on the same node, resource and state, if recorded."""
        scope = [self.resource] if self.resource else []
        parts = [self.node, *scope, command, *(["all"] if self.every else []), *([self.state] if self.state else [])]
        path = DIR / (".".join(parts) + suffix)
        return path if path.exists() else None


def recording(name: str) -> Recording:
    stem = name.removesuffix(".stderr")
    stem = stem.rsplit(".", 1)[0]  # .txt / .json
    parts = stem.split(".")
    resource = parts[1] if parts[1] in RESOURCES else None
    rest = parts[2:] if resource else parts[1:]
    command, more = rest[0], [p for p in rest[1:] if p != "all"]
    state = more[0] if more else None
    return Recording(name, parts[0], resource, command, state, name.endswith(".stderr"), "all" in rest)


def read(name: str) -> str:
    return (DIR / name).read_text()


@cache
def dump_layout(name: str, resource: str) -> ResourceLayout:
    """The layout in a recorded ``drbdadm -v dump`` (``common`` is empty in every recording)."""
    (block,) = find_resources(parse_config(read(name)), resource)
    return layout_of_dump(block.block or (), {})


@cache
def show_layout(name: str, resource: str) -> ResourceLayout:
    (block,) = find_resources(parse_config(read(name)), resource)
    return layout_of_show(block.block or ())


def tie_breakers(resource: str, number: int | None) -> frozenset[str]:
    """The peers the recorded configuration makes diskless at that state: r3's a3 is
    re-created with ``disk none`` at state 8, as a3's own dump of then shows."""
    if resource == "r3" and number is not None and number >= 8:
        return frozenset(dump_layout("a3.r3.drbdadm-v-dump.8-diskless.txt", "r3").diskless)
    return frozenset()


def hosts(resource: str) -> set[str]:
    """The resource's hosts, from a1's or a3's recorded dump."""
    node = "a3" if resource == "r-ma" else "a1"
    return {n for c in dump_layout(f"{node}.{resource}.drbdadm-v-dump.txt", resource).connections for n in c.names()}


def with_config(rec: Recording, state: ResourceState) -> ResourceState:
    return state.with_diskless(tie_breakers(rec.resource or "", rec.number))
