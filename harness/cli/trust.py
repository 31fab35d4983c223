"""``harness trust``: show each node's host key fingerprint and pin the new ones in the
inventory's ``known_hosts`` after a person says yes (or ``--yes``); a changed key is never
touched (exit 3).  A prompt nobody can answer (standard input closed, as in CI) is a refusal,
exit 2, before anything is pinned for that node."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.errors import ConfigError

__all__ = ["trust_command"]


def _agreed(question: str) -> bool:
    try:
        return input(question).strip() == "yes"
    except EOFError:
        print(file=sys.stderr)
        raise ConfigError(
            "no answer: standard input is closed; check the fingerprints, then pin them with --yes"
        ) from None


def trust_command(args: argparse.Namespace) -> int:
    from harness.inventory import load_inventory
    from harness.remote.trust import pin_host_key, trust_status

    inventory = load_inventory(Path(args.inventory))
    changed = False
    for name, node in sorted(inventory.nodes.items()):
        status = trust_status(name, node.ssh)
        print(f"{name}: {status.host_entry} {status.key.get_name()} {status.fingerprint}: {status.state}")
        if status.state == "CHANGED":
            changed = True
            print(
                f"  the key differs from the one pinned in {node.ssh.known_hosts}; not touching it. If the node "
                "was rebuilt, verify the new fingerprint and remove the old line yourself.",
                file=sys.stderr,
            )
        elif status.state == "new" and (
            args.yes or _agreed(f"  pin this key for {name} in {node.ssh.known_hosts}? [yes/no] ")
        ):
            pin_host_key(node.ssh, status)
            print(f"  pinned in {node.ssh.known_hosts}")
    return 3 if changed else 0
