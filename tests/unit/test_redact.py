"""Secret redaction and the inventory's refusal of literal secrets (reliability row 34)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
