"""The pytest plugin, tested as users meet it: inner pytest sessions (pytester), no nodes.

These use inventories without a `lab:` section and only collect, so no SSH connection is
ever opened; running cells is covered by the lab integration tests.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

INVENTORY = """\
name: plugin-test
nodes:
  n1: {az: a, ssh: {host: 192.0.2.1, key: /k, known_hosts: /kh}, replication: {ip: 10.0.0.1, iface: eth1}}
  n2: {az: a, ssh: {host: 192.0.2.2, key: /k, known_hosts: /kh}, replication: {ip: 10.0.0.2, iface: eth1}}
  n3: {az: b, ssh: {host: 192.0.2.3, key: /k, known_hosts: /kh}, replication: {ip: 10.0.1.3, iface: eth1}}
  n4: {az: b, ssh: {host: 192.0.2.4, key: /k, known_hosts: /kh}, replication: {ip: 10.0.1.4, iface: eth1}}
pairs:
  p-one: {primary: n1, secondary: n2, resource: r1, device: /dev/drbd1}
  p-two: {primary: n1, secondary: n3, resource: r2, device: /dev/drbd2}
  p-three: {primary: n4, secondary: n3, resource: r3, device: /dev/drbd3}
  p-four: {primary: n2, secondary: n4, resource: r4, device: /dev/drbd4}
network_profiles:
  slow: {delay: 5ms}
"""

SCENARIO = """\
import pytest
from harness.fio.workloads import write_job

W = [write_job("randwrite", 4096, numjobs=8)]

@pytest.mark.parametrize("workload", W, ids=[w.id() for w in W])
def test_cell(pair, workload):
    pass

def test_profile(pair, network_profile):
    pass

def test_measured(pair, measure):
    pass
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest('pytest_plugins = ["harness.plugin"]\n')
    pytester.makefile(".yaml", inv=INVENTORY)
    pytester.makepyfile(test_scenario=SCENARIO)
    return pytester


def test_ids_put_the_pair_first(project: pytest.Pytester) -> None:
    result = project.runpytest("--inventory", "inv.yaml", "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "test_scenario.py::test_cell[p-one-randwrite-4k-nj8-qd1]",
            "test_scenario.py::test_cell[p-two-randwrite-4k-nj8-qd1]",
            "test_scenario.py::test_profile[p-one-slow]",
        ]
    )
    assert result.ret == 0


def test_pairs_sharing_nodes_share_an_xdist_group(project: pytest.Pytester) -> None:
    project.makeconftest(
        textwrap.dedent(
            """
            pytest_plugins = ["harness.plugin"]
            import pytest

            @pytest.hookimpl(trylast=True)
            def pytest_collection_modifyitems(items):
                for item in items:
                    mark = item.get_closest_marker("xdist_group")
                    print("GROUP", item.callspec.params["pair"], mark.kwargs["name"] if mark else None)
            """
        )
    )
    result = project.runpytest("--inventory", "inv.yaml", "--collect-only", "-q", "-s")
    groups = {line.split()[1]: line.split()[2] for line in result.outlines if line.startswith("GROUP")}
    # every pair here is connected to every other through shared nodes: one group
    assert set(groups) == {"p-one", "p-two", "p-three", "p-four"}
    assert len(set(groups.values())) == 1


def test_disjoint_pairs_get_their_own_groups(project: pytest.Pytester) -> None:
    p_three = "  p-three: {primary: n4, secondary: n3, resource: r3, device: /dev/drbd3}\n"
    inv = INVENTORY.split("  p-two", maxsplit=1)[0] + p_three
    project.makefile(".yaml", inv2=inv)
    project.makeconftest(
        textwrap.dedent(
            """
            pytest_plugins = ["harness.plugin"]
            import pytest

            @pytest.hookimpl(trylast=True)
            def pytest_collection_modifyitems(items):
                for item in items:
                    mark = item.get_closest_marker("xdist_group")
                    print("GROUP", item.callspec.params["pair"], mark.kwargs["name"])
            """
        )
    )
    result = project.runpytest("--inventory", "inv2.yaml", "--collect-only", "-q", "-s")
    groups = {line.split()[1]: line.split()[2] for line in result.outlines if line.startswith("GROUP")}
    assert groups["p-one"] != groups["p-three"]


def test_bad_inventory_is_a_usage_error_naming_file_and_line(project: pytest.Pytester) -> None:
    project.makefile(".yaml", bad=INVENTORY.replace("device: /dev/drbd1", "device: /dev/vda"))
    result = project.runpytest("--inventory", "bad.yaml", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*bad.yaml:8: pairs.p-one.device: String should match pattern*"])


def test_unknown_profile_choice(project: pytest.Pytester) -> None:
    result = project.runpytest("--inventory", "inv.yaml", "--profile", "huge", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*invalid choice: 'huge'*"])


def test_collect_only_creates_no_report_dir(project: pytest.Pytester) -> None:
    project.runpytest("--inventory", "inv.yaml", "--collect-only", "-q")
    assert not (Path(project.path) / "reports").exists()


def test_repeat_parametrizes_measured_cells_only(project: pytest.Pytester) -> None:
    result = project.runpytest("--inventory", "inv.yaml", "--repeat", "2", "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        ["test_scenario.py::test_measured[p-one-r0]", "test_scenario.py::test_measured[p-one-r1]"]
    )
    assert not any("test_cell" in line and "-r1]" in line for line in result.outlines)
