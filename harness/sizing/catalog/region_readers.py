"""Readers of the recorded copies that state what a pair of regions is apart: round trip and price.

A region pair is the catalog placement ``region:SRC/DST`` (the primary in SRC, its peer in DST).
``cloudping-json``: cloudping.co's inter-region latency map as JSON (``{"data": {SRC: {DST: ms}}}``,
each the median round trip measured from SRC), one claim of ``rtt_ms`` per pair.
``azure-latency``: a row of Microsoft's round-trip table (``| East US | 11 | 24 |``) under the
``# table:`` line that copies its header (``| Source | East US 2 | North Central US |``), each cell
the round trip from the row's region to the column's, named as Azure's API names regions
(``East US 2`` is ``eastus2``).  ``infracost-golden``: a row of Infracost's expected AWS data
transfer cost (``Outbound data transfer to other regions  750  GB  $15.00``) under the ``# table:``
line naming its resource (``aws_data_transfer.us-east-1``): the price per GB the sender's region
charges, to every region (``region:us-east-1/%``) or, for "US East regions", to those two alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from harness.sizing.catalog.claim import Claim, Reader

__all__ = ["REGION_PREFIX", "REGION_READERS", "azure_region", "region_pair"]

#: how a placement names a region pair: ``region:us-east-1/us-west-2``
REGION_PREFIX = "region:"

_TRANSFER = re.compile(r"Outbound data transfer to (US East regions|other regions)\s+([\d,]+)\s+GB\s+\$([\d,.]+)")
_RESOURCE = re.compile(r"^aws_data_transfer\.([a-z0-9-]+)$")
#: the regions AWS's "US East" transfer price covers: N. Virginia and Ohio
_US_EAST = ("us-east-1", "us-east-2")


def region_pair(source: str, destination: str) -> str:
    """The placement name of a primary in ``source`` and its peer in ``destination``."""
    return f"{REGION_PREFIX}{source}/{destination}"


def azure_region(display: str) -> str:
    """Azure's API name of a region Microsoft's tables spell out (``West Central US``: ``westcentralus``)."""
    return display.replace(" ", "").lower()


def _entry(source: str, destination: str) -> str:
    return f"placements.{region_pair(source, destination)}"


def _cloudping(reference: str, number: str, text: str, table: str) -> Iterator[Claim]:
    if not text.lstrip().startswith("{"):
        return
    data = json.loads(text)["data"]
    line = f"{number}: (cloudping.co JSON, {len(data)} source regions)"
    for source, row in data.items():
        for destination, ms in row.items():
            if destination != source:
                yield Claim(_entry(source, destination), "rtt_ms", float(ms), reference, line)


def _cells(text: str) -> list[str]:
    return [cell.strip() for cell in text.strip().strip("|").split("|")]


def _azure_latency(reference: str, number: str, text: str, table: str) -> Iterator[Claim]:
    header, row = _cells(table), _cells(text)
    if not header or header[0] != "Source" or len(row) != len(header) or row[0] == "Source":
        return
    source = azure_region(row[0])
    for column, cell in zip(header[1:], row[1:], strict=True):
        if cell.isdigit():
            yield Claim(_entry(source, azure_region(column)), "rtt_ms", float(cell), reference, f"{number}: {text}")


def _infracost_transfer(reference: str, number: str, text: str, table: str) -> Iterator[Claim]:
    resource, match = _RESOURCE.match(table.strip()), _TRANSFER.search(text)
    if resource is None or match is None:
        return
    source = resource.group(1)
    per_gb = round(float(match.group(3).replace(",", "")) / float(match.group(2).replace(",", "")), 6)
    line = f"{number}: {text.strip()}"
    if match.group(1) == "other regions":
        yield Claim(_entry(source, "%"), "transfer_usd_per_gb", per_gb, reference, line)
        return
    for destination in _US_EAST:
        if destination != source:
            yield Claim(_entry(source, destination), "transfer_usd_per_gb", per_gb, reference, line)


REGION_READERS: dict[str, Reader] = {
    "cloudping-json": _cloudping,
    "azure-latency": _azure_latency,
    "infracost-golden": _infracost_transfer,
}
