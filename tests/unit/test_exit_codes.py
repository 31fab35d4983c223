"""The README's exit-code table is what the commands do: one real invocation per documented code.

Every row of the table under "## Exit codes" is parsed; each code claimed for `harness …` or
`pytest scenarios/` must have a command below that really exits with it, and every command
below must be documented.  Nothing here reaches a network: nodes of the inventories have no key
file (refused before connecting) or point at a silent listener on 127.0.0.1 of this test.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.cli.crash import report_internal_error
from harness.errors import INTERNAL_ERROR_EXIT_CODE
from harness.lab.keys import generate_keypair, write_private_key
from tests.plugin.test_plugin_collection import INVENTORY
from tests.unit.baseline_runs import DATA, SINGLE

ROOT = Path(__file__).resolve().parents[2]
HARNESS = str(Path(sys.executable).parent / "harness")
NOT_APPLICABLE = "—"

UNREACHABLE = """\
name: unreachable
nodes:
  n1: {{az: a, ssh: {{host: 127.0.0.1, {ssh}}}, replication: {{ip: 10.0.0.1, iface: eth1}}}}
  n2: {{az: a, ssh: {{host: 127.0.0.2, {ssh}}}, replication: {{ip: 10.0.0.2, iface: eth1}}}}
pairs:
  p: {{primary: n1, secondary: n2, resource: r1, device: /dev/drbd1}}
"""
# harness sizing with a requirement no t2.small pair meets
NOT_MET = [
    "sizing",
    *("--require", "100GB/s", "--instance-type", "t2.small", "--placement", "cross-az"),
    *("--volume", "gp2:100GiB", "--workload", "randwrite:4k:numjobs=8"),
]


def readme_exit_codes() -> dict[str, dict[int, str]]:
    """{"harness": {code: meaning}, "pytest": {...}} from the README's table (— rows left out)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    table: dict[str, dict[int, str]] = {"harness": {}, "pytest": {}}
    for line in section.splitlines():
        row = re.fullmatch(r"\|\s*(\d+)\s*\|(.*)\|(.*)\|", line.strip())
        if row is None:
            continue
        for command, meaning in zip(("harness", "pytest"), (row[2].strip(), row[3].strip()), strict=True):
            if meaning != NOT_APPLICABLE:
                table[command][int(row[1])] = meaning
    return table


# --------------------------------------------------------------------------------------------
# the commands


class Workspace:
    """Inputs for the commands, in a temporary directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        (path / "good.yaml").write_text(INVENTORY)
        (path / "broken.yaml").write_text(INVENTORY.replace("pairs:", "pairs: [\n"))
        (path / "known_hosts").write_text("")
        (path / "nokey.yaml").write_text(self.inventory(port=22, key=path / "no-such-key"))
        # pytest runs that are not scenario runs read the default inventory path
        (path / "inventories").mkdir()
        (path / "inventories" / "lab.yaml").write_text(INVENTORY)
        (path / "conftest.py").write_text('pytest_plugins = ["harness.plugin"]\n')
        (path / "test_pass.py").write_text("def test_pass():\n    pass\n")
        (path / "test_fail.py").write_text("def test_fail():\n    assert False\n")
        (path / "test_wait.py").write_text(
            "import time\nfrom pathlib import Path\n\n"
            "def test_wait():\n    Path('started').touch()\n    time.sleep(60)\n"
        )

    def inventory(self, *, port: int, key: Path) -> str:
        return UNREACHABLE.format(ssh=f"port: {port}, key: {key}, known_hosts: {self.path / 'known_hosts'}")


def harness_run(ws: Workspace, *args: str) -> subprocess.CompletedProcess[str]:
    # TMPDIR: an internal error's traceback file lands in the test's directory
    env = {**os.environ, "TMPDIR": str(ws.path)}
    return subprocess.run(
        [HARNESS, *args], cwd=ws.path, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def harness(ws: Workspace, *args: str) -> int:
    return harness_run(ws, *args).returncode


def pytest_run(ws: Workspace, *args: str) -> int:
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]
    return subprocess.run(cmd, cwd=ws.path, capture_output=True, timeout=120, check=False).returncode


def interrupted(cmd: list[str], cwd: Path, sig: signal.Signals, started: Callable[[], bool]) -> int:
    """Start ``cmd``, send ``sig`` once ``started()``, and return its exit code."""
    with subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as proc:
        deadline = time.monotonic() + 60
        while not started():
            assert proc.poll() is None and time.monotonic() < deadline, "the command never got going"
            time.sleep(0.05)
        proc.send_signal(sig)
        return proc.wait(timeout=60)


class SilentListener:
    """Accepts TCP connections on 127.0.0.1 and never says a word: an SSH client waits there."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.sock.getsockname()[1]
        self.accepted = threading.Event()
        self._held: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        with self.sock:
            while True:
                try:
                    conn, _ = self.sock.accept()
                except OSError:
                    return
                self._held.append(conn)
                self.accepted.set()

    def close(self) -> None:
        self.sock.close()
        for conn in self._held:
            conn.close()


def harness_interrupted(ws: Workspace) -> int:
    key = ws.path / "key"
    write_private_key(key, generate_keypair("exit-code-test"))
    listener = SilentListener()
    try:
        (ws.path / "silent.yaml").write_text(ws.inventory(port=listener.port, key=key))
        cmd = [HARNESS, "cleanup", "--inventory", "silent.yaml"]
        return interrupted(cmd, ws.path, signal.SIGINT, listener.accepted.is_set)
    finally:
        listener.close()


def harness_internal_error(ws: Workspace) -> int:
    # A run directory whose plots/ is a file: `harness report` does not handle that (yet), so
    # it is an unexpected exception (FileExistsError) on a real path.  When it becomes a clear
    # error, pick another unhandled case or document that none is left.
    run = ws.path / "reports" / SINGLE
    shutil.copytree(DATA / SINGLE, run)
    shutil.rmtree(run / "plots", ignore_errors=True)
    (run / "plots").write_text("not a directory\n")
    return harness(ws, "report", str(run))


HARNESS_COMMANDS: dict[int, Callable[[Workspace], int]] = {
    0: lambda ws: harness(ws, "inventory", "check", "good.yaml"),
    1: lambda ws: harness(ws, *NOT_MET),
    2: lambda ws: harness(ws, "inventory", "check", "broken.yaml"),
    3: lambda ws: harness(ws, "preflight", "--inventory", "nokey.yaml"),
    5: lambda ws: harness(ws, "cleanup", "--inventory", "nokey.yaml"),
    INTERNAL_ERROR_EXIT_CODE: harness_internal_error,
    130: harness_interrupted,
}

PYTEST_COMMANDS: dict[int, Callable[[Workspace], int]] = {
    0: lambda ws: pytest_run(ws, "test_pass.py"),
    1: lambda ws: pytest_run(ws, "test_fail.py"),
    # the plugin turns CI's SIGTERM into Ctrl-C, so the run is torn down and says interrupted
    2: lambda ws: interrupted(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_wait.py"],
        ws.path,
        signal.SIGTERM,
        (ws.path / "started").exists,
    ),
    3: lambda ws: pytest_run(ws, "--inventory", "nokey.yaml", "test_pass.py"),
    4: lambda ws: pytest_run(ws, "--run-id", "../elsewhere", "test_pass.py"),
}

COMMANDS = {"harness": HARNESS_COMMANDS, "pytest": PYTEST_COMMANDS}
DOCUMENTED = readme_exit_codes()


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    yield Workspace(tmp_path)


def test_every_documented_code_has_a_command_and_every_command_is_documented() -> None:
    assert {cmd: sorted(codes) for cmd, codes in DOCUMENTED.items()} == {
        cmd: sorted(codes) for cmd, codes in COMMANDS.items()
    }


@pytest.mark.parametrize(
    ("command", "code"), [(cmd, code) for cmd, codes in DOCUMENTED.items() for code in sorted(codes)]
)
def test_the_documented_code_is_what_a_real_run_returns(ws: Workspace, command: str, code: int) -> None:
    run = COMMANDS[command].get(code)
    assert run is not None, f"README documents {code} for {command}, and no test runs a command for it"
    assert run(ws) == code, f"{command}: README says {code} means {DOCUMENTED[command][code]!r}"


# --------------------------------------------------------------------------------------------
# what an internal error looks like


def test_an_internal_error_is_one_line_and_a_traceback_file(ws: Workspace) -> None:
    assert harness_run(ws, "report", "reports/missing").returncode == 2  # a known failure keeps its code
    harness_internal_error(ws)
    run = ws.path / "reports" / SINGLE
    result = harness_run(ws, "report", str(run))
    assert result.returncode == INTERNAL_ERROR_EXIT_CODE
    (line,) = result.stderr.splitlines()
    match = re.fullmatch(r"harness: internal error: FileExistsError: .*plots' \(traceback in (\S+)\)", line)
    assert match is not None, line
    traceback_file = Path(match[1])
    assert traceback_file.parent == ws.path  # $TMPDIR
    text = traceback_file.read_text()
    assert f"harness report {run}" in text and "Traceback (most recent call last)" in text
    assert text.rstrip().endswith(f"FileExistsError: [Errno 17] File exists: '{run / 'plots'}'")
    assert traceback_file.stat().st_mode & 0o077 == 0  # only the user reads it


def test_an_internal_error_never_prints_or_keeps_a_secret(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # tempfile reads it once per process: reset below
    monkeypatch.setattr("tempfile.tempdir", None)
    secret = "AKIAABCDEFGHIJKLMNOP"
    try:
        raise RuntimeError(f"boto said:\n  bad key {secret}")
    except RuntimeError as exc:
        assert report_internal_error(exc) == INTERNAL_ERROR_EXIT_CODE
    err = capsys.readouterr().err
    assert err.startswith("harness: internal error: RuntimeError: boto said: bad key ") and err.count("\n") == 1
    (kept,) = tmp_path.glob("harness-traceback-*.txt")
    assert secret not in err and secret not in kept.read_text()
    assert "RuntimeError: boto said:" in kept.read_text()
