"""Which Ansible variables hold secrets: the one list both the mapping check and the
conversion read.

The names come from Ansible's own documentation: the connection variables
(``ansible_password``, ``ansible_ssh_pass``; ``ansible_httpapi_pass`` and
``ansible_paramiko_pass`` of other connection plugins), the privilege-escalation ones
(``ansible_become_password`` and each become plugin's ``ansible_<method>_pass``) and the SSH
key passphrase.  Teams name their own secrets in many styles (``db_admin_password``,
``vault_api_token``, ``root_pw``, ``pgpass``), so any name the redactor's pattern reads as a
secret's counts too (:func:`harness.redact.is_secret_name`).
"""

from __future__ import annotations

from typing import Any, Final

from harness.redact import is_secret_name, looks_secret

__all__ = ["SECRET_VARS", "VaultValue", "is_secret_value", "is_secret_var"]

#: Ansible's connection and privilege-escalation password variables (and their old spellings).
SECRET_VARS: Final = frozenset(
    {
        "ansible_password",
        "ansible_ssh_pass",
        "ansible_ssh_password",
        "ansible_paramiko_pass",
        "ansible_paramiko_password",
        "ansible_httpapi_pass",
        "ansible_httpapi_password",
        "ansible_winrm_password",
        "ansible_private_key_passphrase",
        "ansible_ssh_private_key_passphrase",
        "ansible_become_password",
        "ansible_become_pass",
        "ansible_sudo_pass",
        "ansible_sudo_password",
        "ansible_su_pass",
        "ansible_su_password",
    }
)


class VaultValue:
    """An ``!vault`` value: present, encrypted, and never read."""

    def __repr__(self) -> str:
        return "<vault-encrypted>"


def is_secret_var(name: str) -> bool:
    """Whether an Ansible variable called ``name`` holds a secret, whatever its value."""
    return name in SECRET_VARS or is_secret_name(name)


def is_secret_value(name: str, value: Any) -> bool:
    """Whether variable ``name`` set to ``value`` is a secret: a secret variable that is set,
    a vault-encrypted value, or a value that looks like a key or token whatever its name."""
    if isinstance(value, VaultValue) or name in SECRET_VARS:
        return True
    if isinstance(value, str) and looks_secret(f"{name}={value}"):
        return True
    return is_secret_var(name) and value not in (None, "", False)
