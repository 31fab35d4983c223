"""One machine under two names.  The inventory cannot tell that two SSH addresses (or
DNS names) reach one host; their pinned host keys can: connections are made against those
keys, so two nodes pinning one key are one machine, and preflight blocks."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.remote.spec import SshSpec
from harness.remote.trust import fingerprint, shared_host_keys
from tests.unit.reliability.support import new_key


def _known_hosts(tmp: Path, lines: list[str]) -> Path:
    path = tmp / "known_hosts"
    path.write_text("".join(line + "\n" for line in lines))
    return path


@pytest.mark.reliability_row(5)
def test_case_05_two_names_with_one_host_key_are_one_machine(tmp_path: Path) -> None:
    same, _ = new_key()
    other, _ = new_key()
    kh = _known_hosts(
        tmp_path,
        [
            f"10.0.0.1 {same.get_name()} {same.get_base64()}",
            f"db1.example.com {same.get_name()} {same.get_base64()}",
            f"[10.0.0.3]:2222 {other.get_name()} {other.get_base64()}",
        ],
    )
    specs = {
        "n1": SshSpec(host="10.0.0.1", known_hosts=kh),
        "n2": SshSpec(host="db1.example.com", known_hosts=kh),
        "n3": SshSpec(host="10.0.0.3", port=2222, known_hosts=kh),
    }
    assert shared_host_keys(specs) == [(fingerprint(same), ["n1", "n2"])]
    # distinct keys, or a node with nothing pinned yet, are not a finding
    del specs["n2"]
    specs["n4"] = SshSpec(host="10.0.0.4", known_hosts=tmp_path / "absent")
    assert shared_host_keys(specs) == []
