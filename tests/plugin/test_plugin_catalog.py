"""A pytest run refuses an inventory whose instance types or volumes the sizing catalog lacks,
as a usage error before anything touches a node."""

from __future__ import annotations

import pytest

from tests.plugin.test_plugin_collection import INVENTORY


def test_an_unknown_instance_type_stops_the_run_before_it_starts(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('pytest_plugins = ["harness.plugin"]\n')
    bad = INVENTORY.replace("n2: {az: a,", "n2: {az: a, instance_type: t3.mediun, volume: 'gp3:100GiB',", 1)
    pytester.makefile(".yaml", inv=bad)
    pytester.makepyfile(test_scenario="def test_cell(pair):\n    pass\n")
    result = pytester.runpytest("--inventory", "inv.yaml", "--collect-only", "-q", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--inventory inv.yaml: inv.yaml:4: nodes.n2.instance_type: unknown instance type 't3.mediun'; did you mean*"]
    )
    assert "t3.medium" in result.stderr.str()
