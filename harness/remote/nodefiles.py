"""Where the harness keeps its files on a node.

Everything lives under ``/run/harness`` (tmpfs on every systemd/Debian node: a reboot clears
it together with the tc state it describes).  One directory per run id holds the fault
ledger, dead-man pid files, fio output and logs; the cluster lock is ``/run/harness/lock``.
Paths are built only from validated parts (run ids by :mod:`harness.runfiles.runid`), so they are
always safe shell tokens.
"""

from __future__ import annotations

import re

from harness.errors import ConfigError
from harness.runfiles.runid import validate_run_id

__all__ = ["MD_PREFIX", "NODE_ROOT", "node_run_dir", "safe_token"]

NODE_ROOT = "/run/harness"
#: md arrays the harness creates are named ``/dev/md/harness-<token>`` (leftover detection)
MD_PREFIX = "harness-"
_TOKEN = re.compile(r"\A[A-Za-z0-9_.-]{1,80}\Z")


def safe_token(text: str) -> str:
    """A file-name-safe token (cell ids, fault tokens); refuses anything else."""
    if not _TOKEN.match(text) or text in {".", ".."}:
        raise ConfigError(f"unsafe name for a node-side file: {text!r}")
    return text


def node_run_dir(run_id: str) -> str:
    return f"{NODE_ROOT}/{validate_run_id(run_id)}"
