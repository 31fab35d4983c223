"""Secret redaction and the inventory's refusal of literal secrets."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cli import main
from harness.errors import ConfigError
from harness.inventory import parse_inventory
from harness.redact import REDACTED, redact, redact_obj
from harness.rules.bounds import BoundResult, combine, inconclusive
from harness.runfiles.samples import Sample

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
# Every error the CLI prints is redacted at its source, Vault tokens and Jinja
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


# Secrets start with "Q": no fixed text of the messages (nor ***redacted***) contains one.
_SECRET = st.text(min_size=4, max_size=30, alphabet="abcdefghijklmnopqrstuvwxyz0123456789").map(lambda s: f"Q{s}")


@given(_SECRET)
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


# --------------------------------------------------------------------------------------------
# Verdict reasons and sample metadata are redacted where they are made, so every
# writer downstream (samples.ndjson, report.html, comparison.csv/.md, baselines, JUnit) gets
# redacted text.

_LEAK = "password=hunter2"


def _leaky(samples: list[Sample]) -> list[Sample]:
    return [dataclasses.replace(s, metadata={**s.metadata, "verdict_reason": f"fio said {_LEAK}"}) for s in samples]


def test_a_secret_in_a_verdict_reason_reaches_no_report_and_no_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.report.publish import render_run

    from .baseline_runs import SINGLE, load, write_run

    reports = tmp_path / "reports"
    run = write_run(reports, SINGLE, _leaky(load(SINGLE)), run_json_from=SINGLE)
    # A run written by an older harness: the secret is in its file as it was recorded.
    old = reports / "20261120-090000-0ld0"
    old.mkdir()
    (old / "samples.ndjson").write_text((run / "samples.ndjson").read_text().replace(REDACTED, "hunter2"))
    render_run(run)
    assert main(["baseline", "save", "new", SINGLE, "--reports", str(reports), "--inventory-name", "lab"]) == 0
    assert main(["baseline", "save", "old", str(old), "--reports", str(reports), "--inventory-name", "lab"]) == 0
    written = [p for d in (run, reports / "baselines") for p in d.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {"samples.ndjson", "report.html", "comparison.csv", "comparison.md"}
    for path in written:
        if path.suffix in (".ndjson", ".html", ".csv", ".md", ".json"):
            assert "hunter2" not in path.read_text(), path
    assert "hunter2" not in capsys.readouterr().out


@given(_SECRET)
def test_bound_results_and_samples_are_redacted_when_made(secret: str) -> None:
    reason = f"drbdsetup said token={secret}"
    assert secret not in BoundResult("fail", reason).reason
    assert secret not in combine([inconclusive(reason), BoundResult("pass", "ok")]).reason
    sample = Sample("bw", 1.0, "MiB/s", {"verdict_reason": reason, "impairment": {"note": f"api_key: {secret}"}})
    assert secret not in sample.to_json() and secret not in repr(sample.metadata)


def test_disk_cells_share_the_junit_properties_of_replicated_cells() -> None:
    from harness.cell import CellResult
    from harness.disk.cell import DiskCellResult, DiskCellSpec
    from harness.disk.layout import DiskLayout
    from harness.fio.report import parse_fio_json
    from harness.fio.spec import WorkloadSpec

    fio = parse_fio_json((Path(__file__).parents[1] / "data" / "fio" / "fio-3.33-randwrite-4k-libaio.json").read_text())
    workload = WorkloadSpec.from_mapping({"name": "w", "rw": "randwrite", "bs": "4k", "size": "64M"})
    spec = DiskCellSpec("disk_baseline", "a1", DiskLayout("raw", ("/dev/ubdb",)), workload)
    meta = {"node": "a1", "mode": "raw", "workload": "w", "devices": f"/dev/ubdb ({_LEAK})", "steady_state": None}
    samples = [Sample("bw", 12.5, "MiB/s", meta), Sample("overhead", float("nan"), "s", meta)]
    result = DiskCellResult(spec, fio, fio.write, BoundResult("pass", f"raw: {_LEAK}"), meta, samples)
    props = dict(result.properties())
    # named with their unit, values as text; non-finite values are left out
    assert props["bw_mib_s"] == "12.5" and "overhead_s" not in props and "overhead" not in props
    # no Python repr: a missing steady-state record is no property, not "None"
    assert "steady_state" not in props and props["mode"] == "raw"
    assert "hunter2" not in repr(result.properties())
    assert DiskCellResult.properties is CellResult.properties
