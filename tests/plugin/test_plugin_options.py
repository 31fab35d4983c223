"""Numeric pytest options are refused when parsed: ``--deadman-grace inf`` would
render ``sleep inf`` on the nodes, a dead-man switch that never fires."""

from __future__ import annotations

import pytest

from tests.plugin.test_plugin_collection import INVENTORY


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest('pytest_plugins = ["harness.plugin"]\n')
    pytester.makefile(".yaml", inv=INVENTORY)
    pytester.makepyfile(test_scenario="def test_cell(pair):\n    pass\n")
    return pytester


@pytest.mark.parametrize("value", ["inf", "nan", "-5", "0", "86400", "soon"])
def test_a_deadman_grace_that_never_or_instantly_fires_is_a_usage_error(project: pytest.Pytester, value: str) -> None:
    result = project.runpytest("--inventory", "inv.yaml", "--collect-only", "-q", f"--deadman-grace={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*argument --deadman-grace: must be a finite number of seconds in (0, 3600], got '{value}'*"]
    )


def test_a_sensible_deadman_grace_is_taken(project: pytest.Pytester) -> None:
    result = project.runpytest("--inventory", "inv.yaml", "--collect-only", "-q", "--deadman-grace=30")
    assert result.ret == pytest.ExitCode.OK


@pytest.mark.parametrize("value", ["0", "-3", "1.5", "inf", "1000"])
def test_a_repeat_count_that_measures_nothing_or_forever_is_a_usage_error(project: pytest.Pytester, value: str) -> None:
    result = project.runpytest("--inventory", "inv.yaml", "--collect-only", "-q", f"--repeat={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*argument --repeat: must be a whole number of repeats in [[]1, 100], got '{value}'*"]
    )


def test_a_run_without_xdist_loads_the_plugin(project: pytest.Pytester) -> None:
    # the plugin implements xdist's controller hook; pytest must not refuse it when xdist is off
    result = project.runpytest_subprocess("-p", "no:xdist", "--inventory", "inv.yaml", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK, result.stderr.str()
    result.stdout.fnmatch_lines(["*test_cell*"])


def test_repeat_auto_collects_each_cell_once(project: pytest.Pytester) -> None:
    # how many repeats a cell needs is known only while it runs: one item, repeated by `measure`
    project.makepyfile(test_scenario="def test_cell(pair, harness_repeat):\n    pass\n")
    result = project.runpytest("--inventory", "inv.yaml", "--collect-only", "-q", "--repeat=auto")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["test_scenario.py::test_cell[[]p-one[]]"])
    assert "-r0]" not in result.stdout.str()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        # 5 repeats cover the median with 93.75 % at best: a 95 % order-statistic interval needs 6
        (["--repeat-cap=5", "--interval=order"], "cap 5 < 6 repeats, the fewest with which a 95% order-statistic"),
        (["--repeat-cap=2"], "cap 2 < 3 repeats, the fewest the lognormal interval of the median is judged on"),
    ],
)
def test_repeat_auto_with_a_cap_too_low_for_its_interval_is_a_usage_error(
    project: pytest.Pytester, options: list[str], message: str
) -> None:
    result = project.runpytest("--inventory", "inv.yaml", "--collect-only", "-q", "--repeat=auto", *options)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--repeat auto: {message}*"])


def test_repeat_auto_takes_five_repeats_on_the_lognormal_interval_and_no_other_interval(
    project: pytest.Pytester,
) -> None:
    ok = project.runpytest("--inventory", "inv.yaml", "--collect-only", "-q", "--repeat=auto", "--repeat-cap=5")
    assert ok.ret == pytest.ExitCode.OK
    bad = project.runpytest("--inventory", "inv.yaml", "--collect-only", "-q", "--repeat=auto", "--interval=normal")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*argument --interval: invalid choice: 'normal' (choose from*lognormal*order*"])


@pytest.mark.parametrize(("option", "value"), [("--confidence", "1"), ("--confidence", "95"), ("--tolerance", "0")])
def test_a_confidence_or_tolerance_out_of_range_is_refused(project: pytest.Pytester, option: str, value: str) -> None:
    result = project.runpytest("--inventory", "inv.yaml", "--collect-only", "-q", "--repeat=auto", f"{option}={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*argument {option}: must be a finite number of (a fraction*got '{value}'*"])
