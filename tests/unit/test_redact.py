"""Secret redaction and the inventory's refusal of literal secrets (reliability row 34)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cli import main
from harness.errors import ConfigError
from harness.inventory import parse_inventory
from harness.redact import REDACTED, redact, redact_obj

from .test_inventory import GOOD


@pytest.mark.parametrize(
    "text",
    [
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----",
        "password=hunter2",
        "PASSWD: 'x y z'",
        "api_key = abc123",
        "AKIAABCDEFGHIJKLMNOP",
    ],
)
def test_secret_shapes_are_redacted(text: str) -> None:
    out = redact(f"before {text} after")
    assert (REDACTED in out and out.startswith("before") and out.endswith("after")) or "PRIVATE KEY" in text
    for word in ("hunter2", "x y z", "abc123", "AKIAABCDEFGHIJKLMNOP", "b3BlbnNzaC1rZXk"):
        assert word not in out


@given(st.text(alphabet=st.characters(whitelist_categories=("Ll", "Nd")), max_size=40))
def test_plain_text_is_untouched(text: str) -> None:
    assert redact(text) == text


def test_nested_objects() -> None:
    assert redact_obj({"a": ["token: t0ps3cret", 3]}) == {"a": [f"token: {REDACTED}", 3]}


def test_inventory_refuses_a_pasted_private_key() -> None:
    text = GOOD.replace(
        "    az: us-east-1a\n", '    az: us-east-1a\n    hostname: "-----BEGIN RSA PRIVATE KEY-----"\n', 1
    )
    with pytest.raises(ConfigError, match=r"nodes\.n1\.hostname looks like a secret"):
        parse_inventory(text)


# --------------------------------------------------------------------------------------------
# Issue 19: every error the CLI prints is redacted at its source, Vault tokens and Jinja
# lookups included.

_TOKEN_BODY = st.text(
    alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", min_size=6, max_size=40
)


@given(_TOKEN_BODY)
def test_vault_tokens_are_redacted_in_any_shape(body: str) -> None:
    for text in (
        f"token=s.{body}",
        f"VAULT_TOKEN={body}",
        f"X-Vault-Token: hvs.{body}{'A1' * 10}",
        f"hvb.{body}{'x9' * 12}",
        f"{{{{ lookup('hashi_vault', 'secret=kv/db:pw url=https://v:8200') }}}} {body}",
    ):
        out = redact(f"refused: {text} (fix it)")
        assert REDACTED in out
        assert out.startswith("refused: ") and out.endswith(" (fix it)")
        assert f"s.{body}" not in out and "hvs." + body not in out and "hashi_vault" not in out


def test_a_benign_template_stays_readable() -> None:
    assert redact("{{ inventory_hostname }}.example.com") == "{{ inventory_hostname }}.example.com"


@given(st.text(min_size=8, max_size=30, alphabet="abcdefghijklmnopqrstuvwxyz0123456789"))
def test_harness_errors_are_redacted_whatever_prints_them(secret: str) -> None:
    exc = ConfigError(f"host 'db1': ansible_host is {{{{ lookup('hashi_vault', 'token=s.{secret}') }}}}")
    for text in (str(exc), repr(exc), *map(str, exc.args)):
        assert secret not in text and REDACTED in text


def test_the_cli_never_prints_a_refused_vault_token(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from .test_inventory_ansible import HOSTS, MAPPING, project

    token = "s.Abc123Def456Ghi789Jkl012"
    hosts = HOSTS.replace(
        "ansible_host: 192.0.2.12",
        f"ansible_host: \"{{{{ lookup('hashi_vault', 'secret=kv/data/db token={token} url=https://vault:8200') }}}}\"",
    )
    mapping = project(tmp_path, hosts=hosts, mapping=MAPPING)
    assert main(["inventory", "from-ansible", str(tmp_path / "hosts.yaml"), "--mapping", str(mapping)]) == 2
    err = capsys.readouterr().err
    assert "ansible_host is a Jinja template" in err
    assert token not in err and "Abc123" not in err and "hashi_vault" not in err
