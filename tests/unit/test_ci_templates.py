"""The CI templates in examples/ci/, with the network unreachable: actionlint and zizmor (no
finding at its default level) accept the GitHub workflow, check-jsonschema accepts it against
its vendored schema and the GitLab template against GitLab's own schema recorded in
tests/data/ci; every validator rejects a broken copy (so a pass means something).  What makes
them work on a first merge request is checked on the files themselves: the job that reaches
the cluster is behind a protected environment and never runs a fork's code, the GitLab
template's first command (run here by bash) stops a pipeline without its variables with a
clear message and an allowed exit code, JUnit is a test report, and the run's first screen
and baseline comparison go to the job summary."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CI = ROOT / "examples" / "ci"
GITHUB = CI / "github-actions.yml"
GITLAB = CI / "gitlab-ci.yml"
ACTIONLINT_CONFIG = CI / "actionlint.yaml"
GITLAB_SCHEMA = ROOT / "tests" / "data" / "ci" / "gitlab-ci.schema.json"
#: any attempt at the network goes to a closed port on loopback and fails
OFFLINE = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}
#: the exit code the GitLab job ends with when its variables are missing (sysexits' EX_CONFIG)
NOT_CONFIGURED = 78


def _actionlint() -> str:
    found = ROOT / ".tools" / "bin" / "actionlint"
    if found.is_file():
        return str(found)
    on_path = shutil.which("actionlint")
    if on_path is None:
        pytest.fail("actionlint is not installed: scripts/bootstrap builds it into .tools/bin (needs Go)")
    return on_path


def _venv_tool(name: str) -> str:
    exe = Path(sys.executable).with_name(name)
    if not exe.exists():
        pytest.fail(f"{name} is not in the venv: scripts/bootstrap installs requirements.txt, which pins it")
    return str(exe)


def _run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **OFFLINE, **kwargs.pop("env", {})}
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False, **kwargs)


def _check_jsonschema(file: Path, *schema: str) -> subprocess.CompletedProcess[str]:
    return _run([_venv_tool("check-jsonschema"), *schema, str(file)])


def _github_schema(file: Path) -> subprocess.CompletedProcess[str]:
    return _check_jsonschema(file, "--builtin-schema", "vendor.github-workflows")


def _gitlab_schema(file: Path) -> subprocess.CompletedProcess[str]:
    # the data transform reads GitLab's !reference tags; GitLab's patterns are not unicode regexes
    options = ["--schemafile", str(GITLAB_SCHEMA), "--data-transform", "gitlab-ci", "--regex-variant", "nonunicode"]
    return _check_jsonschema(file, *options)


def _actionlint_run(file: Path) -> subprocess.CompletedProcess[str]:
    return _run([_actionlint(), "-no-color", "-config-file", str(ACTIONLINT_CONFIG), str(file)])


def _zizmor(file: Path) -> subprocess.CompletedProcess[str]:
    return _run([_venv_tool("zizmor"), "--offline", "--no-progress", str(file)])


def _broken(tmp_path: Path, file: Path, old: str, new: str) -> Path:
    text = file.read_text()
    assert old in text
    broken = tmp_path / file.name
    broken.write_text(text.replace(old, new))
    return broken


def test_github_workflow_passes_actionlint() -> None:
    result = _actionlint_run(GITHUB)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_rejects_a_broken_workflow(tmp_path: Path) -> None:
    result = _actionlint_run(_broken(tmp_path, GITHUB, "steps.run.outputs.dir", "steps.nosuch.outputs.dir"))
    assert result.returncode == 1 and "nosuch" in result.stdout


def test_github_workflow_has_no_zizmor_finding() -> None:
    result = _zizmor(GITHUB)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No findings to report" in result.stdout


@pytest.mark.parametrize(
    ("old", "new", "audit"),
    [
        # a tag instead of the commit: the action's owner could move it under the gate
        ("actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1", "actions/checkout@v7", "unpinned-uses"),
        # the checkout's token left in .git/config, where the artifact step could pick it up
        ("        with:\n          persist-credentials: false\n", "", "artipacked"),
        # a pull request's branch name pasted into a shell script
        (
            'echo "### Storage gate: not run"',
            'echo "### Storage gate: not run on ${{ github.head_ref }}"',
            "template-injection",
        ),
    ],
)
def test_zizmor_rejects_a_weakened_workflow(tmp_path: Path, old: str, new: str, audit: str) -> None:
    result = _zizmor(_broken(tmp_path, GITHUB, old, new))
    assert result.returncode != 0 and f"[{audit}]" in result.stdout


def test_templates_match_their_schemas_offline() -> None:
    for result in (_github_schema(GITHUB), _gitlab_schema(GITLAB)):
        assert result.returncode == 0, result.stdout + result.stderr
        assert "validation done" in result.stdout


def test_schemas_reject_a_broken_template(tmp_path: Path) -> None:
    assert _github_schema(_broken(tmp_path, GITHUB, "timeout-minutes: 180", "timeout-minutes: soon")).returncode == 1
    assert _gitlab_schema(_broken(tmp_path, GITLAB, "when: always", "when: sometimes")).returncode == 1
    assert _gitlab_schema(_broken(tmp_path, GITLAB, "- 78", "- seventy-eight")).returncode == 1


def _yaml(file: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(file.read_text())
    return data


def test_github_cluster_job_is_protected_and_never_runs_a_fork() -> None:
    workflow = _yaml(GITHUB)
    assert workflow["permissions"] == {}  # every job says what it needs
    jobs = workflow["jobs"]
    self_hosted = [job for job in jobs.values() if "self-hosted" in job["runs-on"]]
    assert [job["environment"] for job in self_hosted] == ["storage-cluster"]
    (gate,) = self_hosted
    assert gate["permissions"] == {"contents": "read"}
    fork_guard = "github.event.pull_request.head.repo.full_name == github.repository"
    assert fork_guard in gate["if"] and "github.event_name != 'pull_request'" in gate["if"]
    # the other job runs exactly for the forks, on GitHub's runners, and says why
    (fork,) = [job for job in jobs.values() if job is not gate]
    assert fork["runs-on"] == "ubuntu-latest" and fork_guard.replace("==", "!=") in fork["if"]
    assert "GITHUB_STEP_SUMMARY" in fork["steps"][0]["run"]
    # the secrets are read by the job behind the environment, and nowhere else
    assert GITHUB.read_text().count("secrets.") == 2
    assert all("secrets." not in str(job) for job in jobs.values() if job is not gate)


def test_github_actions_are_pinned_to_commits() -> None:
    uses = [step["uses"] for job in _yaml(GITHUB)["jobs"].values() for step in job["steps"] if "uses" in step]
    assert len(uses) == 3
    assert all(re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", u) for u in uses), uses


def test_github_publishes_junit_as_a_test_report_and_the_first_screen_in_the_summary() -> None:
    steps = {step.get("name", ""): step for step in _yaml(GITHUB)["jobs"]["gate"]["steps"]}
    report = steps["JUnit test report"]
    assert report["uses"].startswith("mikepenz/action-junit-report@")
    assert report["with"]["report_paths"].endswith("/junit.xml") and report["with"]["job_summary"] is True
    assert report["with"]["annotate_only"] is True  # no check run: the job needs no write permission
    summary = steps["First screen and baseline comparison to the job summary"]["run"]
    assert "for part in summary.md baseline-compare.md" in summary and '>> "$GITHUB_STEP_SUMMARY"' in summary


def _gitlab_job() -> dict[str, Any]:
    job: dict[str, Any] = _yaml(GITLAB)["storage-gate"]
    return job


def test_gitlab_gate_is_a_protected_environment_and_manual_in_a_merge_request() -> None:
    job = _gitlab_job()
    assert job["environment"]["name"] == "storage-cluster" and job["tags"] == ["storage-gate"]
    rules = job["rules"]
    # first: a pipeline in any other project (a fork's own) never takes the job
    assert rules[0] == {"if": "$CI_PROJECT_PATH != $GATE_PROJECT", "when": "never"}
    assert {"if": '$CI_PIPELINE_SOURCE == "merge_request_event"', "when": "manual"} in rules
    assert job["allow_failure"] == {"exit_codes": [NOT_CONFIGURED]}  # a blocking manual job, but for 78
    assert "before_script" not in job  # nothing runs before the variables are checked
    assert job["artifacts"]["reports"]["junit"] == "gate-report/junit.xml"
    assert job["artifacts"]["when"] == "always"
    assert "for part in summary.md baseline-compare.md" in job["after_script"][1]


def _variable_check(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The GitLab job's first command, run by bash as the shell executor runs it."""
    first = _gitlab_job()["script"][0]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    return subprocess.run(
        ["bash", "-e", "-c", first], env={**clean, **env}, cwd=tmp_path, capture_output=True, text=True, check=False
    )


def test_gitlab_pipeline_without_its_variables_stops_first_saying_why(tmp_path: Path) -> None:
    result = _variable_check(tmp_path, {})
    assert result.returncode == NOT_CONFIGURED
    assert result.stdout.startswith(
        "storage-gate: not run: this pipeline has no File variable HARNESS_SSH_KEY HARNESS_KNOWN_HOSTS."
    )
    assert "environment scope storage-cluster" in result.stdout and "'Protect variable' unchecked" in result.stdout
    key = tmp_path / "key"
    key.write_text("k")
    # a variable defined as a plain value, not a File, is missing too
    result = _variable_check(tmp_path, {"HARNESS_SSH_KEY": str(key), "HARNESS_KNOWN_HOSTS": "ssh-ed25519 AAAA"})
    assert result.returncode == NOT_CONFIGURED and "File variable HARNESS_KNOWN_HOSTS." in result.stdout


def test_gitlab_pipeline_with_its_file_variables_goes_on(tmp_path: Path) -> None:
    files = {}
    for name in ("HARNESS_SSH_KEY", "HARNESS_KNOWN_HOSTS"):
        (tmp_path / name).write_text("x")
        files[name] = str(tmp_path / name)
    result = _variable_check(tmp_path, files)
    assert (result.returncode, result.stdout) == (0, "")


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
        assert "junit.xml" in text and "reports/latest" in text and "summary.md" in text
