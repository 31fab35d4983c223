"""Region-pair placements made from the recorded copies: where a DR peer sits in another region.

``region:SRC/DST`` is a pair whose primary is in SRC and whose peer is in DST: its round trip is
the recorded median (AWS, cloudping.co's year) or 95th percentile (Azure, Microsoft's month) from
SRC to DST, and its transfer price what SRC charges per GB leaving for DST, the sender's side
only (neither cloud charges inbound transfer).  :func:`region_pair_row` builds one placement's data
from what the copies state, :func:`region_pair_rows_yaml` the YAML lines the built-in catalog holds
(``python -m harness.sizing.catalog.region_pairs READ aws us-east-1 us-west-2 ...`` prints every
ordered pair of the regions named).  No copy states an Azure inter-region price: such a pair's
``transfer_usd_per_gb`` is left empty, and the cost line says the transfer is not priced.
"""

from __future__ import annotations

import datetime as dt
import itertools
import sys
from collections.abc import Sequence
from typing import Any

from harness.errors import ConfigError
from harness.sizing.catalog.claim import Claim
from harness.sizing.catalog.recorded import RecordedCopy, load_recorded, resolve
from harness.sizing.catalog.region_readers import region_pair

__all__ = ["region_pair_row", "region_pair_rows_yaml"]

_PERCENTILE = {"aws": "median", "azure": "95th percentile"}


def _stated(copies: Sequence[RecordedCopy], name: str, field: str) -> Claim | None:
    entry = f"placements.{name}"
    for copy in copies:
        for claim in resolve(copy.claims, [entry]):
            if claim.entry == entry and claim.field == field:
                return claim
    return None


def region_pair_row(
    copies: Sequence[RecordedCopy], cloud: str, source: str, destination: str, as_of: dt.date
) -> dict[str, Any]:
    """The catalog placement of a primary in ``source`` and its peer in ``destination``, read on
    ``as_of``; a round trip no copy states is a ConfigError (a price none states is left empty)."""
    name = region_pair(source, destination)
    rtt = _stated(copies, name, "rtt_ms")
    if rtt is None or rtt.value is None:
        raise ConfigError(f"{name}: no recorded copy states its round trip; pass --placement rtt=<value>")
    price = _stated(copies, name, "transfer_usd_per_gb")
    row: dict[str, Any] = {
        "description": f"primary in {cloud} {source}, peer in {destination}",
        "cloud": cloud,
        "rtt_ms": round(rtt.value, 3),
        "transfer_usd_per_gb": None if price is None else price.value,
        "transfer_billed_sides": 1,
        "note": (
            f"the {_PERCENTILE.get(cloud, 'recorded')} round trip from {source} to {destination}; "
            + (
                "the price is the sender's region's, per GB leaving it"
                if price is not None
                else "no stored copy states the price of transfer between these regions: not priced"
            )
        ),
        "sources": sorted({rtt.reference, *(() if price is None else (price.reference,))}),
        "as_of": as_of.isoformat(),
    }
    return row


def _shown(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(str(item) for item in value) + "]"
    return f"{value:g}" if isinstance(value, float) else str(value)


def region_pair_rows_yaml(copies: Sequence[RecordedCopy], cloud: str, regions: Sequence[str], as_of: dt.date) -> str:
    """The ``placements`` YAML lines of every ordered pair of ``regions``, two-space indented."""
    lines: list[str] = []
    for source, destination in itertools.permutations(regions, 2):
        row = region_pair_row(copies, cloud, source, destination, as_of)
        fields = ", ".join(f"{key}: {_shown(value)}" for key, value in row.items())
        lines.append(f'  "{region_pair(source, destination)}": {{{fields}}}')
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover - the maintainer's generator, its output is tested
    READ = dt.date.fromisoformat(sys.argv[1])
    sys.stdout.write(region_pair_rows_yaml(load_recorded(), sys.argv[2], sys.argv[3:], READ))
