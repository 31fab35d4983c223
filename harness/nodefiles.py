"""Where the harness keeps its files on a node, and the run id format.

Everything lives under ``/run/harness`` (tmpfs on every systemd/Debian node: a reboot clears
it together with the tc state it describes).  One directory per run id holds the fault
ledger, dead-man pid files, fio output and logs; the cluster lock is ``/run/harness/lock``.
Paths are built only from validated parts, so they are always safe shell tokens.
"""

from __future__ import annotations

import re
import secrets
import time

from harness.errors import ConfigError

__all__ = ["NODE_ROOT", "RUN_ID_PATTERN", "new_run_id", "node_run_dir", "safe_token", "validate_run_id"]

NODE_ROOT = "/run/harness"
RUN_ID_PATTERN = re.compile(r"\A[0-9]{8}-[0-9]{6}-[a-z0-9]{4,8}\Z")
_TOKEN = re.compile(r"\A[A-Za-z0-9_.-]{1,80}\Z")


def new_run_id(now: float | None = None) -> str:
    """``20261121-101500-ab12``: sortable, unique enough, safe in paths and shell words."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now if now is not None else time.time()))
    return f"{stamp}-{secrets.token_hex(2)}"


def validate_run_id(run_id: str) -> str:
    if not RUN_ID_PATTERN.match(run_id):
        raise ConfigError(f"not a run id: {run_id!r} (expected e.g. 20261121-101500-ab12)")
    return run_id


def safe_token(text: str) -> str:
    """A file-name-safe token (cell ids, fault tokens); refuses anything else."""
    if not _TOKEN.match(text) or text in {".", ".."}:
        raise ConfigError(f"unsafe name for a node-side file: {text!r}")
    return text


def node_run_dir(run_id: str) -> str:
    return f"{NODE_ROOT}/{validate_run_id(run_id)}"
