"""--calibration-max-age and --recalibrate: an age that is not one is a usage error."""

from __future__ import annotations

import pytest

from tests.plugin.test_plugin_options import project

__all__ = ["project"]


@pytest.mark.parametrize("value", ["soon", "-1d", "inf", "7w"])
def test_a_calibration_age_that_is_not_one_is_a_usage_error(project: pytest.Pytester, value: str) -> None:
    result = project.runpytest("--inventory", "inv.yaml", "--collect-only", "-q", f"--calibration-max-age={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*argument --calibration-max-age: calibration max age '{value}'*"])


@pytest.mark.parametrize("args", [["--calibration-max-age=12h"], ["--calibration-max-age=0"], ["--recalibrate"]])
def test_a_calibration_age_or_recalibrate_is_taken(project: pytest.Pytester, args: list[str]) -> None:
    result = project.runpytest("--inventory", "inv.yaml", "--collect-only", "-q", *args)
    assert result.ret == pytest.ExitCode.OK
