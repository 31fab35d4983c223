"""Catalog rows made from the recorded copies rather than typed by hand.

An instance type whose vCPUs, memory, network, EBS link, instance store, hypervisor and price all appear in
the recorded copies (:mod:`~harness.sizing.catalog.recorded`) gets its catalog entry from them:
:func:`instance_row` builds the entry's data, :func:`instance_rows_yaml` the YAML lines the
built-in catalog holds (``python -m harness.sizing.catalog.generate READ PRICED c6g.large ...`` prints them).
A figure no copy states is not guessed: the row is refused, naming what is missing.
"""

from __future__ import annotations

import datetime as dt
import re
import sys
from collections.abc import Sequence
from typing import Any

from harness.errors import ConfigError
from harness.sizing.catalog.recorded import RecordedCopy, load_recorded, resolve

__all__ = ["instance_row", "instance_rows_yaml"]

_NEEDED = ("vcpu", "memory_gib", "network.baseline_gbps", "ebs.max_mbps", "ebs.max_iops", "price.usd_per_hour")
_OPTIONAL = (
    "network.burst_gbps",
    "ebs.baseline_mbps",
    "ebs.baseline_iops",
    "instance_store.devices",
    "instance_store.device_size_gb",
    "instance_store.read_iops_4k",
    "instance_store.write_iops_4k",
)


def _stated(copies: Sequence[RecordedCopy], name: str) -> tuple[dict[str, float | None], dict[str, str]]:
    values: dict[str, float | None] = {}
    references: dict[str, str] = {}
    for copy in copies:
        for claim in resolve(copy.claims, [f"instance_types.{name}"]):
            if claim.entry == f"instance_types.{name}" and claim.field not in values:
                values[claim.field] = claim.value
                references[claim.field] = claim.reference
    return values, references


def _compact(value: float) -> int | float:
    return int(value) if value.is_integer() else value


def _section(values: dict[str, float | None], prefix: str) -> dict[str, Any]:
    return {
        field.split(".", 1)[1]: _compact(value)
        for field, value in values.items()
        if field.startswith(f"{prefix}.") and value is not None
    }


_AZURE_SERIES = re.compile(r"^Standard_([A-Z])\d+([a-z]*)_(v\d+)$")
_AZURE_NETWORK_NOTE = "Azure publishes the expected maximum only ('Upper limits aren't guaranteed')"
_AZURE_NOTES = ["Host-cached (ReadOnly) reads have their own, higher cached limit; DRBD's writes are uncached."]


def _aws_parts(name: str, values: dict[str, float | None]) -> dict[str, Any]:
    network = _section(values, "network")
    top = network.get("burst_gbps", network["baseline_gbps"])
    label = f"Up to {top:g} Gigabit" if "burst_gbps" in network else f"{top:g} Gigabit"
    return {
        "family": name.split(".", maxsplit=1)[0],
        "generation": "current",
        "network": {"label": label, **network},
        "ebs": {"optimized": True, **_section(values, "ebs")},
    }


def _azure_parts(name: str, values: dict[str, float | None]) -> dict[str, Any]:
    series = _AZURE_SERIES.match(name)
    if series is None:
        raise ConfigError(f"{name}: not an Azure size name like Standard_D4s_v5")
    network = _section(values, "network")
    label = f"up to {network['baseline_gbps'] * 1000:,.0f} Mbps"
    return {
        "family": "".join(series.groups()).lower(),
        "cloud": "azure",
        "network": {"label": label, **network, "estimate": True, "note": _AZURE_NETWORK_NOTE},
        "ebs": {"optimized": True, **_section(values, "ebs"), "burst_minutes": 30},
    }


def instance_row(copies: Sequence[RecordedCopy], name: str, as_of: dt.date, priced: dt.date) -> dict[str, Any]:
    """The catalog entry of ``name`` from what the copies state, read on ``as_of``, its price list
    generated on ``priced``; a figure no copy states is a ConfigError.  An Azure size
    (``Standard_...``) is priced in eastus, an AWS type in us-east-1.  An AWS type's ``nitro`` is
    its family's hypervisor in the guide's platform summary (Xen: false); an Azure size has no
    AWS hypervisor to say, and no cap that only a Xen instance has applies to it: true."""
    values, references = _stated(copies, name)
    azure = name.startswith("Standard_")
    needed = _NEEDED if azure else (*_NEEDED, "nitro")
    missing = [field for field in needed if values.get(field) is None]
    if missing:
        raise ConfigError(f"{name}: no recorded copy states {', '.join(missing)}; enter it by hand, marked unverified")
    parts = _azure_parts(name, values) if azure else _aws_parts(name, values)
    row: dict[str, Any] = {
        **{key: parts[key] for key in parts if key not in ("network", "ebs")},
        "vcpu": _compact(values["vcpu"] or 0),
        "memory_gib": _compact(values["memory_gib"] or 0),
        "nitro": azure or values["nitro"] == 1,
        "network": parts["network"],
        "ebs": parts["ebs"],
    }
    store = _section(values, "instance_store")
    if store:
        row["instance_store"] = store
    row["price"] = {
        "usd_per_hour": values["price.usd_per_hour"],
        "region": "eastus" if azure else "us-east-1",
        "sources": [references["price.usd_per_hour"]],
        "as_of": priced.isoformat(),
    }
    row["sources"] = sorted({ref for field, ref in references.items() if field != "price.usd_per_hour"})
    row["as_of"] = as_of.isoformat()
    if azure:
        row["notes"] = _AZURE_NOTES
    return row


def _flow(data: dict[str, Any]) -> str:
    parts = []
    for key, value in data.items():
        shown = (
            "[" + ", ".join(value) + "]"
            if isinstance(value, list)
            else f'"{value}"'
            if isinstance(value, str)
            else value
        )
        parts.append(f"{key}: {str(shown).lower() if isinstance(shown, bool) else shown}")
    return "{" + ", ".join(parts) + "}"


def instance_rows_yaml(copies: Sequence[RecordedCopy], names: Sequence[str], as_of: dt.date, priced: dt.date) -> str:
    """The ``instance_types`` YAML lines of ``names``, two-space indented as the catalog holds them."""
    lines: list[str] = []
    for name in names:
        lines.append(f"  {name}:")
        for key, value in instance_row(copies, name, as_of, priced).items():
            if isinstance(value, dict):
                lines.append(f"    {key}: {_flow(value)}")
            elif isinstance(value, list):
                shown = ", ".join(f'"{item}"' if key == "notes" else str(item) for item in value)
                lines.append(f"    {key}: [{shown}]")
            else:
                lines.append(f"    {key}: {str(value).lower() if isinstance(value, bool) else value}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover - the maintainer's generator, its output is tested
    READ, PRICED = (dt.date.fromisoformat(arg) for arg in sys.argv[1:3])
    sys.stdout.write(instance_rows_yaml(load_recorded(), sys.argv[3:], READ, PRICED))
