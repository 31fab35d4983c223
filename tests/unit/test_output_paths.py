"""``-o`` and ``--reports`` that cannot be written fail in one line: a missing
directory, a file where a directory should be, a directory, a FIFO, a read-only and a full file
system.  The last two mount a small tmpfs in a private mount namespace (``unshare -m``, as root:
the harness's CI runs as root on Debian 12); elsewhere they are skipped, saying why."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ROOT / "inventories/ansible/hosts.yaml"
MAPPING = ROOT / "inventories/ansible/mapping.yaml"


def _convert_to(output: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code = main(["inventory", "from-ansible", str(HOSTS), "--mapping", str(MAPPING), "-o", str(output), *extra])
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("note: ")]
    assert len(err) == 1, err
    return code, err[0]


def test_a_missing_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "nodir" / "inv.yaml"
    assert _convert_to(out, capsys) == (2, f"error: -o {out}: the directory {tmp_path / 'nodir'} does not exist")


def test_a_file_where_the_directory_should_be(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "f").write_text("x")
    out = tmp_path / "f" / "inv.yaml"
    assert _convert_to(out, capsys) == (2, f"error: -o {out}: {tmp_path / 'f'} is not a directory")


def test_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _convert_to(tmp_path, capsys) == (2, f"error: -o {tmp_path}: is a directory; name the file to write")


def test_a_fifo_is_never_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As root, the rename that replaces a file would replace a device node (/dev/full) itself."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code, line = _convert_to(fifo, capsys, "--force")
    assert (code, line) == (
        2,
        f"error: -o {fifo}: is not a regular file (a device, FIFO or socket); name a file to write",
    )
    assert fifo.is_fifo()


def _in_small_tmpfs(tmp_path: Path, mount_options: str, then: str) -> subprocess.CompletedProcess[str]:
    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("needs root and unshare(1) to mount a private tmpfs")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    harness = f"{sys.executable} -c 'import sys; from harness.cli import main; sys.exit(main(sys.argv[1:]))'"
    script = f"mount -t tmpfs -o {mount_options} none {mnt} && {then.format(mnt=mnt, harness=harness)}"
    result = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], check=False, cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    if "mount:" in result.stderr and "permission denied" in result.stderr.lower():
        pytest.skip(f"cannot mount a tmpfs here: {result.stderr.strip()}")
    return result


def test_a_read_only_file_system(tmp_path: Path) -> None:
    then = f"{{harness}} inventory from-ansible {HOSTS} --mapping {MAPPING} -o {{mnt}}/inv.yaml"
    result = _in_small_tmpfs(tmp_path, "size=64k,ro", then)
    assert result.returncode == 2, result.stderr
    assert f"error: -o {tmp_path}/mnt/inv.yaml: cannot write in {tmp_path}/mnt (read-only or no permission)" in (
        result.stderr
    )
    assert "Traceback" not in result.stderr


def test_a_full_file_system(tmp_path: Path) -> None:
    then = (
        "head -c 65536 /dev/zero > {mnt}/fill 2>/dev/null; "
        f"{{harness}} inventory from-ansible {HOSTS} --mapping {MAPPING} -o {{mnt}}/inv.yaml; echo rc=$?; ls -a {{mnt}}"
    )
    result = _in_small_tmpfs(tmp_path, "size=64k", then)
    assert f"error: -o {tmp_path}/mnt/inv.yaml: cannot write it: No space left on device" in result.stderr
    assert "rc=2" in result.stdout and "Traceback" not in result.stderr
    assert result.stdout.split()[-3:] == [".", "..", "fill"]  # no half-written file, no temporary left


def test_reports_root_that_is_a_file_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "reports").write_text("x")
    result = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "tests/unit/test_units.py"),
            *("--reports", str(tmp_path / "reports"), "--inventory", str(ROOT / "inventories/single_az.yaml")),
        ],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 4, result.stdout + result.stderr
    assert f"ERROR: --reports: {tmp_path / 'reports'}: not a directory" in result.stderr


@pytest.mark.parametrize(("options", "error"), [("size=64k,ro", "Read-only file system"), ("size=4k", "No space left")])
def test_baseline_save_on_a_read_only_or_full_reports_root(tmp_path: Path, options: str, error: str) -> None:
    run = ROOT / "tests/data/runs/20261121-110501-f674"  # a recorded lab run (tests/data/runs/README.md)
    then = (
        "head -c 4096 /dev/zero > {mnt}/fill 2>/dev/null; "
        f"{{harness}} baseline save probe {run} --reports {{mnt}} --inventory-name lab; echo rc=$?; "
        "find {mnt} -mindepth 1 | sort"
    )
    result = _in_small_tmpfs(tmp_path, options, then)
    assert f"error: {tmp_path}/mnt/baselines: cannot save baseline 'probe' there: {error}" in result.stderr
    assert "rc=2" in result.stdout and "Traceback" not in result.stderr
    assert ".new" not in result.stdout  # no half-written baseline left behind
