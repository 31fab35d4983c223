"""``harness sizing catalog check``: list catalog figures older than a date, estimates, or unverified.

A figure goes stale when the provider changes it (AWS raised gp3's limits in 2025 and M6a's EBS
bandwidth on 2023-05-11); before quoting, a pre-sales engineer runs this and re-reads the
sources it names.  The listing is :func:`harness.sizing.catalog.provenance.findings`.
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path
from typing import Any, TextIO

from harness.errors import ConfigError
from harness.sizing.catalog.loader import load_catalog
from harness.sizing.catalog.provenance import describe_source, findings, render_findings
from harness.userfiles.jsonsafe import dumps

__all__ = ["add_catalog_commands", "run_catalog"]


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date YYYY-MM-DD, got {text!r}") from None


def add_catalog_commands(parser: argparse.ArgumentParser) -> Any:
    """Add ``catalog check`` under ``harness sizing``; returns the subcommands, for more."""
    sub = parser.add_subparsers(dest="sizing_command", metavar="catalog|search")
    catalog = sub.add_parser("catalog", help="inspect the sizing catalog")
    catalog_sub = catalog.add_subparsers(dest="catalog_command", metavar="check", required=True)
    check = catalog_sub.add_parser(
        "check", help="list figures older than a date, marked estimate, or entered without re-reading a source"
    )
    check.add_argument("--older-than", metavar="YYYY-MM-DD", type=_date, help="also list figures read before this date")
    check.add_argument("--json", action="store_true", dest="catalog_json", help="print JSON")
    check.add_argument(
        "--catalog",
        metavar="FILE",
        action="append",
        type=Path,
        dest="catalog_files",
        default=[],
        help="your own catalog YAML merged over the built-in one (repeatable)",
    )
    return sub


def run_catalog(args: argparse.Namespace, out: TextIO) -> int:
    """Print the findings; exit 0 (the listing is information, not a failure)."""
    if args.catalog_command != "check":  # pragma: no cover - argparse requires a known command
        raise ConfigError(f"unknown catalog command {args.catalog_command!r}")
    catalog = load_catalog([*args.catalog, *args.catalog_files])
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
