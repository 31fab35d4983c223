"""``harness inventory check|schema|from-ansible``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.userfiles.outfile import check_output, write_replacing

__all__ = ["add_inventory_commands"]


def _check(args: argparse.Namespace) -> int:
    from harness.inventory import load_inventory
    from harness.prediction.cellmodel import inventory_catalog

    inv = load_inventory(Path(args.file))
    inventory_catalog(inv, Path(args.file))  # instance types and volumes against the sizing catalog
    pairs = ", ".join(
        f"{name} ({inv.placement(name)}: {p.primary}->{p.secondary} {p.device})" for name, p in inv.pairs.items()
    )
    print(f"{args.file}: OK — {len(inv.nodes)} nodes, pairs: {pairs}")
    return 0


def _schema(_: argparse.Namespace) -> int:
    from harness.inventory import inventory_json_schema

    print(inventory_json_schema())
    return 0


def _from_ansible(args: argparse.Namespace) -> int:
    from harness.inventory import load_ansible_mapping, parse_inventory

    mapping, ansible = Path(args.mapping), Path(args.ansible)
    output = None if args.output is None else Path(args.output)
    if output is not None:
        check_output(output, {"Ansible inventory": ansible, "mapping file": mapping}, force=args.force)
    conversion, inventory = load_ansible_mapping(mapping, ansible)
    text = conversion.to_yaml(str(mapping))
    # What is written must load with the strict YAML 1.2 loader, not just validate as data.
    parse_inventory(text, source=args.output or "<generated inventory>")
    for note in conversion.notes:
        print(f"note: {note}", file=sys.stderr)
    if output is None:
        print(text, end="")
        return 0
    write_replacing(output, text)
    print(f"{output}: {len(inventory.nodes)} nodes, pairs: {', '.join(inventory.pairs)}", file=sys.stderr)
    return 0


def add_inventory_commands(parser: argparse.ArgumentParser) -> None:
    """``harness inventory check|schema|from-ansible`` under ``parser``."""
    sub = parser.add_subparsers(dest="inventory_command", required=True, metavar="ACTION")
    text = "validate an inventory file (no remote access)"
    check = sub.add_parser("check", help=text, description=text)
    check.set_defaults(handler=_check)
    check.add_argument("file")
    text = "print the inventory JSON Schema (for editors)"
    sub.add_parser("schema", help=text, description=text).set_defaults(handler=_schema)
    text = (
        "write a harness inventory from an Ansible inventory, YAML or INI (hosts.ini), with the "
        "group_vars/ and host_vars/ beside it"
    )
    ansible = sub.add_parser("from-ansible", help=text, description=text)
    ansible.set_defaults(handler=_from_ansible)
    ansible.add_argument(
        "ansible",
        metavar="ANSIBLE_INVENTORY",
        help="the Ansible inventory file: YAML (hosts.yaml), INI (hosts.ini) or `ansible-inventory --list` JSON",
    )
    ansible.add_argument("--mapping", required=True, help="mapping file: pairs, host variables, defaults")
    ansible.add_argument("-o", "--output", help="write here instead of stdout (never over an input)")
    ansible.add_argument("--force", action="store_true", help="replace the -o file if it exists")
