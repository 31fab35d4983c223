"""Hostile harness inventories past the loader's structural limits: aliases that multiply one long
value, values of a megabyte, numbers of hundreds of digits, names that are paths, empty pins.
Each case runs the real command under the time and memory guards (tests/unit/hostile_inputs.py);
the fuzz target puts hostile values at every scalar of the shipped single-AZ inventory."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from harness.limits import MAX_ECHO_CHARS, MAX_ERROR_LINE_CHARS, MAX_EXPANDED_CHARS
from tests.unit.fuzz_tally import surface
from tests.unit.hostile_inputs import FUZZ, GUARD_S, no_sentinel, run_cli, secret_forms, unchanged

ROOT = Path(__file__).resolve().parents[2]
SINGLE_AZ = (ROOT / "inventories/single_az.yaml").read_text(encoding="utf-8")


def _inventory(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "inv.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _check(tmp_path: Path, text: str) -> list[str]:
    return ["inventory", "check", str(_inventory(tmp_path, text))]


def _replaced(old: str, new: str) -> str:
    assert old in SINGLE_AZ, old
    return SINGLE_AZ.replace(old, new, 1)


def test_the_shipped_inventory_checks(tmp_path: Path) -> None:
    """The control: the inventory every case below breaks is fine (exit 0)."""
    run_cli(_check(tmp_path, SINGLE_AZ)).clean((0,))


def test_five_thousand_aliases_of_one_long_value_are_refused_at_once(tmp_path: Path) -> None:
    text = "x-big: &b " + "x" * 200_000 + "\n" + SINGLE_AZ + "catalog:\n" + "  - *b\n" * 5000
    assert len(text) < 300_000
    outcome = run_cli(_check(tmp_path, text))
    assert f"more than {MAX_EXPANDED_CHARS} characters of text once its aliases are expanded" in outcome.refusal()
    assert outcome.seconds < GUARD_S / 2


def test_a_megabyte_value_is_quoted_by_its_start_and_length(tmp_path: Path) -> None:
    text = _replaced("instance_type: t3.medium ", "instance_type: t3" + "z" * 1_000_000 + " ")
    line = run_cli(_check(tmp_path, text)).refusal()
    assert len(line) <= MAX_ERROR_LINE_CHARS + 200
    # the value's first characters, then its length (the quotes around it counted)
    assert re.search(rf"'t3z{{{MAX_ECHO_CHARS // 2 - 3}}}…\[1000005 characters\]", line), line


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("volume: gp3:200GiB ", f"volume: gp3:{'9' * 400}GiB ", "has more than 30 digits"),
        ("delay: 10ms", f"delay: {'9' * 400}ms", "has more than 30 digits"),
        ("rate: 128mbit", f"rate: {'9' * 400}mbit", "has more than 30 digits"),
        ("connect_timeout: 10s", f"connect_timeout: {'9' * 5000}", "a number of more than 30 digits"),
        ("port: 7900", f"port: {'9' * 5000}", "a number of more than 30 digits"),
    ],
)
def test_numbers_of_hundreds_of_digits_are_refused(tmp_path: Path, old: str, new: str, message: str) -> None:
    assert message in run_cli(_check(tmp_path, _replaced(old, new))).refusal()


def test_a_400_digit_workload_size_is_refused(tmp_path: Path) -> None:
    text = SINGLE_AZ + f"workloads:\n  big: {{rw: write, bs: 4k, size: {'9' * 400}G}}\n"
    assert "workload 'big': workload size: " in run_cli(_check(tmp_path, text)).refusal()


def test_sizing_refuses_a_400_digit_volume_and_iodepth() -> None:
    base = ["sizing", "--instance-type", "t3.medium"]
    volume = run_cli([*base, "--volume", f"gp3:{'9' * 400}GiB", "--workload", "write:4k"])
    assert "has more than 30 digits" in volume.refusal()
    depth = run_cli([*base, "--workload", f"write:4k:iodepth={'9' * 400}"])
    assert "numjobs x iodepth must be at most 65536" in depth.refusal()


def test_collection_with_a_400_digit_volume_is_a_usage_error(tmp_path: Path) -> None:
    """Was pytest's INTERNALERROR: the inventory is read when the plugin configures."""
    inventory = _inventory(tmp_path, _replaced("volume: gp3:200GiB ", f"volume: gp3:{'9' * 400}GiB "))
    options = ["--inventory", str(inventory), "--reports", str(tmp_path / "reports")]
    pytest_argv = ["-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q", "tests/unit/test_units.py"]
    argv = [sys.executable, *pytest_argv, *options]
    result = subprocess.run(argv, check=False, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "INTERNALERROR" not in result.stdout + result.stderr
    assert "has more than 30 digits" in result.stderr


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("name: aws-single-az", 'name: ".."', "name: use 1-64 letters"),
        ("name: aws-single-az", "name: latest", "name: baselines, calibrations, latest, lock are names"),
        ("name: aws-single-az", "name: Latest", "are names the harness keeps for itself"),
        ("hostname: ip-10-0-1-10 ", 'hostname: "" ', r"node-a.hostname: String should match pattern '^\S{1,64}$'"),
        ("az: us-east-1a", 'az: "us\\0"', "nodes.node-a.az"),
        ("key_env: HARNESS_SSH_KEY", 'key: "/etc/k\\0ey"', "holds a NUL or an unpaired surrogate"),
        ("instance_type: t3.medium ", 'instance_type: "\\ud800" ', "holds a NUL or an unpaired surrogate"),
    ],
)  # fmt: skip
def test_names_that_are_paths_empty_pins_and_non_text_are_refused(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    assert message in run_cli(_check(tmp_path, _replaced(old, new))).refusal()


# -- the fuzz target ----------------------------------------------------------------------------

_SCALAR = re.compile(r"^(\s*(?:- )?[\w.\"*@-]+: )([^{\[#\n&*]\S*)", re.M)
_HOSTILE = st.one_of(
    st.sampled_from(
        ["9" * 400, "9" * 5000, "-1", "0", ".inf", '"\\0"', '"\\ud800"', '".."', "latest", '""', "1e400",
         "9" * 400 + "GiB", "gp3:" + "9" * 400, "x" * 100_000, "{", "[", "&a", "*a", "!!python/none", "0x" + "f" * 40]
    ),
    st.text(min_size=1, max_size=30).map(lambda t: yaml.safe_dump(t, default_style='"').strip()),
    st.integers().map(str),
    st.floats().map(repr),
    secret_forms().map(lambda t: f'"{t}"'),  # a password where a value goes: never quoted back
)  # fmt: skip


@st.composite
def hostile_inventory(draw: st.DrawFn) -> str:
    """The shipped inventory with up to three scalar values replaced by hostile ones."""
    text = SINGLE_AZ
    spots = [m.span(2) for m in _SCALAR.finditer(text)]
    for start, end in sorted(draw(st.lists(st.sampled_from(spots), min_size=1, max_size=3, unique=True)), reverse=True):
        text = text[:start] + draw(_HOSTILE) + text[end:]
    return text


@FUZZ
@given(text=hostile_inventory())
@surface("inventory (harness YAML)")
def test_fuzz_inventory_values(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    """Whatever value stands anywhere: exit 0 or a refusal, no hang or blow-up, nothing written,
    no password quoted."""
    tmp = tmp_path_factory.mktemp("inventory")
    argv = _check(tmp, text)
    with unchanged(tmp):
        outcome = run_cli(argv).clean()
    no_sentinel([text], [outcome.stdout, outcome.stderr])
