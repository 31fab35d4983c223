"""``harness trust`` against a hostile ``known_hosts`` and a server that speaks no SSH: a FIFO is
refused before anything is waited on, a directory is exit 2 (not 70), and a broken handshake is
one line, paramiko's traceback of it never on the terminal.  The servers are local sockets of
this process: paramiko's own SSH server for a well-behaved node, raw bytes for a broken one; the
fuzz target gives the server any bytes and known_hosts any lines."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import paramiko
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.remote.trust import read_known_hosts
from tests.unit.hostile_inputs import FUZZ, GUARD_S, run_cli

ROOT = Path(__file__).resolve().parents[2]
Serve = Callable[[socket.socket], None]
_KEY = paramiko.RSAKey.generate(2048)


def _ssh_server(conn: socket.socket) -> None:
    transport = paramiko.Transport(conn)
    transport.add_server_key(_KEY)
    with contextlib.suppress(paramiko.SSHException, EOFError, OSError):
        transport.start_server(server=paramiko.ServerInterface())
        transport.accept(2)
    transport.close()


def _sends(payload: bytes) -> Serve:
    def serve(conn: socket.socket) -> None:
        with contextlib.suppress(OSError):
            conn.sendall(payload)
            conn.recv(65536)
        conn.close()

    return serve


@contextlib.contextmanager
def _servers(serve: Serve, count: int = 2) -> Iterator[list[int]]:
    """``count`` listening sockets on 127.0.0.1, each connection handled by ``serve``."""
    listeners = []
    for _ in range(count):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        sock.settimeout(0.2)
        listeners.append(sock)
    stop = threading.Event()

    def loop(sock: socket.socket) -> None:
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except (TimeoutError, OSError):
                continue
            conn.settimeout(5)
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threads = [threading.Thread(target=loop, args=(s,), daemon=True) for s in listeners]
    for thread in threads:
        thread.start()
    try:
        yield [s.getsockname()[1] for s in listeners]
    finally:
        stop.set()
        for thread in threads:
            thread.join(2)
        for sock in listeners:
            sock.close()


def _inventory(tmp_path: Path, ports: list[int], known_hosts: Path) -> Path:
    nodes = "".join(
        f"  n{i}:\n    az: a{i}\n    ssh: {{host: 127.0.0.1, port: {port}, key: /k/id, known_hosts: {known_hosts},"
        f" connect_timeout: 3}}\n    replication: {{ip: 10.0.0.{i}, iface: eth1}}\n"
        for i, port in enumerate(ports, 1)
    )
    path = tmp_path / "inv.yaml"
    path.write_text(
        f"name: t\nnodes:\n{nodes}pairs:\n  p: {{primary: n1, secondary: n2, resource: r0, device: /dev/drbd0}}\n"
    )
    return path


def test_a_node_s_key_is_pinned(tmp_path: Path) -> None:
    """The control: against a real SSH server both keys are shown and pinned."""
    known = tmp_path / "known_hosts"
    with _servers(_ssh_server) as ports:
        outcome = run_cli(["trust", "--inventory", str(_inventory(tmp_path, ports, known)), "--yes"]).clean((0,))
    assert outcome.stdout.count(": new") == 2 and len(known.read_text().splitlines()) == 2


def test_a_fifo_as_known_hosts_is_refused_not_waited_on(tmp_path: Path) -> None:
    known = tmp_path / "known_hosts"
    os.mkfifo(known)
    with _servers(_ssh_server) as ports:
        line = run_cli(["trust", "--inventory", str(_inventory(tmp_path, ports, known)), "--yes"]).refusal()
    assert line == f"error: {known}: the known_hosts file is a FIFO, not a regular file"


def test_a_directory_as_known_hosts_is_bad_input(tmp_path: Path) -> None:
    known = tmp_path / "known_hosts"
    known.mkdir()
    with _servers(_ssh_server) as ports:
        line = run_cli(["trust", "--inventory", str(_inventory(tmp_path, ports, known)), "--yes"]).refusal()
    assert line == f"error: {known}: the known_hosts file is a directory, not a regular file"


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"SSH-2.0-OpenSSH_9.2\r\n" + bytes(range(256)) * 12, "cannot fetch the host key: Invalid packet blocking"),
        (b"HTTP/1.1 200 OK\r\n\r\n" * 50, "cannot fetch the host key: Indecipherable protocol version"),
        (b"", "cannot fetch the host key: Error reading SSH protocol banner"),
    ],
)
def test_a_server_that_speaks_no_ssh_is_one_line(tmp_path: Path, payload: bytes, message: str) -> None:
    """A real process: pytest's own log capture would hide what paramiko prints to a terminal."""
    with _servers(_sends(payload)) as ports:
        inventory = _inventory(tmp_path, ports, tmp_path / "kh")
        code = "import sys; from harness.cli import main; sys.exit(main(sys.argv[1:]))"
        result = subprocess.run(
            [sys.executable, "-c", code, "trust", "--inventory", str(inventory), "--yes"],
            check=False, cwd=ROOT, capture_output=True, text=True, timeout=GUARD_S,
        )  # fmt: skip
    assert result.returncode == 5, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: 127.0.0.1:{ports[0]}: {message}"), result.stderr


# -- the fuzz targets ---------------------------------------------------------------------------


@FUZZ
@given(
    lines=st.lists(st.text(max_size=60) | st.sampled_from(["h ssh-rsa AAAA", "|1|x|y ssh-ed25519 Zm9v", "@revoked"]))
)
def test_fuzz_known_hosts(tmp_path_factory: pytest.TempPathFactory, lines: list[str]) -> None:
    """Any lines around a pinned key: the key is found, or the file is refused as a user file
    (a NUL, or text that is no UTF-8); never another error."""
    path = tmp_path_factory.mktemp("kh") / "known_hosts"
    pinned = f"127.0.0.1 {_KEY.get_name()} {_KEY.get_base64()}"
    path.write_text("\n".join([*lines, pinned]) + "\n", encoding="utf-8", errors="surrogatepass")
    try:
        known = read_known_hosts(path)
    except ConfigError as exc:
        assert "NUL" in str(exc) or "UTF-8" in str(exc), exc
        return
    found = known.lookup("127.0.0.1")
    assert found is not None and found[_KEY.get_name()] == _KEY


@FUZZ
@given(payload=st.binary(max_size=2000).map(lambda b: b"SSH-2.0-x\r\n" + b) | st.binary(max_size=200))
def test_fuzz_ssh_server_bytes(tmp_path_factory: pytest.TempPathFactory, payload: bytes) -> None:
    """Any bytes from the server: one InfraError line (exit 5), no traceback."""
    tmp = tmp_path_factory.mktemp("trust")
    with _servers(_sends(payload)) as ports:
        outcome = run_cli(["trust", "--inventory", str(_inventory(tmp, ports, tmp / "kh")), "--yes"])
    outcome.clean((5,))
    assert "Traceback" not in outcome.stderr
