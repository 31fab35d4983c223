"""The ``harness`` command line.  Subcommands live in their own modules; this file only
parses arguments, maps errors to exit codes and prints.

Exit codes (the README's table): 0 ok, 1 unhealthy/not met/regressed, 2 bad input, 3 refused
by a safety check, 5 infrastructure trouble, 70 internal error (a bug), 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from harness.argtypes import number
from harness.cli.bench import BENCHMARKS, add_bench_arguments
from harness.cli.crash import report_internal_error
from harness.cli.killcheck import add_killcheck_arguments, killcheck_command
from harness.cli.trust import trust_command
from harness.errors import HarnessError
from harness.runfiles.runid import run_id_argument
from harness.userfiles.jsonsafe import dumps

__all__ = ["main"]

DEFAULT_LAB_INVENTORY = Path("inventories/lab.yaml")

Handler = Callable[[argparse.Namespace], int]

# Numeric options are finite and in range, refused when parsed (harness.argtypes).
_PINGS = number(int, 1, 1000, what="pings")
_CYCLES = number(int, 1, 100, what="cycles")
_TRIALS = number(int, 1, 1000, what="trials")
_REPEATS = number(int, 1, 100, what="cells")


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _lab(args: argparse.Namespace) -> object:
    from harness.inventory import load_inventory
    from harness.lab.lifecycle import Lab

    path = Path(args.inventory)
    return Lab(load_inventory(path), path, progress=_progress)


def _lab_up(args: argparse.Namespace) -> int:
    from harness.lab.lifecycle import Lab

    lab = _lab(args)
    assert isinstance(lab, Lab)
    state = lab.up(keep_on_failure=args.keep_on_failure)
    print(
        f"lab up in {state.timings.get('up_s', 0):.1f} s: {len(lab.topology.nodes)} nodes + router in namespace "
        f"{lab.spec.netns}; ssh: ip netns exec {lab.spec.netns} ssh -i {lab.key_path} "
        f"-o UserKnownHostsFile={lab.known_hosts} root@{lab.topology.nodes[0].mgmt_ip}"
    )
    return 0


def _lab_inventory(args: argparse.Namespace) -> int:
    """Print (or write with -o) an inventory that reaches the lab as a cloud cluster."""
    import yaml

    from harness.lab.lifecycle import Lab
    from harness.lab.posing import KEY_ENV, posing_inventory
    from harness.userfiles.outfile import check_output, write_replacing
    from harness.userfiles.yamlsafe import load_yaml_file

    lab = _lab(args)
    assert isinstance(lab, Lab)
    data = posing_inventory(load_yaml_file(Path(args.inventory)).data, args.shape, str(lab.known_hosts))
    head = (
        f"# The embedded lab posing as a cloud cluster ({args.shape}); written by `harness lab inventory`.\n"
        f"# Run inside the lab's namespace with the lab key:  {KEY_ENV}={lab.key_path} "
        f"ip netns exec {lab.spec.netns} pytest scenarios/ --inventory THIS_FILE --allow-disruptive\n"
    )
    text = head + yaml.safe_dump(data, sort_keys=False, default_flow_style=False)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    out = Path(args.output)
    check_output(out, {"lab inventory": Path(args.inventory)}, force=args.force)
    write_replacing(out, text)
    print(f"wrote {out}", file=sys.stderr)
    return 0


def _lab_down(args: argparse.Namespace) -> int:
    import time

    from harness.lab.lifecycle import Lab

    lab = _lab(args)
    assert isinstance(lab, Lab)
    start = time.monotonic()
    leftovers = lab.down()
    if leftovers:
        print("lab down, but these are left:\n  " + "\n  ".join(leftovers), file=sys.stderr)
        return 5
    print(f"lab down in {time.monotonic() - start:.2f} s; nothing left behind")
    return 0


def _lab_status(args: argparse.Namespace) -> int:
    from harness.lab.lifecycle import Lab
    from harness.lab.status import collect_status

    lab = _lab(args)
    assert isinstance(lab, Lab)
    status = collect_status(lab, rtt_count=args.pings)
    if args.json:
        print(dumps(status.to_json(), indent=2, sort_keys=True))
    else:
        print(status.render_text())
    return 0 if status.healthy else 1


def _lab_set_link(args: argparse.Namespace) -> int:
    from harness.inventory.models import AzLinkSpec
    from harness.lab.lifecycle import Lab

    lab = _lab(args)
    assert isinstance(lab, Lab)
    current = lab.spec.az_link
    link = AzLinkSpec.model_validate(
        {
            "delay": args.delay if args.delay is not None else current.delay,
            "jitter": args.jitter if args.jitter is not None else current.jitter,
            "rate": None if args.rate in (None, "none") else args.rate,
        }
    )
    lab.set_az_link(link)
    print(
        f"AZ link now: delay {link.delay * 1e3:g} ms each way, jitter {link.jitter * 1e3:g} ms, "
        f"rate {'unlimited' if link.rate is None else f'{link.rate / 1e6:g} Mbit/s'}"
    )
    return 0


def _lab_bench(args: argparse.Namespace) -> int:
    from harness.lab.bench import run_bench

    return run_bench(Path(args.inventory), cycles=args.cycles, as_json=args.json, progress=_progress)


def _sizing(args: argparse.Namespace) -> int:
    from harness.cli.sizing import run

    return run(args)


def _bench(args: argparse.Namespace) -> int:
    from harness.cli.bench import run_bench_command

    return run_bench_command(args, _progress)


def _preflight(args: argparse.Namespace) -> int:
    from harness.inventory import load_inventory
    from harness.remote.pool import ConnectionPool
    from harness.safety.preflight import run_preflight

    inventory = load_inventory(Path(args.inventory))
    pool = ConnectionPool(inventory.ssh_specs())
    try:
        report = run_preflight(inventory, pool, disruptive=args.disruptive, clean_leftovers=args.clean_leftovers)
    finally:
        pool.close_all()
    print(report.render())
    return 0 if report.ok else 3


def _cleanup(args: argparse.Namespace) -> int:
    from harness.inventory import load_inventory
    from harness.remote.pool import ConnectionPool
    from harness.safety.leftovers import find_leftovers, remove_leftovers

    inventory = load_inventory(Path(args.inventory))
    pool = ConnectionPool(inventory.ssh_specs())
    failed = False
    try:
        for name in sorted(inventory.nodes):
            try:
                node = pool.get(name)
                items = find_leftovers(node, run_id=args.run_id)
            except HarnessError as exc:
                print(f"{name}: cannot check: {exc}", file=sys.stderr)
                failed = True
                continue
            if not items:
                print(f"{name}: clean")
                continue
            for item in items:
                print(f"{'found' if args.dry_run else 'removing'}: {item.describe()}")
            if not args.dry_run:
                remove_leftovers(node, items, break_lock=args.break_lock)
                rest = [i for i in find_leftovers(node, run_id=args.run_id) if i.kind != "lock" or args.break_lock]
                for item in rest:
                    print(f"{name}: STILL THERE: {item.describe()}", file=sys.stderr)
                    failed = True
    finally:
        pool.close_all()
    return 5 if failed else 0


def _report(args: argparse.Namespace) -> int:
    from harness.cli.report import run

    return run(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="harness", description="Replication-aware HA storage test harness")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(
        parent: argparse._SubParsersAction[argparse.ArgumentParser],
        name: str,
        handler: Handler,
        help_text: str,
    ) -> argparse.ArgumentParser:
        p = parent.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(handler=handler)
        return p

    lab = sub.add_parser("lab", help="the embedded lab of user-mode-linux guests (DRBD, netem, sshd)")
    lab_sub = lab.add_subparsers(dest="lab_command", required=True, metavar="ACTION")
    for name, handler, text in (
        ("up", _lab_up, "boot the lab: 4 nodes + AZ router, DRBD resources Connected/UpToDate"),
        ("down", _lab_down, "stop the lab and remove everything it created (idempotent)"),
        ("status", _lab_status, "show guests, DRBD state, AZ link and RTT matrix"),
        ("set-link", _lab_set_link, "change the emulated AZ distance on the running lab"),
        ("bench", _lab_bench, "measure lab up/down time, memory, RTT and scratch-disk write rate"),
        (
            "inventory",
            _lab_inventory,
            "print an inventory that reaches the lab as a cloud cluster (sudo user, no lab:)",
        ),
    ):
        p = add(lab_sub, name, handler, text)
        p.add_argument("--inventory", default=str(DEFAULT_LAB_INVENTORY), help="lab inventory (default: %(default)s)")
        if name == "up":
            p.add_argument("--keep-on-failure", action="store_true", help="leave a failed lab running for debugging")
        if name == "status":
            p.add_argument("--json", action="store_true", help="print one JSON object")
            p.add_argument("--pings", type=_PINGS, default=10, help="pings per RTT matrix entry (default: %(default)s)")
        if name == "set-link":
            p.add_argument("--delay", help="one-way delay added per AZ crossing, e.g. 5ms")
            p.add_argument("--jitter", help="jitter, e.g. 0.5ms")
            p.add_argument("--rate", help="inter-AZ rate cap, e.g. 100mbit, or 'none'")
        if name == "inventory":
            from harness.lab.posing import SHAPES

            p.add_argument(
                "--shape", choices=list(SHAPES), default="multi-az", help="cluster shape (default: %(default)s)"
            )
            p.add_argument("-o", "--output", help="write to this file instead of stdout")
            p.add_argument("--force", action="store_true", help="replace an existing output file")
        if name == "bench":
            p.add_argument("--cycles", type=_CYCLES, default=3, help="up/down cycles (default: %(default)s)")
            p.add_argument("--json", action="store_true")

    from harness.cli.labroots import add_labroots_command

    add_labroots_command(lab_sub)
    from harness.cli.labdoctor import add_labdoctor_command

    add_labdoctor_command(lab_sub)
    from harness.cli.inventory import add_inventory_commands

    add_inventory_commands(sub.add_parser("inventory", help="validate an inventory or print its JSON Schema"))

    pre = add(sub, "preflight", _preflight, "read-only checks of every node and pair; exit 3 on any blocker")
    pre.add_argument("--inventory", required=True)
    pre.add_argument(
        "--disruptive",
        action="store_true",
        help="check for crash/link-cut scenarios: risky DRBD or cluster configuration blocks instead of warning",
    )
    pre.add_argument("--clean-leftovers", action="store_true", help="remove a crashed run's leftovers")
    clean = add(sub, "cleanup", _cleanup, "remove what a crashed run left on the nodes (faults, fio, watchers)")
    clean.add_argument("--inventory", required=True)
    clean.add_argument(
        "--run-id", type=run_id_argument, help="only this run's leftovers (default: every harness leftover)"
    )
    clean.add_argument(
        "--break-lock", action="store_true", help="also remove the cluster lock (after checking its owner)"
    )
    clean.add_argument("--dry-run", action="store_true", help="list, change nothing")

    trust = add(
        sub, "trust", trust_command, "show nodes' host key fingerprints; pin new ones in the inventory's known_hosts"
    )
    trust.add_argument("--inventory", required=True)
    trust.add_argument(
        "--yes", action="store_true", help="pin new keys without asking (fingerprints verified elsewhere)"
    )

    add_killcheck_arguments(
        add(sub, "killcheck", killcheck_command, "kill a running scenario cell and time how the nodes clean up"),
        DEFAULT_LAB_INVENTORY,
    )

    bench = add(
        sub,
        "bench",
        _bench,
        "harness overhead per cell, fidelity vs fio by hand, RTT and rate accuracy; --repeat auto against a "
        "fixed count (repeats); change detection scored on the results database (changes)",
    )
    bench.add_argument(
        "what", nargs="?", choices=BENCHMARKS, default="all", help="overhead: per-phase cost; repeats; changes"
    )
    bench.add_argument("--from-run", metavar="RUN_DIR", help="overhead: phases of an earlier run's ledger, no cells")
    bench.add_argument("--inventory", default=str(DEFAULT_LAB_INVENTORY), help="inventory (default: %(default)s)")
    bench.add_argument("--pair", help="pair to measure on (default: the first by name)")
    bench.add_argument("--repeats", type=_REPEATS, default=3, help="cells per measurement (default: %(default)s)")
    bench.add_argument("--json", action="store_true")
    add_bench_arguments(bench)

    from harness.cli.baseline import add_baseline_commands, add_compare_arguments, run_compare
    from harness.cli.history import add_history_commands
    from harness.cli.metrics import add_metrics_commands
    from harness.cli.report import add_arguments as report_arguments
    from harness.cli.sizing import add_arguments as sizing_arguments

    report = add(sub, "report", _report, "re-render a run's tables, report.html and plots from its samples")
    report_arguments(report)
    compare = add(
        sub, "compare", run_compare, "compare a run with a saved baseline or another run, per cell (exit 1: regressed)"
    )
    add_compare_arguments(compare)
    add_baseline_commands(sub.add_parser("baseline", help="saved baselines: list, show, save"))
    add_history_commands(sub)
    add_metrics_commands(sub)
    sizing = sub.add_parser("sizing", help="predict replicated write throughput from instance/volume limits")
    sizing.set_defaults(handler=_sizing)
    sizing_arguments(sizing)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args)
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `harness ... | head`: the reader left; not an error of ours
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # a bug, not a verdict: never the 1 of "regressed" (harness.cli.crash)
        return report_internal_error(exc)


if __name__ == "__main__":
    sys.exit(main())
