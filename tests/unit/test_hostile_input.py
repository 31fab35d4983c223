"""No file can crash or hang the harness.

Every entry point that reads a user's YAML (``harness inventory check``, ``harness inventory
from-ansible`` for the Ansible inventory and for the mapping, ``harness sizing --catalog``,
``pytest --inventory``) answers a hostile file with the project's usage error: exit code 2 (4,
pytest's usage error, for ``pytest``), one line that starts with ``error:``, no traceback.  Each
class the issue lists is run once as a real subprocess under a 10 s timeout (a guard against
hangs, not a performance figure) and in-process under the guards of tests/unit/hostile_inputs.py;
the fuzz targets generate more files of the loader's classes, and any bytes, each with a
password in it, and count what they find (baselines: tests/unit/test_hostile_baseline.py).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.fuzz_tally import surface
from tests.unit.hostile_files import CATALOG_ONLY, CLASSES, hostile_yaml
from tests.unit.hostile_inputs import fuzz, no_sentinel, run_cli, secret_forms, unchanged

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ROOT / "inventories/ansible/hosts.yaml"
MAPPING = ROOT / "inventories/ansible/mapping.yaml"
GUARD_S = 10

Argv = Callable[[Path], list[str]]

ENTRY_POINTS: dict[str, Argv] = {
    "inventory check": lambda f: ["inventory", "check", str(f)],
    "from-ansible, the Ansible inventory": lambda f: ["inventory", "from-ansible", str(f), "--mapping", str(MAPPING)],
    "from-ansible, the mapping": lambda f: ["inventory", "from-ansible", str(HOSTS), "--mapping", str(f)],
    "sizing --catalog": lambda f: [
        "sizing",
        "--instance-type",
        "t2.small",
        "--workload",
        "randwrite:4k",
        "--catalog",
        str(f),
    ],
}


def _cli(argv: list[str]) -> subprocess.CompletedProcess[str]:
    code = "import sys; from harness.cli import main; sys.exit(main(sys.argv[1:]))"
    try:
        return subprocess.run(
            [sys.executable, "-c", code, *argv], check=False, cwd=ROOT, capture_output=True, text=True, timeout=GUARD_S
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"harness {' '.join(argv)}: no answer within {GUARD_S} s")


def _one_clear_line(stderr: str, argv: list[str]) -> str:
    lines = [line for line in stderr.splitlines() if line.strip() and not line.startswith("note: ")]
    assert len(lines) == 1, f"harness {' '.join(argv)}: expected one error line, got:\n{stderr}"
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    assert lines[0].startswith(("error: ", "harness sizing: error: ")), lines[0]
    return lines[0]


def _in_process(argv: list[str]) -> tuple[int, str]:
    outcome = run_cli(argv)
    return outcome.code, outcome.stderr


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("kind", list(CLASSES))
def test_each_class_is_refused_in_one_line(tmp_path: Path, kind: str, entry: str) -> None:
    hostile = tmp_path / "hostile.yaml"
    CLASSES[kind](hostile)
    argv = ENTRY_POINTS[entry](hostile)
    code, stderr = _in_process(argv)
    line = _one_clear_line(stderr, argv)
    assert code == 2, stderr
    assert str(hostile) in line  # the message names the file (and, from the loader, line:column)


@pytest.mark.parametrize("kind", list(CLASSES))
def test_each_class_from_the_real_command(tmp_path: Path, kind: str) -> None:
    """The same through a real process: exit status, stderr and the 10 s guard as a user sees them."""
    hostile = tmp_path / "hostile.yaml"
    CLASSES[kind](hostile)
    argv = ENTRY_POINTS["inventory check"](hostile)
    result = _cli(argv)
    assert result.returncode == 2, result.stderr
    assert str(hostile) in _one_clear_line(result.stderr, argv)


@pytest.mark.parametrize("kind", list(CATALOG_ONLY))
def test_non_finite_catalog_figures_are_refused_where_they_stand(tmp_path: Path, kind: str) -> None:
    hostile = tmp_path / "catalog.yaml"
    CATALOG_ONLY[kind](hostile)
    argv = ENTRY_POINTS["sizing --catalog"](hostile)
    result = _cli(argv)
    line = _one_clear_line(result.stderr, argv)
    assert result.returncode == 2
    assert "is not a finite number" in line and f"{hostile}:" in line  # not a ZeroDivisionError in the model


@pytest.mark.parametrize("kind", ["billion laughs", "recursive merge key", "latin-1", "directory"])
def test_pytest_inventory_is_a_usage_error(tmp_path: Path, kind: str) -> None:
    hostile = tmp_path / "inventory.yaml"
    CLASSES[kind](hostile)
    argv = [
        *("-m", "pytest", "-p", "no:cacheprovider", "-q", "tests/unit/test_units.py"),
        *("--inventory", str(hostile), "--reports", str(tmp_path / "reports")),
    ]
    try:
        result = subprocess.run(
            [sys.executable, *argv], check=False, cwd=ROOT, capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"pytest --inventory ({kind}): no answer within 60 s")
    assert result.returncode == 4, result.stdout + result.stderr  # pytest's usage error
    assert f"ERROR: --inventory {hostile}: {hostile}" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


# -- generated -------------------------------------------------------------------------------


@fuzz(40)
@given(entry=st.sampled_from(list(ENTRY_POINTS)), data=hostile_yaml(), form=secret_forms())
@surface("YAML entry points: hostile YAML")
def test_generated_hostile_files_are_refused_by_the_loader(
    tmp_path_factory: pytest.TempPathFactory, entry: str, data: bytes, form: str
) -> None:
    """A file of a class the loader refuses, after a line holding a password: refused naming
    file:line:column, nothing written, the password not quoted."""
    tmp = tmp_path_factory.mktemp("hostile")
    hostile = tmp / "file.yaml"
    hostile.write_bytes(f"x_url: {form}\n".encode() + data)
    argv = ENTRY_POINTS[entry](hostile)
    with unchanged(tmp):
        outcome = run_cli(argv).clean((2,))
    line = _one_clear_line(outcome.stderr, argv)
    assert line.split("error: ", 1)[1].startswith(f"{hostile}:")  # file:line:column, from the loader
    no_sentinel([form], [outcome.stdout, outcome.stderr])


_BYTES = st.binary(max_size=512) | st.tuples(st.binary(max_size=256), secret_forms(), st.binary(max_size=256)).map(
    lambda parts: parts[0] + parts[1].encode() + parts[2]
)


@fuzz(40)
@given(entry=st.sampled_from(list(ENTRY_POINTS)), data=_BYTES)
@surface("YAML entry points: arbitrary bytes")
def test_arbitrary_bytes_never_crash(tmp_path_factory: pytest.TempPathFactory, entry: str, data: bytes) -> None:
    """Any bytes at all, a password among them: a clear error (schema errors may take several
    lines), never a traceback; nothing written, the password not quoted."""
    tmp = tmp_path_factory.mktemp("bytes")
    hostile = tmp / "file.yaml"
    hostile.write_bytes(data)
    with unchanged(tmp):
        outcome = run_cli(ENTRY_POINTS[entry](hostile)).clean((2,))
    assert outcome.stderr.startswith(("error: ", "harness sizing: error: ")), outcome.stderr
    no_sentinel([data.decode(errors="replace")], [outcome.stdout, outcome.stderr])


def test_a_key_file_under_an_unknown_users_home_is_refused(tmp_path: Path) -> None:
    """``~nosuchuser/...`` ended in Path.expanduser's RuntimeError."""
    hosts = tmp_path / "hosts.yaml"
    text = HOSTS.read_text(encoding="utf-8")
    assert "ansible_ssh_private_key_file: /etc/harness/id_ed25519" in text
    hosts.write_text(text.replace("/etc/harness/id_ed25519", "~nosuchuser/.ssh/id_ed25519"), encoding="utf-8")
    argv = ["inventory", "from-ansible", str(hosts), "--mapping", str(MAPPING)]
    code, stderr = _in_process(argv)
    assert code == 2
    assert _one_clear_line(stderr, argv).endswith(
        "'~nosuchuser/.ssh/id_ed25519': no such user's home directory to expand"
    )
