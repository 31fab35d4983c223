"""``harness sizing search``: the cheapest configurations on AWS, Google Cloud and Azure that
meet a requirement, with the price split, the binding limit and a Pareto front.

The requirement is read by :mod:`harness.sizing.search.requirement`, the search is
:mod:`harness.sizing.search.engine` and the answer's wording :mod:`harness.sizing.search.render`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from harness.argtypes import number
from harness.sizing.catalog.loader import load_catalog
from harness.sizing.search.engine import search
from harness.sizing.search.render import render_result, result_dict
from harness.sizing.search.requirement import build_requirement, placed
from harness.sizing.search.space import SearchSpace
from harness.sizing.search.tail import load_tail
from harness.userfiles.jsonsafe import dumps

__all__ = ["add_search_command", "run_search"]

EXIT_NOT_MET = 1

_EPILOG = """\
Searches cloud x instance type x volume type x size x provisioned IOPS/throughput x RAID0 stripe
(1..--max-stripes volumes) x protocol, both nodes alike, and prints the cheapest that meet the
requirement on the run's lowest phase (monthly list price of the pair: instances, volumes, and the
replication traffic of the required rate across the placement) and the Pareto front of price
against margin.  The p99 is the model's queueing, or with --latency-from the measured spread of
the unqueued write.  Exit status: 0 found, 1 none meets it, 2 bad input.

example: harness sizing search --rate 15000iops --bs 4k --iodepth 32 --placement cross-zone --p99 5ms
"""


def add_search_command(sub: Any) -> None:
    """Add ``search`` to ``harness sizing``'s subcommands."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "search",
        help="the cheapest instance and volume per cloud that meet a requirement",
        description="Find the cheapest configurations that meet a replicated-write requirement.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("--rate", required=True, metavar="15000iops|40MB/s", help="the rate to sustain (IOPS or a byte rate)")
    add("--bs", default="4k", help="block size (default 4k)")
    add("--rw", default="randwrite", choices=("randwrite", "write"), help="write pattern (default randwrite)")
    add("--numjobs", type=number(int, 1, 4096, what="numjobs"), default=1, help="fio numjobs (default 1)")
    add("--iodepth", type=number(int, 1, 4096, what="iodepth"), default=1, help="fio iodepth (default 1)")
    add(
        "--placement",
        default="same-zone",
        metavar="same-zone|cross-zone|NAME|rtt=2ms",
        help="where the peer is: a zone word, a catalog placement (a region pair), or a round trip",
    )
    add("--protocol", choices=("A", "B", "C"), help="DRBD protocol (default C)")
    add("--rpo", metavar="0|5s", help="instead of --protocol: the loss allowed (0: protocol C only)")
    add("--mean-latency", metavar="2ms", help="mean write latency target")
    add("--p99", metavar="5ms", help="p99 write latency target")
    add("--duration", metavar="2h", help="how long the load runs (burst credits count)")
    add("--headroom", type=float, default=0.0, metavar="PCT", help="margin above the rate required (%%)")
    add("--cloud", dest="search_clouds", metavar="aws,gcp,azure", help="clouds to search (default all)")
    add("--top", type=number(int, 1, 1000, what="--top"), default=5, help="how many to list (default 5)")
    add("--max-stripes", type=number(int, 1, 64, what="--max-stripes"), default=8, help="RAID0 volumes at most")
    add("--latency-from", type=Path, metavar="FIO.json", help="fio JSON of a QD1 write: its measured p99/mean")
    add("--json", action="store_true", dest="search_json", help="print JSON")
    add(
        "--catalog",
        metavar="FILE",
        action="append",
        type=Path,
        dest="search_catalog",
        default=[],
        help="your own catalog YAML merged over the built-in one (repeatable)",
    )


def run_search(args: argparse.Namespace, out: TextIO) -> int:
    """Run the search and print its answer; exit 1 when nothing meets the requirement."""
    catalog = load_catalog(args.search_catalog)
    requirement = build_requirement(
        rate=args.rate,
        bs=args.bs,
        rw=args.rw,
        numjobs=args.numjobs,
        iodepth=args.iodepth,
        placement=args.placement,
        protocol=args.protocol,
        rpo=args.rpo,
        mean_latency=args.mean_latency,
        p99_latency=args.p99,
        duration=args.duration,
        headroom_pct=args.headroom,
        clouds=args.search_clouds,
    )
    requirement = placed(catalog, requirement, explicit=args.search_clouds is not None)
    tail = load_tail(args.latency_from) if args.latency_from is not None else None
    result = search(catalog, requirement, SearchSpace(max_stripes=args.max_stripes), args.top, tail)
    if args.search_json:
        print(dumps(result_dict(result, requirement), indent=2), file=out)
    else:
        print(render_result(result, requirement), file=out)
    return 0 if result.hits else EXIT_NOT_MET
