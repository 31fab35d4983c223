"""``harness sizing``: answer "will this pair sustain N MB/s?" from the catalog, on the command line.

Other tools call this command, so its interface is fixed:

    harness sizing --instance-type T [--peer-instance-type T2] [--volume TYPE:SIZE[:IOPS[:MiBps]]]
        [--placement same-az|cross-az|region:SRC/DST|rtt=2ms] [--no-replication]
        --workload RW:BS[:numjobs=N][:iodepth=D] [--protocol A|B|C] [--duration 60m] [--json]

plus ``--require 40MB/s`` (or ``3000iops``) to search the catalog, ``--catalog FILE`` for a
user's own types, ``--peers N`` or ``--topology same-az,cross-az:diskless`` for a DRBD 9
resource of more nodes, ``--replication md-nbd|md-nbd-write-behind`` for the pair built as SIOS
DataKeeper builds it (:mod:`harness.cli.sizing_mdnbd`), and calibration overrides.  This module
only wires options and prints: the text forms are read by :mod:`harness.sizing.scenario.notation` (``--require`` by
:mod:`harness.sizing.answer.search`), the numbers come from :mod:`harness.sizing.model.predict` and
the wording from :mod:`harness.sizing.answer.explain`.
The main ``harness`` CLI wires :func:`add_arguments` and :func:`run` to its ``sizing`` subcommand.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO, get_args

from harness.argtypes import number
from harness.cli.catalog import add_catalog_commands, run_catalog
from harness.cli.compare import run_compare
from harness.cli.sizing_mdnbd import REPLICATIONS, run_mdnbd
from harness.cli.sizing_search import add_search_command, run_search
from harness.errors import ConfigError
from harness.fields import ReplicationProtocol
from harness.sizing.answer.explain import explain, render_prediction, render_search
from harness.sizing.answer.search import parse_requirement, search
from harness.sizing.catalog.clouds import CLOUDS, DEFAULT_VOLUMES, bare_name
from harness.sizing.catalog.loader import Catalog, load_catalog
from harness.sizing.model.predict import predict
from harness.sizing.scenario.notation import parse_placement, parse_volume, parse_workload
from harness.sizing.scenario.question import Calibration, Scenario, SizedNode
from harness.sizing.scenario.topology import PeerSlot, parse_topology
from harness.units import UnitError, parse_duration, parse_rate_bits, parse_size
from harness.userfiles.jsonsafe import dumps

__all__ = ["add_arguments", "run"]

DEFAULT_VOLUME = DEFAULT_VOLUMES["aws"]
EXIT_REQUIREMENT_NOT_MET = 1

_EPILOG = """\
The answer is the smallest of all modelled limits (volume, instance EBS link, network in and
out, single-flow cap, latency of a synchronous write); every limit is listed with its headroom.
Without --duration the answer is the long-run steady state; with it, the mean over the run,
with phases as burst credits run out.

--require searches the catalog for instance types (both nodes the same unless
--peer-instance-type is given) whose rate holds for the whole run, cheapest pair first when the
catalog prices all of them (else by vCPU, then memory, then name).  With --instance-type it checks that type only.
Exit status: 0 answered (and the requirement met), 1 requirement not met, 2 bad input.

--json prints {"bw_mib_s", "iops", "latency_ms", "bottleneck", "limits": {name: {"bw_mib_s",
"iops", ...}}, "phases", "notes", "estimates", ...}; bw_mib_s/iops follow "basis"
(steady state or mean over run), "sustained_*" is the lowest phase.  A number that is not
finite (a limit too large for a float) is null: the output is always strict JSON.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``harness sizing`` options to ``parser``."""
    parser.description = "Predict replicated-write throughput from published instance/volume/network limits."
    parser.epilog = _EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--instance-type", metavar="T", help="instance type of the primary (and the peer)")
    parser.add_argument("--peer-instance-type", metavar="T2", help="instance type of the peer if different")
    parser.add_argument(
        "--cloud",
        choices=CLOUDS,
        help="cloud of the pair (default: the instance type's; aws for --require); names may also be "
        "qualified, e.g. gcp/n2-standard-4",
    )
    parser.add_argument(
        "--volume",
        metavar="TYPE:SIZE[:IOPS[:MiBps]]",
        default=None,
        help=f"volume under the replicated device on each node, e.g. gp2:100GiB, io1:200GiB:8000, "
        f"gp3:500GiB:6000:500, instance-store, pd-balanced:500GiB, premium-ssd:512GiB (bare sizes are GiB; "
        f"default per cloud: {', '.join(f'{c} {v}' for c, v in DEFAULT_VOLUMES.items())})",
    )
    parser.add_argument("--peer-volume", metavar="TYPE:SIZE[:IOPS[:MiBps]]", help="the peer's volume if different")
    parser.add_argument(
        "--on-demand-bursting",
        action="store_true",
        help="Azure Premium SSD P30 and larger: enable on-demand bursting on every node's disks (30,000 IOPS, "
        "1,000 MB/s, no time limit; its fees are counted, not priced: no stored copy states them)",
    )
    parser.add_argument(
        "--placement",
        default=None,
        metavar="same-az|cross-az|region:SRC/DST|rtt=2ms",
        help="where the peer is: a catalog placement, a region pair (region:us-east-1/us-west-2: the primary "
        "in the first, the peer in the second, its recorded round trip and transfer price) or an explicit "
        "round-trip time (default same-az)",
    )
    parser.add_argument("--no-replication", action="store_true", help="model the volume alone, without a peer")
    parser.add_argument(
        "--workload",
        metavar="RW:BS[:numjobs=N][:iodepth=D]",
        help="fio-style workload, e.g. randwrite:4k:numjobs=8 (also :rwmixread=P for rw/randrw)",
    )
    parser.add_argument(
        "--protocol", choices=get_args(ReplicationProtocol), default="C", help="DRBD protocol (default C)"
    )
    parser.add_argument(
        "--replication",
        choices=REPLICATIONS,
        default="drbd",
        help="how the pair replicates: DRBD (default), or md RAID1 over an NBD device on the peer as SIOS "
        "DataKeeper builds it, synchronous or write-behind (mdadm's 256 outstanding writes; 100 GiB "
        "written at random for md's bitmap)",
    )
    parser.add_argument(
        "--peers",
        type=number(int, 1, 31, what="peers"),
        default=1,
        help="DRBD 9 peers of the primary, each like --peer-instance-type (default 1)",
    )
    parser.add_argument(
        "--topology",
        metavar="PLACEMENT[:diskless|:A|:B|:C],...",
        help="DRBD 9: every peer of the primary in order, each at its own placement (same-az, cross-az, "
        "region:us-east-1/us-west-2, rtt=2ms), a diskless tie-breaker with :diskless (no volume, no data "
        "sent), a peer's own protocol with :A, :B or :C (a DR replica under A is not waited for), e.g. "
        "same-az,cross-az:diskless or cross-az,region:us-east-1/us-west-2:A; instead of --placement and --peers",
    )
    parser.add_argument(
        "--launch-credits",
        action="store_true",
        help="start burstable instances in standard mode with their launch CPU credits "
        "(default: credits spent, the state a continuously running pair is in)",
    )
    parser.add_argument(
        "--sndbuf", metavar="4MiB", help="TCP send buffer of a replication connection (default: catalog)"
    )
    parser.add_argument(
        "--mtu", type=number(int, 576, 65536, what="MTU"), help="MTU of the replication path (default: catalog)"
    )
    parser.add_argument("--duration", metavar="60m", help="how long the load runs, so burst credits count")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    parser.add_argument(
        "--require",
        metavar="40MB/s|3000iops",
        help="required rate; searches the catalog (or checks --instance-type) for it",
    )
    parser.add_argument(
        "--catalog",
        metavar="FILE",
        action="append",
        type=Path,
        default=[],
        help="your own catalog YAML merged over the built-in one (repeatable)",
    )
    calibration = parser.add_argument_group("measured values (replace catalog figures)")
    calibration.add_argument("--local-write-latency", metavar="0.8ms", help="scratch device write latency at QD1")
    calibration.add_argument("--local-bandwidth", metavar="200MB/s", help="scratch device sustained bandwidth")
    calibration.add_argument(
        "--local-iops",
        metavar="N",
        type=number(float, 0, 1e9, exclusive_minimum=True, what="IOPS"),
        help="scratch device sustained IOPS",
    )
    calibration.add_argument("--path-rate", metavar="1gbit", help="replication path rate")
    add_search_command(add_catalog_commands(parser))


def _calibration(args: argparse.Namespace) -> Calibration | None:
    try:
        latency = parse_duration(args.local_write_latency) if args.local_write_latency else None
        bandwidth = parse_rate_bits(args.local_bandwidth) / 8 if args.local_bandwidth else None
        path = parse_rate_bits(args.path_rate) if args.path_rate else None
    except UnitError as exc:
        raise ConfigError(str(exc)) from None
    if latency is None and bandwidth is None and path is None and args.local_iops is None:
        return None
    return Calibration(
        local_write_latency_s=latency,
        local_bandwidth=bandwidth,
        local_iops=args.local_iops,
        path_rate_bits=path,
        label="command line",
    )


def _topology(args: argparse.Namespace) -> tuple[PeerSlot, ...]:
    """``--topology``, which places every peer itself: it cannot come with the options it replaces."""
    if args.topology is None:
        return ()
    given = [name for name, set_ in (("--placement", args.placement is not None), ("--peers", args.peers != 1)) if set_]
    if given:
        raise ConfigError(f"--topology names every peer and its placement: drop {' and '.join(given)}")
    if args.no_replication:
        raise ConfigError("--topology names peers: it cannot be given with --no-replication")
    return parse_topology(args.topology)


def _scenario_factory(args: argparse.Namespace) -> tuple[Callable[[str], Scenario], Catalog, str]:
    catalog = load_catalog(args.catalog)
    cloud = args.cloud or (catalog.instance(args.instance_type).cloud if args.instance_type else "aws")
    volume = parse_volume(args.volume or DEFAULT_VOLUMES.get(cloud, DEFAULT_VOLUME))
    peer_volume = parse_volume(args.peer_volume) if args.peer_volume else volume
    if args.on_demand_bursting:
        volume, peer_volume = (dataclasses.replace(v, on_demand_burst=True) for v in (volume, peer_volume))
    workload = parse_workload(args.workload)
    placement, rtt = parse_placement(args.placement or "same-az")
    topology = _topology(args)
    try:
        duration = parse_duration(args.duration) if args.duration else None
    except UnitError as exc:
        raise ConfigError(f"--duration: {exc}") from None
    calibration = _calibration(args)
    protocol: ReplicationProtocol = args.protocol
    try:
        sndbuf = float(parse_size(args.sndbuf)) if args.sndbuf else None
    except UnitError as exc:
        raise ConfigError(f"--sndbuf: {exc}") from None
    replicate = not args.no_replication
    for slot in topology or ((PeerSlot(placement, rtt),) if replicate else ()):
        if slot.rtt_s is None:  # fail early on a typo, before any search
            catalog.placement_on(slot.placement, cloud)

    def scenario_for(qualified: str) -> Scenario:
        instance_type = (
            bare_name(qualified)[1] if qualified in catalog.instance_types or "/" in qualified else qualified
        )
        peer_type = bare_name(args.peer_instance_type)[1] if args.peer_instance_type else instance_type
        return Scenario(
            primary=SizedNode(instance_type, volume),
            peer=SizedNode(peer_type, peer_volume),
            workload=workload,
            replicate=replicate,
            placement=placement,
            rtt_s=rtt,
            protocol=protocol,
            duration_s=duration,
            calibration=calibration,
            peers=args.peers,
            launch_credits=args.launch_credits,
            sndbuf_bytes=sndbuf,
            mtu_bytes=args.mtu,
            topology=topology,
        )

    return scenario_for, catalog, cloud


def run(args: argparse.Namespace) -> int:
    """Run ``harness sizing`` with parsed ``args``, printing to stdout; returns the exit status."""
    try:
        return _run(args, sys.stdout)
    except ConfigError as exc:
        print(f"harness sizing: error: {exc}", file=sys.stderr)
        return exc.exit_code


def _run(args: argparse.Namespace, out: TextIO) -> int:
    if getattr(args, "sizing_command", None) == "catalog":
        return run_catalog(args, out)
    if getattr(args, "sizing_command", None) == "compare":
        return run_compare(args, out)
    if getattr(args, "sizing_command", None) == "search":
        return run_search(args, out)
    if not args.workload:
        raise ConfigError("--workload is required, e.g. --workload randwrite:4k:numjobs=8")
    scenario_for, catalog, cloud = _scenario_factory(args)
    if args.replication != "drbd":
        return run_mdnbd(args, scenario_for, catalog, out)
    requirement = parse_requirement(args.require) if args.require else None
    if requirement is not None and not args.instance_type:
        hits, misses = search(catalog, scenario_for, requirement, cloud=cloud)
        if args.json:
            payload = {
                "requirement": {
                    "kind": requirement.kind,
                    "value": requirement.value,
                    "text": requirement.text,
                },
                "order": (
                    "cost"
                    if hits and all(hit.prediction.cost is not None for hit in hits)
                    else "vcpu, memory_gib, name"
                ),
                "matches": [
                    {
                        "instance_type": hit.instance_type,
                        "vcpu": hit.vcpu,
                        "memory_gib": hit.memory_gib,
                        "margin_pct": requirement.margin(hit.prediction) * 100,
                        **hit.prediction.as_dict(),
                    }
                    for hit in hits
                ],
                "checked": len(hits) + len(misses),
            }
            print(dumps(payload, indent=2), file=out)
        else:
            print(render_search(hits, misses, requirement), file=out)
        return 0 if hits else EXIT_REQUIREMENT_NOT_MET
    if not args.instance_type:
        raise ConfigError("--instance-type is required (or give --require to search the catalog)")
    prediction = predict(scenario_for(args.instance_type), catalog)
    if args.json:
        payload = prediction.as_dict()
        payload["explanation"] = explain(prediction)
        if requirement is not None:
            payload["requirement"] = {
                "text": requirement.text,
                "met": requirement.met_by(prediction),
                "margin_pct": requirement.margin(prediction) * 100,
            }
        print(dumps(payload, indent=2), file=out)
    else:
        print(render_prediction(prediction, requirement), file=out)
    if requirement is not None and not requirement.met_by(prediction):
        return EXIT_REQUIREMENT_NOT_MET
    return 0
