"""No file can crash or hang the harness.

Every entry point that reads a user's YAML (``harness inventory check``, ``harness inventory
from-ansible`` for the Ansible inventory and for the mapping, ``harness sizing --catalog``,
``pytest --inventory``) and the baselines (``harness baseline show``) answers a hostile file
with the project's usage error: exit code 2 (4, pytest's usage error, for ``pytest``), one line
that starts with ``error:``, no traceback.  Each class the issue lists is run once as a real
subprocess under a 10 s timeout (a guard against hangs, not a performance figure); hypothesis
then generates more files of the loader's classes and runs them in-process under a 10 s alarm.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from tests.unit.hostile_files import CATALOG_ONLY, CLASSES, hostile_yaml, write_bytes

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ROOT / "inventories/ansible/hosts.yaml"
MAPPING = ROOT / "inventories/ansible/mapping.yaml"
BASELINE = ROOT / "reports/baselines/lab/lab-ref"
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


class _NoAnswer(Exception):
    pass


@contextlib.contextmanager
def _alarm(seconds: int) -> Iterator[None]:
    def expired(signum: int, frame: FrameType | None) -> None:
        raise _NoAnswer(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _in_process(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with _alarm(GUARD_S), contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's parser.error (the sizing command's errors)
            code = int(exc.code or 0)
    return code, err.getvalue()


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


def _baseline_copy(reports: Path) -> Path:
    target = reports / "baselines/lab/lab-ref"
    shutil.copytree(BASELINE, target)
    return target


_BASELINE_FILES: dict[str, tuple[str, Callable[[Path], None]]] = {
    "metadata nested 100,000 deep": ("baseline.json", write_bytes(b"[" * 100_000 + b"]" * 100_000)),
    "metadata in Latin-1": ("baseline.json", write_bytes('{"name": "caf\xe9"}'.encode("latin-1"))),
    "metadata 60 MB": ("baseline.json", CLASSES["60 MB file"]),
    "samples nested 100,000 deep": ("samples.ndjson", write_bytes(b"[" * 100_000 + b"]" * 100_000 + b"\n")),
    "samples from /dev/zero": ("samples.ndjson", CLASSES["/dev/zero"]),
    "samples a FIFO": ("samples.ndjson", CLASSES["FIFO"]),
}


@pytest.mark.parametrize("kind", list(_BASELINE_FILES))
def test_hostile_baseline_files_are_refused_in_one_line(tmp_path: Path, kind: str) -> None:
    name, write = _BASELINE_FILES[kind]
    baseline = _baseline_copy(tmp_path / "reports")
    (baseline / name).unlink()
    write(baseline / name)
    argv = ["baseline", "show", "lab-ref", "--reports", str(tmp_path / "reports")]
    result = _cli(argv)
    assert result.returncode == 2, result.stderr
    _one_clear_line(result.stderr, argv)


def test_the_baseline_copy_itself_is_readable(tmp_path: Path) -> None:
    """The control of the test above: untouched, the copied baseline shows (exit 0)."""
    _baseline_copy(tmp_path / "reports")
    result = _cli(["baseline", "show", "lab-ref", "--reports", str(tmp_path / "reports")])
    assert result.returncode == 0, result.stderr
    assert json.loads((BASELINE / "baseline.json").read_text())["name"] == "lab-ref"


# -- generated -------------------------------------------------------------------------------


@settings(max_examples=40)
@given(entry=st.sampled_from(list(ENTRY_POINTS)), data=hostile_yaml())
def test_generated_hostile_files_are_refused_by_the_loader(
    tmp_path_factory: pytest.TempPathFactory, entry: str, data: bytes
) -> None:
    hostile = tmp_path_factory.mktemp("hostile") / "file.yaml"
    hostile.write_bytes(data)
    argv = ENTRY_POINTS[entry](hostile)
    code, stderr = _in_process(argv)
    line = _one_clear_line(stderr, argv)
    assert code == 2, stderr
    assert line.split("error: ", 1)[1].startswith(f"{hostile}:")  # file:line:column, from the loader


@settings(max_examples=40)
@given(entry=st.sampled_from(list(ENTRY_POINTS)), data=st.binary(max_size=512))
def test_arbitrary_bytes_never_crash(tmp_path_factory: pytest.TempPathFactory, entry: str, data: bytes) -> None:
    """Any bytes at all: a clear error (schema errors may take several lines), never a traceback."""
    hostile = tmp_path_factory.mktemp("bytes") / "file.yaml"
    hostile.write_bytes(data)
    code, stderr = _in_process(ENTRY_POINTS[entry](hostile))
    assert code == 2, stderr
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    assert stderr.startswith(("error: ", "harness sizing: error: ")), stderr


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
