"""SSH keys for one lab start: a client key and a fresh host key per guest, pinned.

Host keys are new on every ``lab up`` and written to the lab's own ``known_hosts``, so the
harness connects with strict host-key checking even to guests it just created.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

__all__ = ["KeyPair", "generate_keypair", "known_hosts_line", "write_private_key"]


@dataclass(frozen=True)
class KeyPair:
    private_openssh: bytes
    public_openssh: str  # "ssh-ed25519 AAAA..."


def generate_keypair(comment: str) -> KeyPair:
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return KeyPair(private, f"{public.decode()} {comment}")


def write_private_key(path: Path, key: KeyPair, *, owner_uid: int | None = None) -> None:
    """Write a private key with mode 0600 (created with that mode, never world-readable)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, key.private_openssh)
        if owner_uid is not None:
            os.fchown(fd, owner_uid, owner_uid)
    finally:
        os.close(fd)


def known_hosts_line(host: str, key: KeyPair) -> str:
    key_type, blob = key.public_openssh.split()[:2]
    return f"{host} {key_type} {blob}"
