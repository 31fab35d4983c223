"""Pure parts of trust-on-first-use, the cluster lock and the leftover listing."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import time
from pathlib import Path

import paramiko
from hypothesis import given
from hypothesis import strategies as st

from harness.remote.spec import SshSpec
from harness.remote.trust import fingerprint, pin_host_key, trust_status
from harness.safety.leftovers import parse_listing
from harness.safety.lock import LockOwner, is_stale, local_owner

KEY_A = paramiko.Ed25519Key.from_private_key_file


def _key() -> paramiko.PKey:
    import io

    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    )
    return paramiko.Ed25519Key.from_private_key(io.StringIO(pem.decode()))


def test_trust_pins_new_keys_and_refuses_changed_ones(tmp_path: Path) -> None:
    spec = SshSpec(host="192.0.2.7", known_hosts=tmp_path / "known_hosts")
    first = _key()
    status = trust_status("n1", spec, fetch=lambda _s: first)
    assert status.state == "new" and status.fingerprint.startswith("SHA256:")
    pin_host_key(spec, status)
    assert trust_status("n1", spec, fetch=lambda _s: first).state == "pinned"
    assert trust_status("n1", spec, fetch=lambda _s: _key()).state == "CHANGED"
    assert fingerprint(first) == status.fingerprint


def test_non_default_port_uses_bracket_entry(tmp_path: Path) -> None:
    spec = SshSpec(host="192.0.2.7", port=2222, known_hosts=tmp_path / "kh")
    status = trust_status("n1", spec, fetch=lambda _s: _key())
    assert status.host_entry == "[192.0.2.7]:2222"


owners = st.builds(
    LockOwner,
    run_id=st.just("20261121-101500-ab12"),
    user=st.sampled_from(["root", "ci"]),
    host=st.sampled_from(["ctl-1", "ctl-2"]),
    boot_id=st.sampled_from(["b1", "b2"]),
    pid=st.integers(1, 4_000_000),
    started=st.floats(0, 2e9),
    inventory=st.just("inv.yaml"),
)


@given(owners, st.sampled_from(["ctl-1", "ctl-2"]), st.sampled_from(["b1", "b2"]), st.booleans())
def test_stale_only_when_provably_dead(owner: LockOwner, host: str, boot: str, alive: bool) -> None:
    stale = is_stale(owner, host=host, boot_id=boot, pid_alive=lambda _p: alive)
    assert stale == (owner.host == host and owner.boot_id == boot and not alive)


def test_a_lock_of_this_host_is_stale_once_its_process_has_ended() -> None:
    owner = local_owner("20261121-101500-ab12", "inv.yaml")
    host, boot = owner.host, owner.boot_id
    assert not is_stale(owner, host=host, boot_id=boot)  # this very process holds it
    # a real process that has ended but was not waited for yet: a zombie is gone all the same
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    stat = Path(f"/proc/{child.pid}/stat")
    deadline = time.monotonic() + 30
    while stat.read_text().rsplit(")", 1)[1].split()[0] != "Z":
        assert time.monotonic() < deadline, "the child did not end"
        time.sleep(0.01)
    ended = dataclasses.replace(owner, pid=child.pid)
    assert is_stale(ended, host=host, boot_id=boot)
    assert not is_stale(ended, host=f"{host}-elsewhere", boot_id=boot)
    child.wait()


@given(owners)
def test_owner_round_trip(owner: LockOwner) -> None:
    assert LockOwner.from_json(owner.to_json()) == owner


def test_owner_garbage_is_none() -> None:
    assert LockOwner.from_json("{not json") is None
    assert LockOwner.from_json('{"run_id": 1}') is None


def test_leftover_listing_parse() -> None:
    text = (
        "fault\t20261121-101500-ab12\t/run/harness/20261121-101500-ab12/faults/a1-vec1-1-1.json\n"
        "fio\t20261121-101500-ab12\t123 /run/harness/20261121-101500-ab12/fio-x.pid\n"
        "qdisc\t-\tvec1\n"
        "lock\t-\t{}\n"
        "noise line\n"
    )
    items = parse_listing("a1", text)
    assert [(i.kind, i.run_id) for i in items] == [
        ("fault", "20261121-101500-ab12"),
        ("fio", "20261121-101500-ab12"),
        ("qdisc", None),
        ("lock", None),
    ]
    assert items[2].describe() == "a1: qdisc: vec1"


def test_kill_trials_start_scenarios_that_react_to_sigint() -> None:
    # started from a background job, the harness itself ignores SIGINT; the scenario it
    # starts must not inherit that, or a SIGINT trial interrupts nothing
    import signal
    import subprocess
    import sys

    from harness.bench.killtrial import interruptible_children

    probe = [sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT))"]
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        inherited = subprocess.run(probe, capture_output=True, text=True, check=True).stdout.strip()
        with interruptible_children():
            started = subprocess.run(probe, capture_output=True, text=True, check=True).stdout.strip()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # restored for the caller
    finally:
        signal.signal(signal.SIGINT, previous)
    assert inherited == "1"  # SIG_IGN survives exec: the trap this guards against
    assert started == "<built-in function default_int_handler>"
