"""Keep secrets out of ledgers, logs and reports.

Inventories hold references only (key file paths, environment variable names), so the
harness never has a secret to print on purpose; this filter is the second line, for text
that comes back from nodes (stderr tails in error messages) or that a user pasted where it
does not belong: private key blocks, ``password=...``-style assignments, AWS access keys.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["REDACTED", "looks_secret", "redact", "redact_obj"]

REDACTED = "***redacted***"

_PATTERNS = (
    re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.S),
    re.compile(r"(?i)\b(password|passwd|secret|token|api[_-]?key)\b(\s*[:=]\s*)(\"[^\"]*\"|'[^']*'|\S+)"),
    re.compile(r"\b(AKIA|ASIA)[A-Z0-9]{16}\b"),
)


def redact(text: str) -> str:
    """``text`` with anything secret-looking replaced by :data:`REDACTED`."""
    text = _PATTERNS[0].sub(REDACTED, text)
    text = _PATTERNS[1].sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    return _PATTERNS[2].sub(REDACTED, text)


def looks_secret(text: str) -> bool:
    return redact(text) != text


def redact_obj(value: Any) -> Any:
    """Redact every string inside dicts/lists (ledger entries, JUnit properties)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {k: redact_obj(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_obj(v) for v in value]
    return value
