"""``harness sizing --replication md-nbd|md-nbd-write-behind``: the pair as SIOS DataKeeper builds it.

The same question as DRBD's (instance, volume, placement, workload), answered by the md-nbd model
(:mod:`harness.sizing.model.mdnbd_pair`): md RAID1 over the local volume and an NBD device on the
peer, synchronous or write-behind, with md's write-intent bitmap, priced as the same pair.  The
options that only DRBD's model reads are refused by name rather than silently ignored.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TextIO

from harness.errors import ConfigError
from harness.sizing.answer.mdnbd import mdnbd_dict, render_mdnbd
from harness.sizing.catalog.loader import Catalog
from harness.sizing.model.mdnbd import Mode
from harness.sizing.model.mdnbd_pair import mirror_for, predict_pair
from harness.sizing.scenario.question import Scenario
from harness.userfiles.jsonsafe import dumps

__all__ = ["REPLICATIONS", "run_mdnbd"]

#: ``--replication`` choices: DRBD's model, or md-nbd in either of md's modes
REPLICATIONS = ("drbd", "md-nbd", "md-nbd-write-behind")

_DRBD_ONLY = (
    ("--require", "require", None),
    ("--no-replication", "no_replication", False),
    ("--peer-instance-type", "peer_instance_type", None),
    ("--peer-volume", "peer_volume", None),
    ("--protocol", "protocol", "C"),
    ("--peers", "peers", 1),
    ("--topology", "topology", None),
    ("--launch-credits", "launch_credits", False),
    ("--sndbuf", "sndbuf", None),
    ("--mtu", "mtu", None),
    ("--duration", "duration", None),
    ("--local-write-latency", "local_write_latency", None),
    ("--local-bandwidth", "local_bandwidth", None),
    ("--local-iops", "local_iops", None),
    ("--path-rate", "path_rate", None),
)


def _refuse_drbd_options(args: argparse.Namespace) -> None:
    given = [flag for flag, name, unset in _DRBD_ONLY if getattr(args, name, unset) != unset]
    if given:
        raise ConfigError(
            f"--replication {args.replication} models md-nbd (both nodes alike, one peer, steady state): "
            f"drop {', '.join(given)}"
        )
    if not args.instance_type:
        raise ConfigError(f"--replication {args.replication} needs --instance-type")


def run_mdnbd(args: argparse.Namespace, scenario_for: Callable[[str], Scenario], catalog: Catalog, out: TextIO) -> int:
    """Print md-nbd's answer for ``args``'s pair (``--json`` for tools); exit 0."""
    _refuse_drbd_options(args)
    scenario = scenario_for(args.instance_type)
    mode: Mode = "write-behind" if args.replication == "md-nbd-write-behind" else "sync"
    pair = predict_pair(scenario, catalog, mirror_for(scenario, catalog, mode=mode))
    if args.json:
        print(dumps(mdnbd_dict(scenario, pair), indent=2), file=out)
    else:
        print(render_mdnbd(scenario, pair), file=out)
    return 0
