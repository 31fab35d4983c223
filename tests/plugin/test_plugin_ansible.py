"""``--inventory`` takes an Ansible mapping file directly (converted in memory), collect-only."""

from __future__ import annotations

from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "inventories" / "ansible"

SCENARIO = """\
def test_cell(pair):
    pass
"""


def project(pytester: pytest.Pytester, mapping: str) -> None:
    # Copied in rather than named by absolute path: pytest picks its rootdir from path-like
    # arguments, and the repository's own conftest must stay out of the inner session.
    pytester.makeconftest('pytest_plugins = ["harness.plugin"]\n')
    pytester.makepyfile(test_scenario=SCENARIO)
    (Path(pytester.path) / "hosts.yaml").write_text((EXAMPLE / "hosts.yaml").read_text())
    (Path(pytester.path) / "mapping.yaml").write_text(mapping)


def test_a_mapping_file_parametrizes_the_pairs_it_describes(pytester: pytest.Pytester) -> None:
    project(pytester, (EXAMPLE / "mapping.yaml").read_text())
    result = pytester.runpytest("--inventory", "mapping.yaml", "--collect-only", "-q", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        ["test_scenario.py::test_cell[t2-single-az]", "test_scenario.py::test_cell[t3-multi-az]"]
    )


def test_a_broken_mapping_is_a_usage_error(pytester: pytest.Pytester) -> None:
    project(pytester, (EXAMPLE / "mapping.yaml").read_text().replace("group: drbd_cross_az", "group: drbd"))
    result = pytester.runpytest("--inventory", "mapping.yaml", "--collect-only", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*mapping.yaml (converted from hosts.yaml): pair 't3-multi-az': group 'drbd' has 4 hosts*exactly two*"]
    )
