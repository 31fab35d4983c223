"""``harness sizing compare``: DRBD, md-nbd and the clouds' zone-redundant volumes in one table.

A customer asked "synchronous across zones" can build it (DRBD protocol C, or md-nbd as SIOS
DataKeeper does: md RAID1 over the local volume and an NBD device on the peer, synchronous or
write-behind) or buy it (Hyperdisk Balanced High Availability, regional Persistent Disk, ZRS
Premium SSD).  The DRBD row is :func:`harness.sizing.model.predict.predict`'s answer for the pair;
the md-nbd rows are :func:`harness.sizing.model.mdnbd.predict_mdnbd` fed from the same catalog
entries by :func:`harness.sizing.model.mdnbd_pair.mirror_for`; the provider rows
are :func:`harness.sizing.model.zonal.compare` against the DRBD row's required rate.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any, TextIO

from harness.errors import ConfigError
from harness.sizing.catalog.clouds import bare_name, placement_for
from harness.sizing.catalog.loader import Catalog, load_catalog
from harness.sizing.model.mdnbd import MDADM_WRITE_BEHIND, MdNbd, MdNbdAnswer, predict_mdnbd
from harness.sizing.model.mdnbd_pair import mirror_for
from harness.sizing.model.predict import predict
from harness.sizing.model.zonal import compare
from harness.sizing.scenario.notation import parse_placement, parse_volume, parse_workload, positive_number
from harness.sizing.scenario.question import Scenario, SizedNode
from harness.units import UnitError, parse_size

__all__ = ["add_compare_command", "run_compare"]

_EPILOG = """\
The DRBD row is the sizing model's answer for the pair; the md-nbd rows reuse its catalog inputs;
the provider rows say whether one zone-redundant volume carries the DRBD row's write rate, by its
published per-volume limits (see catalog/zone-redundant.yaml for the sources and which figures are
unverified).  Example:
  harness sizing compare --instance-type m6i.xlarge --volume gp3:500GiB:16000:500 \\
      --workload randwrite:4k:numjobs=4:iodepth=4 --placement cross-az
"""


def add_compare_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``compare`` under ``harness sizing``."""
    parser = sub.add_parser(
        "compare",
        help="DRBD, md-nbd (sync / write-behind) and the clouds' zone-redundant volumes in one table",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--instance-type", metavar="T", required=True, help="instance type of both nodes")
    parser.add_argument("--volume", metavar="TYPE:SIZE[:IOPS[:MiBps]]", required=True, help="each node's volume")
    parser.add_argument("--workload", metavar="RW:BS[:numjobs=N:iodepth=N]", required=True, help="fio-style writes")
    parser.add_argument("--placement", metavar="same-az|cross-az|rtt=2ms", default="same-az", help="where the peer is")
    parser.add_argument(
        "--working-set", metavar="100GiB", default="100GiB", help="bytes written at random (md's bitmap chunks)"
    )
    parser.add_argument(
        "--write-behind", metavar="N", default=str(MDADM_WRITE_BEHIND), help="md's write-behind depth (default 256)"
    )
    parser.add_argument(
        "--catalog",
        metavar="FILE",
        action="append",
        type=Path,
        default=[],
        dest="compare_catalogs",
        help="your own catalog YAML merged over the built-in one (repeatable)",
    )


def _mirror(args: argparse.Namespace, catalog: Catalog, scenario: Scenario) -> MdNbd:
    return mirror_for(
        scenario,
        catalog,
        write_behind=int(positive_number(args.write_behind, "--write-behind")),
        working_set_bytes=_size(args.working_set),
    )


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except UnitError as exc:
        raise ConfigError(f"--working-set {text!r}: {exc}") from None


def _md_row(name: str, answer: MdNbdAnswer) -> dict[str, Any]:
    return {
        "configuration": name,
        "mb_s": answer.throughput_bps / 1e6,
        "write_ms": answer.write_latency_s * 1000,
        "binding": f"{answer.binding}; {answer.clean_fraction:.1%} of writes set a bitmap bit",
    }


def _regional_rows(catalog: Catalog, scenario: Scenario, family: str) -> list[dict[str, Any]]:
    """The same workload on one VM writing the regional Persistent Disk of the zonal type the pair
    uses (``regional-pd-ssd`` for ``pd-ssd``), when the catalog models it and the VM takes it:
    Google replicates, so it is one VM and one disk, its price the VM's and the regional disk's."""
    zonal = scenario.primary.volume
    regional = f"regional-{zonal.type}"
    disk = catalog.volume_types.get(regional)
    if disk is None or (disk.machine_families is not None and family not in disk.machine_families):
        return []
    one = dataclasses.replace(
        scenario, primary=dataclasses.replace(scenario.primary, volume=dataclasses.replace(zonal, type=regional))
    )
    answer = predict(dataclasses.replace(one, replicate=False), catalog)
    cost = "" if answer.cost is None else f"; ${answer.cost.pair_month:,.0f}/month (one VM, one regional disk)"
    return [
        {
            "configuration": f"{regional} (Google replicates)",
            "mb_s": answer.iops * scenario.workload.bs / 1e6,
            "write_ms": answer.latency_s * 1000,
            "binding": f"{answer.binding.label}{cost}",
        }
    ]


def rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The table's rows: DRBD protocol C, md-nbd synchronous and write-behind, the provider volumes."""
    catalog = load_catalog(args.compare_catalogs)
    cloud = catalog.instance(args.instance_type).cloud
    placement, rtt = parse_placement(args.placement)
    placement = placement if rtt is not None else placement_for(placement, cloud)
    workload = parse_workload(args.workload)
    node = SizedNode(bare_name(args.instance_type)[1], parse_volume(args.volume))
    scenario = Scenario(primary=node, workload=workload, placement=placement, rtt_s=rtt, protocol="C")
    drbd = predict(scenario, catalog)
    mirror = _mirror(args, catalog, scenario)
    table = [
        {
            "configuration": "DRBD protocol C",
            "mb_s": drbd.iops * workload.bs / 1e6,
            "write_ms": drbd.latency_s * 1000,
            "binding": drbd.binding.label,
        },
        _md_row("md-nbd synchronous", predict_mdnbd(mirror)),
        _md_row(
            f"md-nbd write-behind ({mirror.write_behind})",
            predict_mdnbd(dataclasses.replace(mirror, mode="write-behind")),
        ),
    ]
    family = catalog.instance(node.instance_type).family
    table += _regional_rows(catalog, scenario, family)
    for row in compare(drbd.iops, drbd.iops * workload.bs / 2**20, cloud, family):
        mark = "" if row.volume.verified else " (unverified)"
        table.append(
            {
                "configuration": row.name,
                "mb_s": None,
                "write_ms": None,
                "binding": f"{row.verdict}: {row.reason}{mark}; on {row.volume.machines}",
            }
        )
    return table


def run_compare(args: argparse.Namespace, out: TextIO) -> int:
    """Print the table; exit 0."""
    table = rows(args)
    width = max(len(row["configuration"]) for row in table)
    print(f"{'configuration':{width}}  {'MB/s':>9}  {'write ms':>8}  binding / verdict", file=out)
    for row in table:
        rate = "" if row["mb_s"] is None else f"{row['mb_s']:9.1f}"
        latency = "" if row["write_ms"] is None else f"{row['write_ms']:8.3f}"
        print(f"{row['configuration']:{width}}  {rate:>9}  {latency:>8}  {row['binding']}", file=out)
    return 0
