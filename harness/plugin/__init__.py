"""The pytest plugin: ``--inventory``, ``--profile``, fixtures, xdist groups, JUnit, summary.

Registered by the root ``conftest.py``.  Kept thin: measuring is :mod:`harness.cell`,
rendering is :mod:`harness.report`, what only the controller does is
:class:`~harness.plugin.controller.Controller`, which cells may share a worker is
:mod:`harness.plugin.groups`; this module only wires them into pytest.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.argtypes import number
from harness.cell import CellContext, CellResult, CellSpec
from harness.cell.autorepeat import interval_samples, run_until_tight
from harness.cell.features import FeatureMissing
from harness.cell.outcome import junit_properties, property_name
from harness.disk.cell import DiskCellResult, DiskCellRunner, DiskCellSpec
from harness.errors import HarnessError
from harness.impair.apply import DEFAULT_DEADMAN_GRACE_S
from harness.inventory import Inventory
from harness.plugin.controller import Controller, wants_reports
from harness.plugin.groups import cell_groups
from harness.plugin.progress import calibrating
from harness.plugin.repeats import repeat_count, repeat_plan
from harness.plugin.rundir import controller_run_dir, worker_run_dir
from harness.plugin.session import SESSION_KEY, HarnessSession
from harness.plugin.transport import session_transport
from harness.plugin.verdicts import CELLS_KEY
from harness.prediction.calstore import DEFAULT_MAX_AGE_S, calibration_age
from harness.rules.bounds import BoundResult
from harness.rules.inconclusive import DEFAULT_POLICY, POLICIES
from harness.runfiles.samples import Sample

__all__ = ["SESSION_KEY", "disk_study_nodes", "harness_repeat", "harness_session", "measure", "measure_disk"]

DEFAULT_INVENTORY = "inventories/lab.yaml"
# Baselines (--baseline-save/--baseline-compare: options and their checks) are their own plugin
# module, and so is the gate of disruptive tests (--allow-disruptive, the `disruptive` marker).
# What only the controller does is one object, harness.plugin.controller.Controller, and the
# end of a run another, harness.plugin.runend.RunEnd.
pytest_plugins = [
    "harness.plugin.baseline",
    "harness.plugin.disruptive",
    "harness.plugin.durability",
    "harness.plugin.junit",
    "harness.plugin.leftovers",
    "harness.plugin.metrics",
    "harness.plugin.progress",
    "harness.plugin.repeats",
    "harness.plugin.resultsdb",
    "harness.plugin.splitbrain",
    "harness.plugin.transport",
    "harness.plugin.unrunnable",
    "harness.plugin.verdicts",
    "harness.plugin.verifyafter",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "HA storage harness")
    group.addoption(
        "--inventory",
        default=None,
        help=f"inventory YAML (default: {DEFAULT_INVENTORY}, the embedded lab, booted if not up)",
    )
    group.addoption(
        "--profile",
        default=None,
        choices=["quick", "standard", "full"],
        help="cell size/duration (default: quick on the lab, standard elsewhere)",
    )
    group.addoption("--reports", default="reports", help="reports root directory (default: %(default)s)")
    group.addoption("--run-id", default=None, help="run id (default: generated; xdist workers receive it)")
    group.addoption(
        "--repeat",
        type=repeat_count,
        default=1,
        help="run every cell N times (tables show median and spread), or auto: until the --interval of its "
        "median is within --tolerance at --confidence, at most --repeat-cap times",
    )
    group.addoption("--keep-lab", action="store_true", help="leave a lab this run booted running at the end")
    group.addoption(
        "--deadman-grace",
        # finite and bounded: `inf` would render `sleep inf`, a dead-man switch that never fires
        type=number(float, 0, 3600, exclusive_minimum=True, what="seconds"),
        default=DEFAULT_DEADMAN_GRACE_S,
        help="seconds after a cell's fio deadline when its fault removes itself should the harness die "
        "(default: %(default)s)",
    )
    group.addoption(
        "--no-predict",
        action="store_true",
        help="skip the per-pair calibration cells and the per-cell model predictions",
    )
    group.addoption("--recalibrate", action="store_true", help="measure every pair's calibration, reuse none")
    group.addoption(
        "--calibration-max-age",
        type=calibration_age,
        default=DEFAULT_MAX_AGE_S,
        help="reuse a stored calibration of unchanged provenance up to this age (7d, 12h, 0: never; default: 7d)",
    )
    group.addoption(
        "--inconclusive",
        choices=list(POLICIES),
        default=DEFAULT_POLICY,
        help="how an inconclusive cell is reported, a bound that failed in a disturbed window among them; "
        "fail: as a failed test, the disturbed bound as it failed (default: %(default)s)",
    )


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _rootdir(config: pytest.Config) -> Path:
    return Path(str(config.rootpath))


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cell: a measurement cell on a pair (xdist-grouped by nodes)")
    config.addinivalue_line(
        "markers",
        "pairs(placement, peers): only the inventory's pairs with this placement (same-az/cross-az), or whose "
        "resource has more nodes (peers='any') or a diskless tie-breaker (peers='tiebreaker')",
    )
    root = _rootdir(config)
    transport = session_transport(config)  # before the run directory: a replay takes its run id
    inventory = Path(config.getoption("--inventory") or root / DEFAULT_INVENTORY)
    reports = Path(config.getoption("--reports"))
    if not reports.is_absolute():
        reports = root / reports
    # A worker's id comes from the controller, which checked it and has made reports/<run-id>/.
    worker = _is_worker(config)
    run = (
        worker_run_dir(config, reports)
        if worker
        else controller_run_dir(config, reports, writes_reports=wants_reports(config))
    )
    try:
        session = HarnessSession.create(
            inventory,
            config.getoption("--profile"),
            run,
            is_controller=not worker,
            keep_lab=bool(config.getoption("--keep-lab")),
            transport=transport,
        )
    except HarnessError as exc:
        # A bad inventory is a usage error: one clear message, no traceback, nothing touched.
        raise pytest.UsageError(f"--inventory {inventory}: {exc}") from None
    session.deadman_grace_s = float(config.getoption("--deadman-grace"))
    session.predict = not config.getoption("--no-predict")
    session.recalibrate = bool(config.getoption("--recalibrate"))
    session.calibration_max_age_s = float(config.getoption("--calibration-max-age"))
    session.allow_disruptive = config.getoption("allow_disruptive", None)
    session.inconclusive = config.getoption("--inconclusive")
    session.repeat_plan = repeat_plan(config)
    config.stash[SESSION_KEY] = session
    if not worker:
        Controller.register(config, session)
    elif config.workerinput.get("harness_loadgroup"):  # type: ignore[attr-defined]
        # A worker decides from its own (re-parsed) command line, where the controller's
        # default of --dist loadgroup is missing: the controller says it explicitly.
        config.option.loadgroup = True


def disk_study_nodes(inventory: Inventory) -> list[str]:
    """Nodes the disk studies run on: one node of each instance type that has scratch devices
    (the studies compare disk layouts, not identical machines).

    Of a type's nodes, one outside every same-AZ pair comes first, then the first by name.
    A disk study runs on its node's pairs' worker (:func:`~harness.plugin.groups.cell_groups`), and the same-AZ pairs
    already carry the failover studies: under ``-n 2`` on the lab this puts the disk studies
    (about 370 s) beside the cross-AZ pairs, whose worker otherwise finishes half-way through.
    """
    same_az = {
        node
        for name, pair in inventory.pairs.items()
        if inventory.placement(name) == "same-az"
        for node in (pair.primary, pair.secondary)
    }
    chosen: dict[str | None, str] = {}
    for name in sorted(inventory.nodes, key=lambda n: (n in same_az, n)):
        node = inventory.nodes[name]
        if node.scratch_devices and node.instance_type not in chosen:
            chosen[node.instance_type] = name
    return sorted(chosen.values())


def _parametrize(metafunc: pytest.Metafunc, name: str, values: list[Any], ids: list[str], why_none: str) -> None:
    """Parametrize ``name``; an empty list gives one skipped item that says why, so an
    inventory without (say) scratch devices or a cross-AZ pair collects and reports cleanly."""
    if values:
        metafunc.parametrize(name, values, ids=ids)
    else:
        skip = pytest.mark.skip(reason=why_none)
        metafunc.parametrize(name, [pytest.param(None, marks=skip, id=f"no-{name.replace('_', '-')}")])


def _marked_pairs(inv: Inventory, marked: dict[str, Any]) -> tuple[list[str], str]:
    """The pairs a ``pairs(...)`` marker selects, and what an inventory without one lacks."""
    placement, peers = marked.get("placement"), marked.get("peers")
    names = [n for n in inv.pairs if placement is None or inv.placement(n) == placement]
    if peers is None:
        return names, f"{placement} pair" if placement else "pair"
    names = [n for n in names if inv.pairs[n].peers and (peers != "tiebreaker" or inv.pairs[n].tiebreakers)]
    from harness.lab.drbd9 import ENV_VAR

    what = "a diskless tie-breaker" if peers == "tiebreaker" else "more nodes (peers)"
    return names, (
        f"pair whose DRBD 9 resource has {what}; the embedded lab runs such pairs only on DRBD 9, with "
        f"{ENV_VAR} naming DRBD 9 modules built for its kernel"
    )


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``pair`` (first, so ids read ``multi-az-randwrite-4k-nj8-qd1``),
    ``network_profile`` and ``inventory_workload`` from the inventory."""
    session = metafunc.config.stash[SESSION_KEY]
    inv = session.inventory
    where = f"inventory {inv.name!r} ({session.inventory_path})"
    if "pair" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("pairs")
        names, why_none = _marked_pairs(inv, dict(marker.kwargs) if marker else {})
        _parametrize(metafunc, "pair", names, names, f"{where} has no {why_none}")
    repeats = metafunc.config.getoption("--repeat")  # auto: one item, repeated by `measure`
    if isinstance(repeats, int) and repeats > 1 and "harness_repeat" in metafunc.fixturenames:
        metafunc.parametrize("harness_repeat", range(repeats), ids=[f"r{i}" for i in range(repeats)], indirect=True)
    if "disk_node" in metafunc.fixturenames:
        nodes = disk_study_nodes(inv)
        _parametrize(metafunc, "disk_node", nodes, nodes, f"{where}: no node lists scratch_devices (disk studies)")
    if "network_profile" in metafunc.fixturenames:
        profiles = inv.netem_profiles()
        _parametrize(
            metafunc, "network_profile", list(profiles.values()), list(profiles), f"{where} has no network_profiles"
        )
    if "inventory_workload" in metafunc.fixturenames:
        workloads = inv.workload_specs()
        _parametrize(
            metafunc, "inventory_workload", list(workloads.values()), list(workloads), f"{where} has no workloads"
        )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    session = config.stash[SESSION_KEY]
    groups = cell_groups(session.inventory)
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is None:
            continue
        pair, disk_node = callspec.params.get("pair"), callspec.params.get("disk_node")
        if isinstance(pair, str):
            group = groups[pair]
        elif isinstance(disk_node, str):
            group = groups["node:" + disk_node]
        else:
            continue  # an empty parametrization: a skipped placeholder, no cell
        item.add_marker(pytest.mark.cell)
        item.add_marker(pytest.mark.xdist_group(name=group))


@pytest.fixture(scope="session")
def harness_session(request: pytest.FixtureRequest) -> Iterator[HarnessSession]:
    session = request.config.stash[SESSION_KEY]
    yield session
    session.close()


@pytest.fixture
def harness_repeat(request: pytest.FixtureRequest) -> int:
    """Which repeat of a cell this is (``--repeat N`` parametrizes it 0..N-1)."""
    return int(getattr(request, "param", 0))


@pytest.fixture
def measure(
    harness_session: HarnessSession, request: pytest.FixtureRequest, record_property: Any, harness_repeat: int
) -> Callable[..., CellResult]:
    """Run one cell (under ``--repeat auto`` until its interval is tight), record its metrics as
    JUnit properties, and turn its verdict into the test outcome: fail → failed test;
    inconclusive → skipped (or failed with ``--inconclusive=fail``) with the one-line reason."""
    measured = request.node.stash.setdefault(CELLS_KEY, [])

    def _run(spec: CellSpec, extra_checks: Callable[[CellContext], list[BoundResult]] | None) -> CellResult:
        predictor = harness_session.predictor
        with calibrating(request.node):  # the run's ETA counts a pair's calibration apart
            predictor.before(spec)
        result = harness_session.runner.run(
            spec, extra_checks=extra_checks, test_id=request.node.nodeid, annotate=predictor.annotate
        )
        measured.append(result)
        return result

    def _measure(spec: CellSpec, extra_checks: Callable[[CellContext], list[BoundResult]] | None = None) -> CellResult:
        spec = dataclasses.replace(spec, repeat=harness_repeat)
        try:  # a cell needing what a node lacks is skipped, before any change; the rest goes on
            harness_session.runner.check_features(spec)
        except FeatureMissing as exc:
            pytest.skip(str(exc))
        plan = harness_session.repeat_plan
        if plan is None:
            result = _run(spec, extra_checks)
            extra: list[Sample] = []
        else:
            repeated = run_until_tight(lambda s: _run(s, extra_checks), spec, plan)
            result, extra = repeated.last, interval_samples(repeated, plan)
            harness_session.runner.store.append(extra)
        for key, value in result.properties():
            record_property(key, value)
        for key, value in junit_properties(((property_name(s.metric, s.unit), s.value) for s in extra), ()):
            record_property(key, value)
        verdict = result.verdict
        if verdict.verdict == "fail":
            pytest.fail(f"{spec.id}: {verdict.reason}", pytrace=False)
        if verdict.verdict == "inconclusive":
            message = f"INCONCLUSIVE {spec.id}: {verdict.reason}"
            if request.config.getoption("--inconclusive") == "fail":
                pytest.fail(message, pytrace=False)
            pytest.skip(message)
        return result

    return _measure


@pytest.fixture
def measure_disk(
    harness_session: HarnessSession, request: pytest.FixtureRequest, record_property: Any, harness_repeat: int
) -> Callable[[DiskCellSpec], DiskCellResult]:
    """Run one disk-study cell (raw scratch device, RAID0, filesystem) and record it."""

    def _measure(spec: DiskCellSpec) -> DiskCellResult:
        spec = dataclasses.replace(spec, repeat=harness_repeat)
        result = DiskCellRunner(harness_session.runner).run(spec, test_id=request.node.nodeid)
        for key, value in result.properties():
            record_property(key, value)
        return result

    return _measure


def pytest_unconfigure(config: pytest.Config) -> None:
    # Every process closes its connections; the controller's own unconfigure (it runs first)
    # freed the cluster lock before closing them and takes down the lab after.
    hs = config.stash.get(SESSION_KEY, None)
    if hs is not None:
        hs.close()
