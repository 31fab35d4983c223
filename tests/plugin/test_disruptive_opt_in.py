"""Through pytest itself: ``--allow-disruptive`` and the ``disruptive`` marker (pytester).

The inner runs use inventories without a ``lab:`` section.  Their conftest stubs out what
would reach a node: the run's preflight and lock (``HarnessSession.start_run``) and the
configuration audit (``refuse_risky``, which refuses pair ``p-one`` as a risky cluster would),
so what is checked is the plugin's wiring: who is skipped with which reason, what stops the
whole run, and that a refused test's body never runs.  The audit itself is tested against
recorded and constructed DRBD output in ``tests/unit/reliability/test_risky_config.py``.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.plugin.test_plugin_collection import INVENTORY

CONFTEST = textwrap.dedent(
    """
    import pytest

    from harness.errors import RefusedError
    from harness.plugin.session import HarnessSession

    pytest_plugins = ["harness.plugin"]
    _patch = pytest.MonkeyPatch()


    def _refuse_p_one(inventory, pool, pair):
        inventory.pairs[pair]  # as the real audit does: it reads the inventory's pair
        if pair == "p-one":
            raise RefusedError("pair p-one: refusing a disruptive test before any change: n2: fencing: ...")


    def pytest_configure(config):
        _patch.setattr(HarnessSession, "start_run", lambda self: None)
        _patch.setattr("harness.plugin.disruptive.refuse_risky", _refuse_p_one)


    def pytest_unconfigure(config):
        _patch.undo()
    """
)

SCENARIO = textwrap.dedent(
    """
    from pathlib import Path

    import pytest


    @pytest.mark.disruptive
    def test_crash(pair):
        Path(f"ran-{pair}").touch()


    def test_plain(pair):
        pass
    """
)

PRODUCTION = INVENTORY.replace("name: plugin-test\n", "name: prod-db\nproduction: true\n")


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makefile(".yaml", inv=INVENTORY, prod=PRODUCTION)
    pytester.makepyfile(test_scenario=SCENARIO)
    return pytester


def _skips(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if line.startswith("SKIPPED")]


@pytest.mark.reliability_row(15)
def test_case_15_disruptive_tests_are_skipped_naming_the_flag(project: pytest.Pytester) -> None:
    result = project.runpytest("--inventory", "inv.yaml", "-rs", "-k", "p-two or p-three")
    result.assert_outcomes(passed=2, skipped=2)
    assert all("which is not the embedded lab; enable with --allow-disruptive" in line for line in _skips(result))
    assert not list(Path(project.path).glob("ran-*"))


@pytest.mark.reliability_row(15)
def test_case_15_production_needs_its_name(project: pytest.Pytester) -> None:
    result = project.runpytest("--inventory", "prod.yaml", "-rs", "-k", "p-two", "--allow-disruptive")
    result.assert_outcomes(passed=1, skipped=1)
    (skip,) = _skips(result)
    assert "marked production: true; confirm by naming it: --allow-disruptive=prod-db" in skip
    named = project.runpytest("--inventory", "prod.yaml", "-k", "p-two", "--allow-disruptive=prod-db")
    named.assert_outcomes(passed=2)
    assert (Path(project.path) / "ran-p-two").exists()


@pytest.mark.reliability_row(15)
@pytest.mark.parametrize(
    "args",
    [
        ["--inventory", "prod.yaml", "--allow-disruptive=prod-dv"],  # a typo of the name
        ["--inventory", "inv.yaml", "--allow-disruptive", "test_scenario.py"],  # a path taken as the value
    ],
    ids=["typo", "path-as-value"],
)
def test_case_15_a_wrong_name_stops_the_whole_run(project: pytest.Pytester, args: list[str]) -> None:
    result = project.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*does not name this run's inventory*write --allow-disruptive=*"])
    assert not list(Path(project.path).glob("ran-*"))


@pytest.mark.reliability_row(15)
def test_case_15_risky_configuration_fails_the_test_before_its_body(project: pytest.Pytester) -> None:
    result = project.runpytest("--inventory", "inv.yaml", "-k", "p-one or p-two", "--allow-disruptive")
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at setup of test_crash[[]p-one[]]*", "*refusing a disruptive test*"])
    assert not (Path(project.path) / "ran-p-one").exists()
    assert (Path(project.path) / "ran-p-two").exists()


def test_a_disruptive_scenario_without_a_pair_of_its_placement_is_skipped_with_the_reason(
    project: pytest.Pytester,
) -> None:
    """Every pair of the inventory is same-AZ or crosses AZs; a disruptive scenario for the
    placement it lacks is one skipped placeholder, never an error in the gate."""
    project.makepyfile(
        test_placement=textwrap.dedent(
            """
            import pytest

            @pytest.mark.disruptive
            @pytest.mark.pairs(placement="same-az")
            def test_crash_same_az(pair):
                pass
            """
        )
    )
    cross_only = (
        INVENTORY.split("pairs:")[0]
        + "pairs:\n  p-two: {primary: n1, secondary: n3, resource: r2, device: /dev/drbd2}\n"
    )
    project.makefile(".yaml", cross=cross_only)
    result = project.runpytest("--inventory", "cross.yaml", "test_placement.py", "-rs", "--allow-disruptive")
    result.assert_outcomes(skipped=1)
    (skip,) = _skips(result)
    assert "has no same-az pair" in skip
