"""Real Prometheus daemons for the export's integration tests, each started on 127.0.0.1 at a free
port for one module and stopped after it: Debian's ``prometheus-pushgateway`` (installed by
scripts/bootstrap), ``prometheus-node-exporter`` and the Prometheus server of ``prometheus``
(extracted by scripts/bootstrap into ``.tools/bin``, so neither runs as a system service)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

__all__ = ["daemon_binary", "free_port", "get", "pushgateway_argv", "serving"]

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return str(response.read().decode("utf-8"))


def daemon_binary(name: str, package: str) -> str:
    """``name`` from .tools/bin, PATH or /usr/bin; the test fails (with the fix) without it."""
    for candidate in (ROOT / ".tools" / "bin" / name, Path("/usr/bin") / name):
        if candidate.exists():
            return str(candidate)
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: run scripts/bootstrap (Debian package {package})")
    return found


def pushgateway_argv(address: str) -> list[str]:
    """The Pushgateway on ``address`` keeping what it is pushed in memory only: Debian's build
    persists to /var/lib/prometheus/pushgateway.data unless told otherwise, which would bring
    every earlier test's (and a system service's) groups into this one, and this one's into
    theirs."""
    binary = daemon_binary("prometheus-pushgateway", "prometheus-pushgateway")
    return [binary, f"--web.listen-address={address}", "--persistence.file="]


@contextmanager
def serving(argv: Sequence[str], ready_url: str, *, what: str) -> Iterator[None]:
    """Run ``argv`` until the block ends, once ``ready_url`` answers (20 s at most)."""
    proc = subprocess.Popen(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                get(ready_url)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    err = proc.stderr.read().decode() if proc.stderr and proc.poll() is not None else ""
                    pytest.fail(f"{what} did not become ready at {ready_url}: {err[-500:]}")
                time.sleep(0.2)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
