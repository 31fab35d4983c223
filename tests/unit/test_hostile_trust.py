"""``harness trust`` against a hostile ``known_hosts`` and a server that speaks no SSH: a FIFO is
refused before anything is waited on, a directory is exit 2 (not 70), a key that is no base64, a
``@revoked`` marker or a line of a megabyte is one line naming it, a file of 50,000 hosts is read
in a second, a key is pinned on a line of its own, a prompt nobody can answer is a refusal, and a
broken handshake is one line, paramiko's traceback of it never on the terminal.  The servers are
local sockets of this process: paramiko's own SSH server for a well-behaved node, raw bytes for a
broken one; the fuzz targets give the server any bytes and known_hosts generated lines (hosts
plain and hashed, markers, keys whole, cut or broken, lines past the limit)."""

from __future__ import annotations

import base64
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
from harness.limits import MAX_KNOWN_HOSTS_LINE
from harness.remote.trust import read_known_hosts
from tests.unit.fuzz_tally import note, surface
from tests.unit.hostile_inputs import FUZZ, GUARD_S, no_sentinel, probe, run_cli, secret_forms, unchanged
from tests.unit.reliability.support import new_key

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


def _trust(tmp_path: Path, known_hosts: str, ports: list[int]) -> list[str]:
    known = tmp_path / "known_hosts"
    known.write_text(known_hosts)
    return ["trust", "--inventory", str(_inventory(tmp_path, ports, known)), "--yes"]


_LONG_KEY = base64.b64encode(b"\0\0\0\7ssh-rsa\0\0\0\3\1\0\1\0\x0f\x42\x41\x7f" + b"\xab" * 1_000_000).decode()


_LONG_LINE = f"h ssh-rsa {_LONG_KEY}"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("h ssh-rsa A", "known_hosts:2: not a known_hosts line: its key is not base64"),  # was exit 70
        ("@revoked h ssh-rsa AAAAB3NzaC1yc2E=", "known_hosts:2: '@revoked': the harness checks no revocations"),
        (_LONG_LINE, f"known_hosts:2: a line of {len(_LONG_LINE)} characters; a known_hosts line has at most 16384"),
        (
            f"|1|x|y {_KEY.get_name()} {_KEY.get_base64()}",
            "known_hosts:2: a hashed host name is |1|salt|hash, both base64",
        ),
    ],
    ids=["bad base64", "revoked", "a 1 MB key (40 s in paramiko)", "a hashed name of no base64 (exit 70 at lookup)"],
)
def test_a_known_hosts_line_the_harness_cannot_read_is_refused_naming_it(
    tmp_path: Path, line: str, message: str
) -> None:
    with _servers(_ssh_server) as ports:
        argv = _trust(tmp_path, f"# pinned by hand\n{line}\n", ports)
        with unchanged(tmp_path):
            outcome = run_cli(argv)
    assert f"error: {tmp_path / message}" in outcome.refusal()
    assert outcome.seconds < GUARD_S / 2


def test_a_cert_authority_line_pins_nothing_and_is_skipped(tmp_path: Path) -> None:
    with _servers(_ssh_server) as ports:
        outcome = run_cli(_trust(tmp_path, "@cert-authority *.example.com ssh-rsa AAAAB3NzaC1yc2E=\n", ports))
    assert outcome.clean((0,)).stdout.count(": new") == 2


def test_forty_thousand_hosts_are_read_in_a_second(tmp_path: Path) -> None:
    """paramiko's HostKeys searches every entry on every line added: 6 s for 16,000 lines."""
    key, _ = new_key()
    line = f"{key.get_name()} {key.get_base64()}"
    with _servers(_ssh_server) as ports:
        argv = _trust(tmp_path, "".join(f"h{i} {line}\n" for i in range(40_000)), ports)
        outcome = run_cli(argv).clean((0,))
    assert outcome.seconds < GUARD_S / 4, f"{outcome.seconds:.1f} s"


def test_a_key_is_pinned_on_a_line_of_its_own(tmp_path: Path) -> None:
    """The file's last line had no newline: the pinned key was glued to it, both lost."""
    with _servers(_ssh_server) as ports:
        argv = _trust(tmp_path, f"h {_KEY.get_name()} {_KEY.get_base64()}", ports)
        run_cli(argv).clean((0,))
        text = (tmp_path / "known_hosts").read_text()
        assert text.startswith(f"h {_KEY.get_name()} {_KEY.get_base64()}\n[127.0.0.1]:{ports[0]} ")
        assert run_cli(argv[:-1]).clean((0,)).stdout.count(": pinned") == 2  # no prompt: both are pinned


def test_a_prompt_nobody_can_answer_is_a_refusal(tmp_path: Path) -> None:
    """Standard input closed (CI without --yes): was an internal error (EOFError)."""
    with _servers(_ssh_server) as ports:
        argv = _trust(tmp_path, "", ports)[:-1]
        with unchanged(tmp_path):
            line = run_cli(argv).refusal()
    assert line == "error: no answer: standard input is closed; check the fingerprints, then pin them with --yes"


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

_OTHER = paramiko.ECDSAKey.generate()
_BLOBS = [_KEY.asbytes(), _OTHER.asbytes()]
_TYPES = ["ssh-rsa", "ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-dss", "rsa-sha2-512", "sk-ssh-ed25519@openssh.com"]


@st.composite
def _key(draw: st.DrawFn) -> str:
    """A key field: a real key whole, cut or with a byte changed, random bytes, or no base64."""
    blob = draw(st.sampled_from(_BLOBS))
    how = draw(st.sampled_from(["whole", "cut", "flip", "random", "text"]))
    if how == "cut":
        blob = blob[: draw(st.integers(0, len(blob)))]
    elif how == "flip":
        at = draw(st.integers(0, len(blob) - 1))
        blob = blob[:at] + bytes([blob[at] ^ draw(st.integers(1, 255))]) + blob[at + 1 :]
    elif how == "random":
        blob = draw(st.binary(max_size=300))
    elif how == "text":
        return draw(st.text(st.characters(blacklist_categories=("Zs", "Cc", "Cs")), max_size=20))
    return base64.b64encode(blob).decode()


_CHARACTERS = st.characters(blacklist_categories=("Cc", "Cs"))
_HASHED = "|1|" + base64.b64encode(b"s" * 20).decode() + "|" + base64.b64encode(b"h" * 20).decode()


@st.composite
def known_hosts_line(draw: st.DrawFn) -> str:
    """A line as a known_hosts may hold it, or may not (a password pasted in, now and then)."""
    marker = draw(st.sampled_from(["", "", "", "@revoked ", "@cert-authority ", "@bogus "]) | secret_forms())
    hosts = draw(st.sampled_from(["h", "h,g", "[h]:2222", _HASHED, "|1|x|y", "*.example.com", "!h"]) | secret_forms())
    line = f"{marker}{hosts} {draw(st.sampled_from(_TYPES))} {draw(_key())}"
    if draw(st.integers(0, 19)) == 0:  # past the limit, or just within it
        line += " " + "c" * (MAX_KNOWN_HOSTS_LINE - len(line) - draw(st.sampled_from([-1, 1])))
    return draw(st.sampled_from([line, line, line, "# " + line, "", draw(st.text(_CHARACTERS, max_size=60))]))


@FUZZ
@given(lines=st.lists(known_hosts_line(), max_size=8))
@surface("known_hosts reader")
def test_fuzz_known_hosts(tmp_path_factory: pytest.TempPathFactory, lines: list[str]) -> None:
    """Any lines around a pinned key: the key is found, or the file is refused naming its line
    (or as a user file: a NUL, no UTF-8); never another error."""
    path = tmp_path_factory.mktemp("kh") / "known_hosts"
    pinned = f"127.0.0.1 {_KEY.get_name()} {_KEY.get_base64()}"
    path.write_bytes(("\n".join([*lines, pinned]) + "\n").encode())
    try:
        with probe():
            known = read_known_hosts(path)
    except ConfigError as exc:
        no_sentinel(lines, [str(exc)])
        assert f"{path}:" in str(exc) or "NUL" in str(exc) or "UTF-8" in str(exc), exc
        return
    found = known.lookup("127.0.0.1")
    assert found is not None and found[_KEY.get_name()] == _KEY


@FUZZ
@given(
    lines=st.lists(known_hosts_line(), max_size=4),
    planted=st.sampled_from(["none", "plain", "hashed", "changed"]),
    newline=st.booleans(),
)
@surface("known_hosts files (harness trust)")
def test_fuzz_trust_known_hosts(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str], planted: str, newline: bool
) -> None:
    """Any known_hosts, the first node's key perhaps pinned (plainly, hashed, or another one):
    ``harness trust --yes`` pins what is new on lines of their own and changes nothing else, or
    refuses the file in one line (2) or a changed key (3); never an internal error."""
    tmp = tmp_path_factory.mktemp("trust")
    with _servers(_ssh_server) as ports:
        entry = f"[127.0.0.1]:{ports[0]}"
        key = _OTHER if planted == "changed" else _KEY
        name = paramiko.HostKeys.hash_host(entry) if planted == "hashed" else entry
        pin = [] if planted == "none" else [f"{name} {key.get_name()} {key.get_base64()}"]
        before = "\n".join([*lines, *pin]) + ("\n" if newline else "")
        argv = _trust(tmp, before, ports)
        with unchanged(tmp, allowed=["known_hosts"]):
            outcome = run_cli(argv).clean((0, 2, 3))
        after = (tmp / "known_hosts").read_bytes().decode()  # as written: no newline translated
    no_sentinel(lines, [outcome.stdout, outcome.stderr])
    kept = after.startswith(before)
    note(("write",), () if kept else ("write",))
    assert kept, f"known_hosts changed, not only added to:\n{before!r}\n{after!r}"
    if outcome.code == 2:
        assert after == before
        return
    pinned = read_known_hosts(tmp / "known_hosts")
    for port in ports:
        state = "CHANGED" if planted == "changed" and port == ports[0] else "pinned"
        keys = pinned.lookup(f"[127.0.0.1]:{port}") or {}
        assert (state == "CHANGED") == (keys.get(_KEY.get_name()) != _KEY), (state, after)
    assert outcome.code == (3 if planted == "changed" else 0)


@FUZZ
@given(
    payload=st.binary(max_size=2000).map(lambda b: b"SSH-2.0-x\r\n" + b)
    | st.binary(max_size=200)
    | st.tuples(
        st.sampled_from(["SSH-2.0-{}\r\n", "SSH-1.5-{}\r\n", "HTTP/1.1 401 {}\r\n\r\n", "{}\r\n"]), secret_forms()
    ).map(lambda parts: parts[0].format(parts[1]).encode())
)
@surface("SSH server payloads (harness trust)")
def test_fuzz_ssh_server_bytes(tmp_path_factory: pytest.TempPathFactory, payload: bytes) -> None:
    """Any bytes from the server (a password in its banner, now and then): one InfraError line
    (exit 5), no traceback, nothing pinned, the banner's password not quoted."""
    tmp = tmp_path_factory.mktemp("trust")
    with _servers(_sends(payload)) as ports:
        argv = ["trust", "--inventory", str(_inventory(tmp, ports, tmp / "kh")), "--yes"]
        with unchanged(tmp):
            outcome = run_cli(argv)
    outcome.clean((5,))
    assert "Traceback" not in outcome.stderr
    no_sentinel([payload.decode(errors="replace")], [outcome.stdout, outcome.stderr])
