"""``harness sizing catalog check`` and ``audit``: which catalog figures to re-read, and which are wrong.

A figure goes stale when the provider changes it (AWS raised gp3's limits in 2025 and M6a's EBS
bandwidth on 2023-05-11); before quoting, a pre-sales engineer runs ``check`` and re-reads the
sources it names (:func:`harness.sizing.catalog.provenance.findings`).  ``audit`` lists every
figure with the URL and date of its source and holds it to the recorded copies of the published
tables kept beside the catalog (:func:`harness.sizing.catalog.audit.audit`), the zone-redundant
comparators (``catalog/zone-redundant.yaml``) with it: a figure a copy states otherwise is
flagged, and the command exits 1.
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path
from typing import Any, TextIO

from harness.cli.compare import add_compare_command
from harness.errors import ConfigError
from harness.sizing.catalog.audit import audit, audit_counts, render_audit
from harness.sizing.catalog.loader import Catalog, load_catalog
from harness.sizing.catalog.provenance import describe_source, findings, render_findings
from harness.sizing.catalog.recorded import load_recorded, read_recorded_file
from harness.sizing.model.zonal import load_zone_redundant
from harness.userfiles.jsonsafe import dumps

__all__ = ["add_catalog_commands", "run_catalog"]


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date YYYY-MM-DD, got {text!r}") from None


def _catalog_files(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--catalog",
        metavar="FILE",
        action="append",
        type=Path,
        dest="catalog_files",
        default=[],
        help="your own catalog YAML merged over the built-in one (repeatable)",
    )


def _add_audit(catalog_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    audit_parser = catalog_sub.add_parser(
        "audit",
        help="every figure with its source (URL, date), held to the recorded copies of the published tables",
        description="List the catalog's figures with the URL and read date of the source each cites, and "
        "compare them with the recorded copies of the published tables kept beside the catalog "
        "(harness/sizing/catalog/sources/): CHECKED (a copy states the same figure), CITED (a source is "
        "named, no copy states it), UNVERIFIED (entered without re-reading a stored copy, or an estimate), "
        "FLAGGED (a copy states another figure).  Prints the flagged and unverified ones and the counts; "
        "exit 1 when any figure is flagged.",
    )
    audit_parser.add_argument("--all", action="store_true", dest="audit_all", help="list every figure")
    audit_parser.add_argument("--json", action="store_true", dest="catalog_json", help="print JSON")
    audit_parser.add_argument(
        "--recorded",
        metavar="FILE",
        action="append",
        type=Path,
        dest="recorded_files",
        default=[],
        help="a recorded copy of your own (same header and line format), also audited against (repeatable)",
    )
    _catalog_files(audit_parser)


def add_catalog_commands(parser: argparse.ArgumentParser) -> Any:
    """Add ``catalog check``, ``catalog audit`` and ``compare`` under ``harness sizing``;
    returns the subcommands, for more."""
    sub = parser.add_subparsers(dest="sizing_command", metavar="catalog|compare|search")
    catalog = sub.add_parser("catalog", help="inspect the sizing catalog")
    catalog_sub = catalog.add_subparsers(dest="catalog_command", metavar="check|audit", required=True)
    check = catalog_sub.add_parser(
        "check", help="list figures older than a date, marked estimate, or entered without re-reading a source"
    )
    check.add_argument("--older-than", metavar="YYYY-MM-DD", type=_date, help="also list figures read before this date")
    check.add_argument("--json", action="store_true", dest="catalog_json", help="print JSON")
    _catalog_files(check)
    _add_audit(catalog_sub)
    add_compare_command(sub)
    return sub


def _run_audit(args: argparse.Namespace, catalog: Catalog, out: TextIO) -> int:
    copies = [*load_recorded(), *(read_recorded_file(path) for path in args.recorded_files)]
    items = audit(catalog, copies, load_zone_redundant())
    if args.catalog_json:
        payload = {
            "counts": audit_counts(items),
            "figures": [
                {
                    "where": item.where,
                    "value": item.value,
                    "status": item.status,
                    "as_of": item.as_of.isoformat(),
                    "sources": [describe_source(catalog, source) for source in item.sources],
                    "recorded_says": [
                        {"reference": claim.reference, "value": claim.value, "line": claim.line}
                        for claim in item.disagreeing
                    ],
                }
                for item in items
            ],
        }
        print(dumps(payload, indent=2), file=out)
    else:
        print(render_audit(catalog, items, everything=args.audit_all), file=out)
    return 1 if any(item.status == "flagged" for item in items) else 0


def run_catalog(args: argparse.Namespace, out: TextIO) -> int:
    """``check``: print the findings, exit 0 (information, not a failure); ``audit``: exit 1 if flagged."""
    if args.catalog_command not in ("check", "audit"):  # pragma: no cover - argparse requires a known command
        raise ConfigError(f"unknown catalog command {args.catalog_command!r}")
    catalog = load_catalog([*args.catalog, *args.catalog_files])
    if args.catalog_command == "audit":
        return _run_audit(args, catalog, out)
    items = findings(catalog, args.older_than)
    if args.catalog_json:
        payload = [
            {
                "where": item.where,
                "as_of": item.as_of.isoformat(),
                "reasons": list(item.reasons),
                "sources": [describe_source(catalog, source) for source in item.sources],
                "note": " ".join(item.note.split()),
            }
            for item in items
        ]
        print(dumps(payload, indent=2), file=out)
    else:
        print(render_findings(catalog, items), file=out)
    return 0
