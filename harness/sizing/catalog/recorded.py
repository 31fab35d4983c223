"""Recorded copies of the clouds' published tables, and the figures each line of them states.

A catalog figure is only as good as the page it was read from, and pages change, so the lines a
figure relies on are kept beside the catalog (``sources/``), each file a copy of one published
table: a header naming the catalog reference it copies, the URL and the date it was read, and the
reader that turns its lines into figures; then the lines, each ``N: text`` with the source's own
line number.  :func:`load_recorded` reads every copy into :class:`Claim` s, one per figure a line
states (``instance_types.c6g.large`` ``network.baseline_gbps`` = 0.75), which the audit holds the
catalog to.  The readers: ``aws-guide`` (the rows of AWS's Instance Types guide: hardware,
network, EBS and instance-store tables, told apart by their shape, and each family's platform
summary, whose hypervisor says ``nitro`` of every size: 1 for Nitro, 0 for Xen), ``azure-sizes`` (the rows of
a Microsoft size page's tables, each under a ``# table: basics|remote|network`` line),
``price-map`` (a generated ``"type": price`` map such as Karpenter's on-demand tables),
``gcloud-csv`` (``gcloud compute machine-types list`` / ``disk-types list`` rows exported as
``;``-separated CSV: a machine type's vCPUs and memory, a disk type's size range) and
``like-sql`` (``UPDATE ... SET bandwidth = 'N' WHERE name LIKE 'n4-%-2'`` lines giving a
machine series' egress bandwidth by name pattern; :func:`resolve` turns a pattern into the
entries it names, the last matching line winning as the statements run in order); the readers
of region pairs' round trips and transfer prices are :mod:`~harness.sizing.catalog.region_readers`'.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from harness.errors import ConfigError
from harness.sizing.catalog.claim import Claim, Reader
from harness.sizing.catalog.region_readers import REGION_READERS

__all__ = ["Claim", "RecordedCopy", "load_recorded", "parse_recorded", "read_recorded_file", "resolve"]

_HEADER = re.compile(r"^#\s*(reference|url|read|reader):\s*(\S.*?)\s*$")
_BODY = re.compile(r"^(\d+): (.*)$")
_PAIR = re.compile(r"^([\d.,]+) / ([\d.,]+)$")
_NUMBER = re.compile(r"^[\d.,]+$")
_GIGABIT = re.compile(r"^([\d.]+) Gigabit$")
_STORE = re.compile(r"^(\d+) x (\d+) GB$")
_HYPERVISOR = re.compile(r"^(Nitro v\d+|Xen)( \*)?$")
_FOOTNOTE = re.compile(r"(^| )1( |$)")
_PRICE = re.compile(r'"(Standard_[A-Za-z0-9_]+|[a-z0-9-]+\.[a-z0-9]+|[a-z][a-z0-9]*-[a-z]+-\d+)":\s*([\d.]+)')
_GCLOUD_MACHINE = re.compile(r"^([a-z][a-z0-9]*-[a-z]+-\d+);(\d+);(True|False);([\d.]+);")
_GCLOUD_DISK = re.compile(r"^([a-z][a-z0-9-]*);(\d+)GB-(\d+)GB;")
_LIKE_SQL = re.compile(r"^UPDATE instances SET bandwidth = '([\d.]+)'\s+WHERE name LIKE '([a-z0-9%_-]+)';$")
_TABLE = re.compile(r"^#\s*table:\s*(\S.*?)\s*$")
_CHECK_MARKS = frozenset({"✓", "✗"})


@dataclass(frozen=True)
class RecordedCopy:
    """One recorded copy: which reference it copies, from where, when, and what it states."""

    reference: str
    url: str
    read: dt.date
    origin: str
    claims: tuple[Claim, ...]


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _type_name(cell: str) -> str:
    """The instance type a first cell names, without the PDF's footnote marks and split words."""
    return _FOOTNOTE.sub(" ", cell.strip()).replace(" ", "")


def _hardware(cells: list[str]) -> Iterator[tuple[str, float | None]]:
    yield "memory_gib", _number(cells[2])
    yield "vcpu", _number(cells[4])


def _network(cells: list[str]) -> Iterator[tuple[str, float | None]]:
    pair = _PAIR.match(cells[1])
    if pair is not None:
        yield "network.baseline_gbps", _number(pair.group(1))
        yield "network.burst_gbps", _number(pair.group(2))
        return
    flat = _GIGABIT.match(cells[1])
    if flat is not None:
        yield "network.baseline_gbps", _number(flat.group(1))
        yield "network.burst_gbps", None


def _ebs(cells: list[str]) -> Iterator[tuple[str, float | None]]:
    mbps, iops = _PAIR.match(cells[1]), _PAIR.match(cells[3])
    if mbps is not None and iops is not None:
        yield "ebs.baseline_mbps", _number(mbps.group(1))
        yield "ebs.max_mbps", _number(mbps.group(2))
        yield "ebs.baseline_iops", _number(iops.group(1))
        yield "ebs.max_iops", _number(iops.group(2))
    elif _NUMBER.match(cells[1]) and _NUMBER.match(cells[3]):
        yield "ebs.max_mbps", _number(cells[1])
        yield "ebs.max_iops", _number(cells[3])


def _store(cells: list[str]) -> Iterator[tuple[str, float | None]]:
    disks, iops = _STORE.match(cells[1]), _PAIR.match(cells[3])
    if disks is not None and iops is not None:
        yield "instance_store.devices", _number(disks.group(1))
        yield "instance_store.device_size_gb", _number(disks.group(2))
        yield "instance_store.read_iops_4k", _number(iops.group(1))
        yield "instance_store.write_iops_4k", _number(iops.group(2))


def _platform(cells: list[str]) -> Iterator[tuple[str, float | None]]:
    """A family's platform summary (9 cells, 8 where it runs Linux alone): 1 for a Nitro hypervisor, 0 for Xen."""
    yield "nitro", 1.0 if cells[1].startswith("Nitro") else 0.0


def _row_shape(cells: list[str]) -> Callable[[list[str]], Iterator[tuple[str, float | None]]] | None:
    """Which table of the guide a row belongs to, told by its columns."""
    if len(cells) in (8, 9) and _HYPERVISOR.match(cells[1]):
        return _platform
    if len(cells) == 9 and cells[1] in _CHECK_MARKS and _NUMBER.match(cells[2]) and cells[4].isdigit():
        return _hardware
    if len(cells) == 9 and (_PAIR.match(cells[1]) or _GIGABIT.match(cells[1])):
        return _network
    if len(cells) == 6 and cells[5] == "default":
        return _ebs
    if len(cells) == 6 and cells[2].endswith("SSD"):
        return _store
    return None


def _aws_guide(reference: str, number: str, text: str, table: str) -> Iterator[Claim]:
    cells = text.strip().strip("|").split("|")
    reader = _row_shape(cells)
    if reader is None:
        return
    # a platform row names a family (``M5``): its figure holds for every size, ``m5.%``
    name = f"{cells[0].strip().lower()}.%" if reader is _platform else _type_name(cells[0])
    entry = f"instance_types.{name}"
    for field, value in reader(cells):
        yield Claim(entry, field, value, reference, f"{number}: {text}")


def _price_map(reference: str, number: str, text: str, table: str) -> Iterator[Claim]:
    for name, price in _PRICE.findall(text):
        yield Claim(f"instance_types.{name}", "price.usd_per_hour", float(price), reference, f"{number}: {text}")


def _azure_figures(table: str, cells: list[str]) -> Iterator[tuple[str, float]]:
    """Basics: vCPUs and memory; remote: uncached Premium SSD IOPS and MB/s (as Mbps, x 8) and
    their burst; network: expected Mb/s (as Gbps)."""
    if table == "basics" and len(cells) == 3:
        yield "vcpu", _number(cells[1])
        yield "memory_gib", _number(cells[2])
    elif table == "remote" and len(cells) >= 6:
        yield "ebs.baseline_iops", _number(cells[2])
        yield "ebs.baseline_mbps", _number(cells[3]) * 8
        yield "ebs.max_iops", _number(cells[4])
        yield "ebs.max_mbps", _number(cells[5]) * 8
    elif table == "network" and len(cells) == 3:
        yield "network.baseline_gbps", _number(cells[2]) / 1000


def _azure_sizes(reference: str, number: str, text: str, table: str) -> Iterator[Claim]:
    """A row of a Microsoft size page's table (``| Standard_D2s_v5 | 2 | 8 |``)."""
    cells = [cell.strip() for cell in text.strip().strip("|").split("|")]
    if not cells[0].startswith("Standard_") or not all(_NUMBER.match(cell) for cell in cells[1:]):
        return
    for field, value in _azure_figures(table, cells):
        yield Claim(f"instance_types.{cells[0]}", field, value, reference, f"{number}: {text}")


def _gcloud_csv(reference: str, number: str, text: str, table: str) -> Iterator[Claim]:
    """A ``gcloud compute machine-types list`` row (name;CPUS;shared;MEMORY_GB;...) or a
    ``disk-types list`` row (name;10GB-65536GB;description): gcloud's GB are GiB."""
    line = f"{number}: {text}"
    machine = _GCLOUD_MACHINE.match(text)
    if machine is not None:
        entry = f"instance_types.{machine.group(1)}"
        yield Claim(entry, "vcpu", _number(machine.group(2)), reference, line)
        yield Claim(entry, "memory_gib", _number(machine.group(4)), reference, line)
        return
    disk = _GCLOUD_DISK.match(text)
    if disk is not None:
        entry = f"volume_types.{disk.group(1)}"
        yield Claim(entry, "min_size_gib", _number(disk.group(2)), reference, line)
        yield Claim(entry, "max_size_gib", _number(disk.group(3)), reference, line)


def _like_sql(reference: str, number: str, text: str, table: str) -> Iterator[Claim]:
    """``UPDATE instances SET bandwidth = '23' WHERE name LIKE 'c3-%-4%';``: egress Gbps by pattern."""
    match = _LIKE_SQL.match(text.strip())
    if match is not None:
        entry = f"instance_types.{match.group(2)}"
        yield Claim(entry, "network.baseline_gbps", _number(match.group(1)), reference, f"{number}: {text}")


_READERS: dict[str, Reader] = {
    "aws-guide": _aws_guide,
    "azure-sizes": _azure_sizes,
    "price-map": _price_map,
    "gcloud-csv": _gcloud_csv,
    "like-sql": _like_sql,
    **REGION_READERS,
}


def _like(pattern: str) -> re.Pattern[str]:
    """SQL LIKE as a regular expression: ``%`` any run of characters, ``_`` one character."""
    return re.compile("".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern) + r"\Z")


def resolve(claims: Sequence[Claim], entries: Iterable[str]) -> list[Claim]:
    """``claims`` with each LIKE pattern (an entry with ``%``; ``_`` in it matches one character)
    replaced by the ``entries`` it matches; of one copy's pattern claims on one entry and field, the last
    holds, as later UPDATE statements overwrite earlier ones, and a plain claim of the copy on that
    entry and field holds over every pattern (a price to "US East regions" over "other regions").
    Plain claims pass through."""
    plain = [claim for claim in claims if "%" not in claim.entry]
    stated = {(claim.entry, claim.field) for claim in plain}
    latest: dict[tuple[str, str], Claim] = {}
    names = list(entries)
    for claim in claims:
        if "%" not in claim.entry:
            continue
        pattern = _like(claim.entry)
        for name in names:
            if pattern.match(name) and (name, claim.field) not in stated:
                latest[(name, claim.field)] = Claim(name, claim.field, claim.value, claim.reference, claim.line)
    return plain + list(latest.values())


def _header(text: str, origin: str) -> dict[str, str]:
    header: dict[str, str] = {}
    for line in text.splitlines():
        match = _HEADER.match(line)
        if match is not None:
            header.setdefault(match.group(1), match.group(2))
    missing = [key for key in ("reference", "url", "read", "reader") if key not in header]
    if missing:
        raise ConfigError(f"{origin}: recorded copy lacks its header line(s) {', '.join(f'# {k}:' for k in missing)}")
    if header["reader"] not in _READERS:
        raise ConfigError(f"{origin}: reader {header['reader']!r} is unknown; known: {', '.join(sorted(_READERS))}")
    return header


def parse_recorded(text: str, origin: str) -> RecordedCopy:
    """A recorded copy from its text; a bad header is one line naming ``origin``."""
    header = _header(text, origin)
    try:
        read = dt.date.fromisoformat(header["read"])
    except ValueError:
        raise ConfigError(f"{origin}: read {header['read']!r} is not a date YYYY-MM-DD") from None
    reader = _READERS[header["reader"]]
    claims: list[Claim] = []
    table = ""
    for line in text.splitlines():
        marker, body = _TABLE.match(line), _BODY.match(line)
        if marker is not None:
            table = marker.group(1)
        elif body is not None:
            claims.extend(reader(header["reference"], body.group(1), body.group(2), table))
    return RecordedCopy(header["reference"], header["url"], read, origin, tuple(claims))


def read_recorded_file(path: Path) -> RecordedCopy:
    """A recorded copy kept in a file of the user's (an audit of their own catalog)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the recorded copy: {exc}") from None
    return parse_recorded(text, str(path))


def load_recorded() -> list[RecordedCopy]:
    """Every recorded copy shipped beside the built-in catalog, in file-name order."""
    folder = resources.files("harness.sizing.catalog").joinpath("sources")
    copies = []
    for item in sorted(folder.iterdir(), key=lambda entry: entry.name):
        if item.name.endswith(".txt"):
            text = item.read_text(encoding="utf-8")
            copies.append(parse_recorded(text, f"<builtin>/sources/{item.name}"))
    return copies
