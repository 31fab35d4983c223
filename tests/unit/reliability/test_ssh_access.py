"""SSH and sudo: unreachable hosts, wrong keys, unknown host keys and sudo prompts fail fast (rows
9-12).

Cases of tests/RELIABILITY_CASES.md, the fault and bad-input map; each test is marked
``reliability_row(N)`` and named ``test_case_NN_*``; select a case with ``-k rowNN``.
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import paramiko
import pytest
from paramiko.common import AUTH_FAILED

import harness.cli
import harness.remote.pool
from harness.errors import (
    ConfigError,
    ConnectionLost,
    HostKeyRefused,
    RefusedError,
)
from harness.inventory import parse_inventory
from harness.remote import SshNode
from harness.remote.ssh import CONNECT_ATTEMPTS
from harness.safety.preflight import Finding
from tests.doubles import (
    ROOT,
    Answer,
    FakePool,
    FakeRunner,
    mutations,
)
from tests.unit.reliability.support import (
    MINI,
    _FabricResult,
    client_spec,
    finding,
    lab_node,
    new_key,
    preflight,
    sudo_node,
)


class _RejectEveryKey(paramiko.ServerInterface):
    def get_allowed_auths(self, username: str) -> str:
        return "publickey"

    def check_auth_publickey(self, username: str, key: paramiko.PKey) -> int:
        return AUTH_FAILED


@dataclass
class SshServer:
    port: int
    host_key: paramiko.PKey
    connections: int = 0

    def known_hosts_line(self, key: paramiko.PKey | None = None) -> str:
        key = key or self.host_key
        return f"[127.0.0.1]:{self.port} {key.get_name()} {key.get_base64()}\n"


@pytest.fixture
def ssh_server() -> Iterator[SshServer]:
    """An sshd on 127.0.0.1 that presents its host key and refuses every client key."""
    host_key, _ = new_key()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.1)
    server = SshServer(listener.getsockname()[1], host_key)
    stop = threading.Event()
    transports: list[paramiko.Transport] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            server.connections += 1
            transport = paramiko.Transport(conn)
            transport.add_server_key(host_key)
            transports.append(transport)
            # the client may give up during the handshake (it refused our host key)
            with contextlib.suppress(paramiko.SSHException, EOFError, OSError):
                transport.start_server(server=_RejectEveryKey())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server
    stop.set()
    listener.close()
    for transport in transports:
        transport.close()
    thread.join(5)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


@pytest.mark.reliability_row(9)
def test_case_09_unreachable_host_fails_fast(tmp_path: Path) -> None:
    spec, _ = client_spec(tmp_path, _free_port(), "")
    start = time.monotonic()
    with pytest.raises(
        ConnectionLost, match=rf"n1: SSH connection lost or refused: cannot connect to 127.0.0.1:{spec.port}"
    ):
        SshNode("n1", spec).open()
    assert time.monotonic() - start < 5


@pytest.mark.reliability_row(9)
def test_case_09_silent_host_is_bounded_by_connect_timeout(tmp_path: Path) -> None:
    with socket.socket() as silent:  # accepts TCP, never speaks SSH
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        spec, _ = client_spec(tmp_path, silent.getsockname()[1], "", connect_timeout="0.5s")
        start = time.monotonic()
        with pytest.raises(ConnectionLost, match="n1: SSH connection lost or refused"):
            SshNode("n1", spec).open()
        assert time.monotonic() - start < 10


@pytest.mark.reliability_row(9)
def test_case_09_a_flaky_connect_is_tried_a_limited_number_of_times(tmp_path: Path) -> None:
    accepted: list[int] = []
    with socket.socket() as flaky:  # accepts TCP and hangs up at once, like an sshd restarting
        flaky.bind(("127.0.0.1", 0))
        flaky.listen(8)

        def hang_up() -> None:
            while True:
                try:
                    conn, _ = flaky.accept()
                except OSError:
                    return
                accepted.append(1)
                conn.close()

        threading.Thread(target=hang_up, daemon=True).start()
        spec, _ = client_spec(tmp_path, flaky.getsockname()[1], "", connect_timeout="2s")
        with pytest.raises(ConnectionLost, match=rf"\({CONNECT_ATTEMPTS} attempts\)"):
            SshNode("n1", spec).open()
    assert len(accepted) == CONNECT_ATTEMPTS


@pytest.mark.reliability_row(9)
def test_case_09_preflight_is_all_or_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    a2 = lab_node("a2")
    lost = ConnectionLost("a1", "cannot connect to 10.213.0.11:22: [Errno 113] No route to host")
    report = preflight({"a1": lost, "a2": a2})
    assert finding(report, "a1", "ssh") == Finding("a1", "ssh", "BLOCK", str(lost))
    assert finding(report, "a2", "ssh").status == "ok"
    assert not report.ok and "preflight BLOCKED" in report.render()
    assert mutations(a2) == []
    # the CLI turns it into exit 3, changing nothing anywhere
    path = tmp_path / "inv.yaml"
    path.write_text(MINI)
    pool = FakePool({"a1": lost, "a2": lab_node("a2")})
    monkeypatch.setattr(harness.remote.pool, "ConnectionPool", lambda _inv: pool)
    assert harness.cli.main(["preflight", "--inventory", str(path)]) == 3
    assert pool.closed and re.search(r"a1\s+ssh\s+BLOCK", capsys.readouterr().out)
    assert mutations(cast(FakeRunner, pool.nodes["a2"])) == []


@pytest.mark.reliability_row(10)
def test_case_10_wrong_ssh_key_fails_fast_without_key_material(tmp_path: Path, ssh_server: SshServer) -> None:
    spec, pem = client_spec(tmp_path, ssh_server.port, ssh_server.known_hosts_line())
    with pytest.raises(ConnectionLost) as info:
        SshNode("n1", spec).open()
    message = str(info.value)
    assert message == "n1: SSH connection lost or refused: authentication failed for root@127.0.0.1"
    assert pem.splitlines()[1][:20] not in message and "PRIVATE KEY" not in message
    assert ssh_server.connections == 1  # no retry storm


@pytest.mark.reliability_row(10)
def test_case_10_no_agent_no_key_search(tmp_path: Path) -> None:
    spec, _ = client_spec(tmp_path, 22, "")
    conn = SshNode("n1", spec)._new_connection()
    assert conn.connect_kwargs["allow_agent"] is False
    assert conn.connect_kwargs["look_for_keys"] is False
    assert conn.connect_kwargs["key_filename"] == [str(spec.key)]


@pytest.mark.reliability_row(11)
def test_case_11_host_key_policy_is_reject(tmp_path: Path) -> None:
    spec, _ = client_spec(tmp_path, 22, "")
    conn = SshNode("n1", spec)._new_connection()
    assert isinstance(vars(conn.client)["_policy"], paramiko.RejectPolicy)  # fabric installs AutoAddPolicy


@pytest.mark.reliability_row(11)
def test_case_11_unknown_host_key_is_refused(tmp_path: Path, ssh_server: SshServer) -> None:
    spec, _ = client_spec(tmp_path, ssh_server.port, "")
    with pytest.raises(HostKeyRefused, match=rf"host key of 127.0.0.1 is not in {re.escape(str(spec.known_hosts))}"):
        SshNode("n1", spec).open()
    assert not spec.known_hosts.read_text()  # nothing was added (no TOFU)


@pytest.mark.reliability_row(11)
def test_case_11_changed_host_key_is_refused(tmp_path: Path, ssh_server: SshServer) -> None:
    other, _ = new_key()
    spec, _ = client_spec(tmp_path, ssh_server.port, ssh_server.known_hosts_line(other))
    with pytest.raises(HostKeyRefused, match=r"host key of 127.0.0.1 CHANGED") as info:
        SshNode("n1", spec).open()
    assert info.value.exit_code == 3


@pytest.mark.reliability_row(11)
def test_case_11_missing_known_hosts_refuses_before_connecting(tmp_path: Path, ssh_server: SshServer) -> None:
    spec, _ = client_spec(tmp_path, ssh_server.port, None)
    with pytest.raises(HostKeyRefused, match=r"known_hosts file .* does not exist"):
        SshNode("n1", spec).open()
    assert ssh_server.connections == 0


@pytest.mark.reliability_row(11)
def test_case_11_a_damaged_known_hosts_is_one_refusal_before_connecting(tmp_path: Path, ssh_server: SshServer) -> None:
    """paramiko's own loader stopped the session on a key that is no base64 (InvalidHostKey)."""
    spec, _ = client_spec(tmp_path, ssh_server.port, "h ssh-rsa A\n" + ssh_server.known_hosts_line())
    with pytest.raises(ConfigError, match=rf"{re.escape(str(spec.known_hosts))}:1: not a known_hosts line"):
        SshNode("n1", spec).open()
    assert ssh_server.connections == 0


@pytest.mark.reliability_row(11)
def test_case_11_a_hashed_pinned_key_is_accepted(tmp_path: Path, ssh_server: SshServer) -> None:
    """The harness's own reader pins a hashed host as paramiko's did: the key passes, and only
    the client key (which this server refuses) fails."""
    line = ssh_server.known_hosts_line()
    hashed = paramiko.HostKeys.hash_host(f"[127.0.0.1]:{ssh_server.port}")
    spec, _ = client_spec(tmp_path, ssh_server.port, f"{hashed} {line.split(' ', 1)[1]}")
    with pytest.raises(ConnectionLost, match="authentication failed"):
        SshNode("n1", spec).open()


@pytest.mark.reliability_row(12)
def test_case_12_sudo_needs_a_password(tmp_path: Path) -> None:
    # constructed: what `sudo -n` prints when a password would be needed (sudo(8) -n)
    node, conn = sudo_node(tmp_path, _FabricResult(1, "", "sudo: a password is required\n"))
    with pytest.raises(RefusedError, match="n1: sudo needs a password; the harness only uses `sudo -n`") as info:
        node.run(["tc", "-j", "qdisc", "show", "dev", "vec1"], timeout=10)
    assert info.value.exit_code == 3
    assert conn.commands == ["sudo -n -- timeout --kill-after=5 10 tc -j qdisc show dev vec1"]  # once, no prompt


@pytest.mark.reliability_row(12)
def test_case_12_preflight_blocks_on_sudo(tmp_path: Path) -> None:
    text = (ROOT / "inventories" / "lab.yaml").read_text().replace("  user: root\n", "  user: ci\n  sudo: true\n", 1)
    inv = parse_inventory(text)
    a1 = lab_node("a1", sudo=Answer(rc=1, stderr="sudo: a password is required"))
    report = preflight({"a1": a1, "a2": lab_node("a2", sudo=Answer())}, inv)
    assert finding(report, "a1", "sudo -n") == Finding("a1", "sudo -n", "BLOCK", "sudo: a password is required")
    assert finding(report, "a2", "sudo -n").status == "ok"
    assert "sudo -n true" in a1.calls
