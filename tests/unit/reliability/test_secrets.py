"""Secrets: literal secrets in an inventory are refused, node output and ledgers are redacted (row
34).

Cases of tests/RELIABILITY_CASES.md, the fault and bad-input map; each test is marked
``reliability_row(N)`` and named ``test_case_NN_*``; select a case with ``-k rowNN``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import (
    CommandFailed,
    ConfigError,
)
from harness.inventory import parse_inventory
from harness.redact import REDACTED, redact
from harness.remote import CommandResult
from harness.runfiles.ledger import Ledger
from tests.unit.reliability.support import (
    MINI,
    RUN_ID,
)

PEM_SNIPPET = "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAA\\n-----END OPENSSH PRIVATE KEY-----"


@pytest.mark.reliability_row(34)
@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            MINI.replace("    az: az-a\n", "    az: az-a\n    instance_type: 'password=hunter2'\n", 1),
            "nodes.a1.instance_type looks like a secret",
        ),
        (
            MINI.replace("    az: az-a\n", f'    az: az-a\n    volume: "{PEM_SNIPPET}"\n', 1),
            "nodes.a1.volume looks like a secret",
        ),
        (
            MINI.replace("known_hosts: /run/harness-lab/known_hosts}", "known_hosts: /k, password: hunter2}", 1),
            "nodes.a1.ssh.password",
        ),
    ],
    ids=["password-literal", "private-key", "password-key"],
)
def test_case_34_literal_secrets_are_refused(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_inventory(text, "inv.yaml")
    assert message in str(info.value)
    assert "hunter2" not in str(info.value) and "b3BlbnNzaC1rZXkt" not in str(info.value)


@pytest.mark.reliability_row(34)
def test_case_34_node_output_and_ledgers_are_redacted(tmp_path: Path) -> None:
    failed = CommandFailed(CommandResult("a1", "mysql -e 'select 1'", 1, "", "login failed: password=hunter2", 0.1))
    assert "hunter2" not in str(failed) and REDACTED in str(failed)
    ledger = Ledger(tmp_path / "ledger.ndjson", RUN_ID)
    ledger.record("fio-start", {"node": "a1", "argv": "env TOKEN=abcdef123456 fio --name=w"})
    text = (tmp_path / "ledger.ndjson").read_text()
    assert "abcdef123456" not in text and json.loads(text)["node"] == "a1"


@pytest.mark.reliability_row(34)
@given(
    st.sampled_from(["password", "passwd", "secret", "token", "api_key", "API-KEY"]), st.from_regex(r"\A[0-9]{6,20}\Z")
)
def test_case_34_redaction_property(word: str, value: str) -> None:
    assert value not in redact(f"{word}={value}") and value not in redact(f"{word}: {value}")
    assert redact("plain 1234567 text") == "plain 1234567 text"
