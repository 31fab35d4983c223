"""``harness lab roots``: build (once) and list the guest roots a lab inventory boots.

``lab up`` builds a missing root itself; this command does it ahead of time (a CI image, a
slow mirror) and says what each root is.  Exit codes: 0 every root built and verified, 2 bad
inventory, 5 a root could not be built (the message says what is missing: debootstrap, a
mirror, a release the mirror does not serve).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

__all__ = ["add_labroots_command"]


def _lab_roots(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from harness.inventory import load_inventory
    from harness.lab.roots import ensure_roots
    from harness.lab.topology import lab_spec
    from harness.lab.userland import KEY_TOOLS

    inventory = load_inventory(Path(args.inventory))
    spec = lab_spec(inventory)
    nodes = sorted(inventory.nodes)
    roots = ensure_roots(spec, nodes, lambda line: print(line, file=sys.stderr))
    users = {suite: [n for n in nodes if spec.root_of(n) == suite] for suite in roots}
    if args.json:
        out = {
            suite: {
                "path": str(root.path),
                "nodes": users[suite],
                "os": root.userland.os,
                "debian_version": root.userland.debian_version,
                "versions": root.userland.versions,
                "built_now_s": root.build_s,
            }
            for suite, root in roots.items()
        }
        print(json.dumps(out, indent=2, sort_keys=True))
        return 0
    if not roots:
        print(f"every node of {inventory.name!r} boots the host's root; no root to build")
        return 0
    rows = [
        [suite, ",".join(users[suite]), root.userland.debian_version]
        + [root.userland.versions.get(tool, "missing") for tool in KEY_TOOLS]
        + [str(root.path)]
        for suite, root in roots.items()
    ]
    print(tabulate(rows, headers=["root", "nodes", "debian", *KEY_TOOLS, "path"]))
    return 0


def add_labroots_command(lab_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``roots`` to the ``harness lab`` actions."""
    text = "build (once) and list the Debian roots the lab's nodes boot (lab.nodes.<node>.root)"
    p = lab_sub.add_parser("roots", help=text, description=text)
    p.set_defaults(handler=_lab_roots)
    p.add_argument("--inventory", default="inventories/lab.yaml", help="lab inventory (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="print one JSON object, by root")
