"""The harness-side write-ahead ledger of every change made to a node.

Each change is recorded *before* it is made (a crash between a change and its record would
leave a change nobody knows of), then its outcome.  The ledger is an append-only NDJSON file
in the run's report directory; with the node-side fault records under ``/run/harness/<run>/``
it tells ``harness cleanup`` what a crashed run left, and it is the audit trail of the run.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from filelock import FileLock

from harness.redact import redact_obj
from harness.userfiles.jsonsafe import dumps

__all__ = ["Ledger"]


class Ledger:
    """Append-only event log, safe for several xdist workers of one run."""

    def __init__(self, path: Path, run_id: str) -> None:
        self.path = path
        self.run_id = run_id
        self._lock = FileLock(str(path) + ".lock")

    def record(self, event: str, data: Mapping[str, Any]) -> None:
        entry = {
            "ts": round(time.time(), 3),
            "run_id": self.run_id,
            "pid": os.getpid(),
            "event": event,
            **redact_obj(dict(data)),
        }
        line = dumps(entry, sort_keys=True) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def entries(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text(encoding="utf-8").splitlines() if line.strip()]

    def open_faults(self) -> list[dict[str, Any]]:
        """Faults whose intent was recorded but which were never cleared."""
        open_: dict[str, dict[str, Any]] = {}
        for entry in self.entries():
            token = entry.get("token")
            if not token:
                continue
            if entry["event"] == "impair-intent":
                open_[token] = entry
            elif entry["event"] in ("impair-cleared", "impair-failed"):
                open_.pop(token, None)
        return list(open_.values())

    def unfinished(self) -> list[str]:
        """What the ledger says was changed on a node and not yet undone: faults never cleared,
        fio started and never seen to exit or stopped, a replication cut never reconnected."""
        left = [f"fault on {f.get('node')} {f.get('iface', '')} ({f.get('token')})" for f in self.open_faults()]
        fio: dict[tuple[object, object], None] = {}
        cut: dict[tuple[object, object], None] = {}
        for entry in self.entries():
            event = entry.get("event")
            fio_key, cut_key = (entry.get("node"), entry.get("cell")), (entry.get("node"), entry.get("resource"))
            if event == "fio-start":
                fio[fio_key] = None
            elif event in ("fio-exit", "fio-stopped"):
                fio.pop(fio_key, None)
            elif event == "drbd-disconnect":
                cut[cut_key] = None
            elif event == "drbd-connect":
                cut.pop(cut_key, None)
        left += [f"fio on {node} ({cell})" for node, cell in fio]
        left += [f"{resource} disconnected on {node}" for node, resource in cut]
        return left
