"""Keep secrets out of ledgers, logs, reports and error messages.

Inventories hold references only (key file paths, environment variable names), so the
harness never has a secret to print on purpose; this filter is the second line, for text
that comes back from nodes (stderr tails in error messages) or that a user pasted where it
does not belong: private key blocks, ``password=...``-style assignments (``DB_PASSWORD=``,
``ansible_become_pass:``, ``root_pw=``, ``pgpass:`` and other spellings too), the password of a
URL (``postgresql://ci:SECRET@db/...``, ``https://u:SECRET@pushgateway``), AWS access keys,
HashiCorp Vault tokens and Jinja templates that fetch secrets (``{{ lookup('hashi_vault', ...) }}``).

Which names hold secrets is one pattern (:func:`is_secret_name`), not a list of names: a
password, passphrase, secret, token, API key or credential word, ``pw`` and ``pass`` as the end
of a word (``root_pw``, ``pgpass``, ``ansible_ssh_pass``; not ``PWD``, ``passive``), and a key
that is not a reference to one (``ssh_key`` is secret, ``ssh_key_file`` a path).

Every :class:`harness.errors.HarnessError` passes its message through :func:`redact`, so an
error that quotes a refused value can never print the secret inside it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "REDACTED",
    "is_secret_name",
    "looks_secret",
    "redact",
    "redact_about_url",
    "redact_head",
    "redact_obj",
    "redact_url",
]

REDACTED = "***redacted***"

_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.S)
# A Jinja expression or statement.  Only those that mention a secret store or a secret word are
# redacted whole: `{{ inventory_hostname }}` stays readable in an error, a `lookup(...)` (the
# way Ansible reads vaults, password files and cloud secret managers) never is.
_JINJA = re.compile(r"\{\{.*?(\}\}|\Z)|\{%.*?(%\}|\Z)", re.S)
_JINJA_SECRET = re.compile(r"(?i)lookup|query|vault|passw|secret|token|api_?key|private_key|credential")
# Words that make a name a secret's; `pass` and `pwd` only at the end of a longer word
# (`ansible_ssh_pass`, `pgpass`, `db_pwd`: not "pass: 3" nor PWD, the working directory).
_SECRET_WORDS = (
    r"password|passwd|passphrase|secret|token|api[_-]?key|cred|pw(?![a-z])|(?<=[a-z0-9_-])(?:pass|pwd)(?![a-z])"
)
# `name = value` where the name holds a secret word anywhere (DB_PASSWORD, vault_token,
# ansible_ssh_pass, X-Vault-Token, "password": ...); the value is quoted or runs to the next
# blank.  A name after a dot is a location, not an assignment: error messages say
# `nodes.n1.ssh.password: unknown key`, and that must stay readable.  A value redacted already
# is no assignment either: a URL's user named like a secret (`https://x-access-token:***@host/`)
# keeps its host and path.
_ASSIGNMENT = re.compile(
    rf"(?i)(?<![.\w-])([\w-]*?(?:{_SECRET_WORDS})[\w-]*)"
    rf"([\"']?\s*[:=]\s*)(?!{re.escape(REDACTED)})(\"[^\"]*\"|'[^']*'|\S+)"
)
# A variable name that holds a secret: the words above, a vault, and a key that is not a
# reference to one (`ssh_key` holds a key, `ssh_key_file`, `key_env` and `host_key_checking` do not).
_SECRET_NAME = re.compile(
    rf"(?i){_SECRET_WORDS}|vault|private_?key(?!_file)|(?<![a-z])keys?(?![a-z])(?!_(?:file|path|env|checking)(?![a-z]))"
)
# The password of a URL's userinfo (`scheme://user:password@host`); the user stays readable,
# and the password may hold any character a word can (RFC 3986 allows `'` in it).
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s/:@'\"]*):([^\s@]*?)@")
# A word that reads like a URL with userinfo whose `//` is missing or misspelt
# (`postgresql:/ci:pw@db`, `ci:pw@db`; no `://` before its last `@`): everything from its
# first `:` to its last `@`.
_MANGLED = re.compile(r"\A([^:@\s]*):(\S*)@(?=[^@]*\Z)")
# A URL's authority (`//userinfo@host:port`), for text known to be one URL or one word.
_URL_AUTHORITY = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://([^/?#]*)")
_BARE = re.compile(
    # AWS access key ids
    r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"
    # HashiCorp Vault tokens (Vault >= 1.10: hvs. service, hvb. batch, hvr. recovery)
    r"|\bhv[sbr]\.[A-Za-z0-9_-]{20,}"
    # ... and the older forms: s. + 24 base62 characters (mixed case with a digit, so a host
    # name label is not taken for one), b. + a long base64url blob
    r"|\bs\.(?=[A-Za-z0-9]*[0-9])(?=[A-Za-z0-9]*[A-Z])[A-Za-z0-9]{24}(?![A-Za-z0-9])"
    r"|\bb\.[A-Za-z0-9_-]{60,}"
    # HTTP bearer credentials
    r"|(?i:\bbearer\s+)[A-Za-z0-9._~+/-]{8,}=*"
)


def _jinja(match: re.Match[str]) -> str:
    return REDACTED if _JINJA_SECRET.search(match.group(0)) else match.group(0)


def redact(text: str) -> str:
    """``text`` with anything secret-looking replaced by :data:`REDACTED`."""
    text = _PRIVATE_KEY.sub(REDACTED, text)
    text = _URL_PASSWORD.sub(rf"\1:{REDACTED}@", text)
    text = _JINJA.sub(_jinja, text)
    text = _ASSIGNMENT.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    return _BARE.sub(REDACTED, text)


def redact_head(text: str, limit: int) -> str:
    """The first ``limit`` characters of :func:`redact` of ``text``, for an error that quotes a
    value's start: cut first, a URL loses the ``@`` after its password and the password stays."""
    return redact(text)[:limit]


def _authority(match: re.Match[str]) -> str:
    userinfo, at, host = match.group(1).rpartition("@")
    if not at or ":" not in userinfo:
        return match.group(0)
    head = match.group(0)[: match.start(1) - match.start(0)]
    return f"{head}{userinfo.split(':', 1)[0]}:{REDACTED}@{host}"


def redact_url(text: str) -> str:
    """:func:`redact` for a URL, or one command-line word holding one (``--results-db=...``):
    its password is redacted whatever characters it holds (a blank, an ``@``), and so is what
    reads like one in a URL whose ``//`` is missing (``postgresql:/ci:pw@db``)."""
    shown = redact(_URL_AUTHORITY.sub(_authority, text))
    return shown if "://" in shown.rpartition("@")[0] else _MANGLED.sub(rf"\1:{REDACTED}@", shown)


def redact_about_url(text: str, url: str) -> str:
    """:func:`redact_url` of ``text``, a message about ``url`` (a client library's error), with
    every piece of the URL's password taken out too: a library that split the URL where the
    password has a blank or an ``@`` quotes a piece of it."""
    match = _URL_AUTHORITY.search(url)
    userinfo = match.group(1).rpartition("@")[0] if match else ""
    password = userinfo.partition(":")[2]
    text = redact_url(text)
    for piece in sorted(re.split(r"[\s@]+", password), key=len, reverse=True):
        if len(piece) >= 3:
            text = text.replace(piece, REDACTED)
    return text


def looks_secret(text: str) -> bool:
    return redact(text) != text


def is_secret_name(name: str) -> bool:
    """Whether a variable called ``name`` holds a secret, whatever its value."""
    return bool(_SECRET_NAME.search(name))


def redact_obj(value: Any) -> Any:
    """Redact every string inside dicts/lists (ledger entries, JUnit properties, sample metadata)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {k: redact_obj(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_obj(v) for v in value]
    return value
