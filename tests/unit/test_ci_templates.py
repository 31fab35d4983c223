"""The CI templates in examples/ci/: actionlint and check-jsonschema's vendored GitHub and
GitLab schemas accept them, with the network unreachable; both validators reject a broken
copy (so a pass means something); and the pytest options the templates use exist."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CI = ROOT / "examples" / "ci"
GITHUB = CI / "github-actions.yml"
GITLAB = CI / "gitlab-ci.yml"
ACTIONLINT_CONFIG = CI / "actionlint.yaml"
#: any attempt at the network goes to a closed port on loopback and fails
OFFLINE = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}


def _actionlint() -> str:
    found = ROOT / ".tools" / "bin" / "actionlint"
    if found.is_file():
        return str(found)
    on_path = shutil.which("actionlint")
    if on_path is None:
        pytest.fail("actionlint is not installed: scripts/bootstrap builds it into .tools/bin (needs Go)")
    return on_path


def _check_jsonschema(schema: str, file: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("check-jsonschema")
    return subprocess.run(
        [str(exe), "--builtin-schema", schema, str(file)],
        capture_output=True,
        text=True,
        env={**os.environ, **OFFLINE},
        timeout=120,
        check=False,
    )


def _actionlint_run(file: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_actionlint(), "-no-color", "-config-file", str(ACTIONLINT_CONFIG), str(file)],
        capture_output=True,
        text=True,
        env={**os.environ, **OFFLINE},
        timeout=120,
        check=False,
    )


def test_github_workflow_passes_actionlint() -> None:
    result = _actionlint_run(GITHUB)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_rejects_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(GITHUB.read_text().replace("steps.run.outputs.dir", "steps.nosuch.outputs.dir"))
    result = _actionlint_run(broken)
    assert result.returncode == 1 and "nosuch" in result.stdout


@pytest.mark.parametrize(("schema", "file"), [("vendor.github-workflows", GITHUB), ("vendor.gitlab-ci", GITLAB)])
def test_templates_match_the_vendored_schemas_offline(schema: str, file: Path) -> None:
    result = _check_jsonschema(schema, file)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "validation done" in result.stdout


@pytest.mark.parametrize(
    ("schema", "file", "old", "new"),
    [
        ("vendor.github-workflows", GITHUB, "timeout-minutes: 180", "timeout-minutes: soon"),
        ("vendor.gitlab-ci", GITLAB, "when: always", "when: sometimes"),
    ],
)
def test_schemas_reject_a_broken_template(schema: str, file: Path, old: str, new: str, tmp_path: Path) -> None:
    broken = tmp_path / file.name
    text = file.read_text()
    assert old in text
    broken.write_text(text.replace(old, new))
    assert _check_jsonschema(schema, broken).returncode == 1


def test_the_templates_use_options_the_harness_has() -> None:
    help_text = subprocess.run(
        [sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=True,
    ).stdout
    for template in (GITHUB, GITLAB):
        text = template.read_text()
        lines = text[text.index("pytest scenarios/") :].splitlines()
        # the command's first line, then its folded continuation lines (each starts with --)
        command = [lines[0]] + [line for line in lines[1:] if line.strip().startswith("--")]
        options = set(re.findall(r"(--[a-z][a-z-]+)", " ".join(command)))
        assert {"--inventory", "--baseline-compare"} <= options
        for option in options:
            assert option in help_text, f"{template.name}: pytest has no option {option}"
        # what is published is what a run writes
        assert "junit.xml" in text and "reports/latest" in text
