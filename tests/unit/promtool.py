"""The real ``promtool`` (Debian's ``prometheus`` package, 2.42), which scripts/bootstrap takes
out of the package into ``.tools/bin`` without installing it: ``promtool check metrics`` is
the lint Prometheus users run on an exporter's output, ``promtool test rules`` evaluates PromQL
over given series with no server.  A test that needs it skips, saying so, only when the
bootstrap could not get it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

__all__ = ["check_metrics", "promtool"]

ROOT = Path(__file__).resolve().parents[2]


def promtool() -> str:
    """The promtool the bootstrap extracted (or one on PATH); skips the test when neither exists."""
    found = ROOT / ".tools" / "bin" / "promtool"
    if found.exists():
        return str(found)
    on_path = shutil.which("promtool")
    if on_path is None:
        pytest.skip(
            "promtool is not in .tools/bin: scripts/bootstrap extracts it from Debian's prometheus "
            "package (apt-get download), which failed or has not run"
        )
    return on_path


def check_metrics(text: str) -> subprocess.CompletedProcess[str]:
    """``promtool check metrics`` on ``text`` (exit 0: clean; 3: lint problems; 1: unparsable)."""
    return subprocess.run(
        [promtool(), "check", "metrics"], input=text, capture_output=True, text=True, timeout=60, check=False
    )
