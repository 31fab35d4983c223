"""The search: every candidate priced and bounded at once, the model run only where it can matter.

Candidates are walked cheapest first (ties in canonical order).  One whose upper bound
(:mod:`~harness.sizing.search.bounds`) is below what the requirement needs cannot meet it and
is never predicted.  Once the ``top`` cheapest that meet it are found, a candidate can only
matter for the Pareto front of price against margin, which it joins only with a margin above
every cheaper one's: one whose bound is not above that is skipped, and the walk stops when no
remaining bound is.  Skipped candidates are dominated by one that was predicted, so the answer
is exactly brute force's (:func:`brute_force`, the same predicate on every candidate).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from harness.errors import ConfigError
from harness.sizing.catalog.loader import Catalog
from harness.sizing.scenario.question import VolumeSpec
from harness.sizing.search.bounds import pair_bound, volume_bound
from harness.sizing.search.predicate import (
    Verdict,
    candidate_cost,
    evaluate,
    instance_month,
    one_volume_month,
    scenario,
    transfer_month,
)
from harness.sizing.search.requirement import SearchRequirement
from harness.sizing.search.space import Candidate, SearchSpace, candidates, pairs, stripe_counts, volume_options
from harness.sizing.search.tail import MeasuredTail
from harness.sizing.volumes.rules import volume_performance

__all__ = ["SearchResult", "brute_force", "pareto", "search"]

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class SearchResult:
    """The cheapest ``top`` that meet the requirement, the Pareto front, and the effort."""

    hits: tuple[Verdict, ...]
    front: tuple[Verdict, ...]
    searched: int
    predicted: int
    seconds: float


def pareto(feasible: Sequence[tuple[float, Verdict]]) -> tuple[Verdict, ...]:
    """Of (cost, verdict) sorted by cost, those no other beats on both price and margin."""
    front: list[Verdict] = []
    best = -np.inf
    i = 0
    while i < len(feasible):
        j = i
        while j < len(feasible) and feasible[j][0] == feasible[i][0]:
            j += 1
        top = max(v.margin for _, v in feasible[i:j])
        if top > best:
            front += [v for _, v in feasible[i:j] if v.margin == top]
            best = top
        i = j
    return tuple(front)


def _try(
    candidate: Candidate, requirement: SearchRequirement, catalog: Catalog, tail: MeasuredTail | None
) -> Verdict | None:
    try:
        return evaluate(candidate, requirement, catalog, tail)
    except ConfigError:
        return None


def brute_force(
    catalog: Catalog, requirement: SearchRequirement, space: SearchSpace, top: int, tail: MeasuredTail | None = None
) -> SearchResult:
    """The predicate on every candidate: what :func:`search` must equal."""
    start = time.perf_counter()
    verdicts = [
        _try(c, requirement, catalog, tail)
        for c in candidates(catalog, requirement.clouds, space, requirement.protocols)
    ]
    feasible = sorted(((v.cost.total, v) for v in verdicts if v is not None and v.meets), key=lambda cv: cv[0])
    return SearchResult(
        tuple(v for _, v in feasible[:top]), pareto(feasible), len(verdicts), len(verdicts), time.perf_counter() - start
    )


@dataclass
class _Table:
    """Every candidate as rows of arrays: price, bound, and how to rebuild it."""

    cost: list[Floats]
    bound: list[Floats]
    blocks: list[tuple[str, str, list[VolumeSpec], range]]


def _options(
    catalog: Catalog,
    requirement: SearchRequirement,
    space: SearchSpace,
    *,
    iname: str,
    vname: str,
    cache: dict[tuple[str, bool], tuple[list[VolumeSpec], Floats]],
) -> tuple[list[VolumeSpec], Floats]:
    """A volume type's allowed choices and each one's bound; the same for every instance of
    one Nitro-ness (which only caps io1/io2), except the instance's own disks."""
    instance = catalog.instance(iname)
    key = (vname if catalog.volume(vname).network_attached else f"{vname}@{iname}", instance.nitro)
    if key not in cache:
        specs = volume_options(catalog, vname, space, instance)
        bounds = [volume_bound(catalog, s, instance, requirement.workload) for s in specs]
        cache[key] = specs, np.array(bounds, dtype=np.float64)
    return cache[key]


def _table(catalog: Catalog, requirement: SearchRequirement, space: SearchSpace) -> _Table:
    table = _Table([], [], [])
    cache: dict[tuple[str, bool], tuple[list[VolumeSpec], Floats]] = {}
    transfer: dict[str, float] = {}
    protocols = requirement.protocols
    for iname, vname in pairs(catalog, requirement.clouds, space):
        specs, vbound = _options(catalog, requirement, space, iname=iname, vname=vname, cache=cache)
        if not specs:
            continue
        cloud = catalog.instance(iname).cloud
        stripes = stripe_counts(catalog.volume(vname), space)
        first = Candidate(cloud, iname, specs[0], protocols[0])
        if cloud not in transfer:
            transfer[cloud] = transfer_month(catalog, requirement, scenario(first, requirement))
        try:
            pbound = np.array(
                [pair_bound(scenario(Candidate(cloud, iname, specs[0], p), requirement), catalog) for p in protocols]
            )
        except ConfigError:
            pbound = np.full(len(protocols), np.inf)
        month = np.array([one_volume_month(catalog, Candidate(cloud, iname, s, protocols[0])) for s in specs])
        s = np.array(stripes, dtype=np.float64)
        cost = candidate_cost(instance_month(catalog, iname), 0.0, 1, transfer[cloud])
        volumes = (month[:, None] * s[None, :]) * 2
        total = (cost.instances + volumes) + cost.transfer
        bound = np.minimum((vbound[:, None] * s[None, :])[:, :, None], pbound[None, None, :])
        table.cost.append(np.repeat(total[:, :, None], len(protocols), axis=2).ravel())
        table.bound.append(bound.ravel())
        table.blocks.append((cloud, iname, specs, stripes))
    return table


def _candidate(table: _Table, starts: Floats, index: int, protocols: Sequence[str]) -> Candidate:
    block = int(np.searchsorted(starts, index, side="right")) - 1
    cloud, iname, specs, stripes = table.blocks[block]
    local = index - int(starts[block])
    o, rest = divmod(local, len(stripes) * len(protocols))
    si, p = divmod(rest, len(protocols))
    spec = specs[o]
    volume = VolumeSpec(spec.type, spec.size_gib, spec.iops, spec.mib_s, stripes[si])
    return Candidate(cloud, iname, volume, protocols[p])  # type: ignore[arg-type]


def _signature(catalog: Catalog, candidate: Candidate) -> object:
    """What the prediction of ``candidate`` depends on besides the requirement: the instance,
    the volume type and what the volume delivers (its size only through that: a gp3 volume of
    another size with the same IOPS and throughput is predicted the same), the protocol."""
    spec = candidate.volume
    try:
        perf = volume_performance(spec.type, catalog.volume(spec.type), spec, catalog.instance(candidate.instance_type))
    except ConfigError:
        return None
    return candidate.instance_type, spec.type, candidate.protocol, replace(perf, description="")


def search(
    catalog: Catalog, requirement: SearchRequirement, space: SearchSpace, top: int, tail: MeasuredTail | None = None
) -> SearchResult:
    """The ``top`` cheapest candidates that meet ``requirement`` and the Pareto front, as
    :func:`brute_force` finds them, predicting only where a bound leaves the answer open."""
    start = time.perf_counter()
    table = _table(catalog, requirement, space)
    if not table.cost:
        return SearchResult((), (), 0, 0, time.perf_counter() - start)
    cost = np.concatenate(table.cost)
    bound = np.concatenate(table.bound)
    sizes = [len(c) for c in table.cost]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.float64)
    per_io = requirement.workload.bs if requirement.rate.kind == "bw" else 1
    margin_bound = bound * per_io / requirement.rate.value - 1.0
    order = np.argsort(cost, kind="stable")
    order = order[bound[order] >= requirement.floor_iops()]
    ceiling = np.maximum.accumulate(margin_bound[order][::-1])[::-1]
    feasible: list[tuple[float, Verdict]] = []
    predicted = 0
    best = -np.inf  # the best margin among feasible candidates strictly cheaper than the current one
    group_cost, group_best = -np.inf, -np.inf
    indices: list[int] = [int(i) for i in order]
    failed: set[object] = set()
    for k, index in enumerate(indices):
        price = float(cost[index])
        if price != group_cost:
            best, group_cost, group_best = max(best, group_best), price, -np.inf
            if len(feasible) >= top and best >= ceiling[k]:
                break
        if len(feasible) >= top and margin_bound[index] <= best:
            continue
        candidate = _candidate(table, starts, index, requirement.protocols)
        signature = _signature(catalog, candidate)
        if signature is not None and signature in failed:
            continue
        verdict = _try(candidate, requirement, catalog, tail)
        predicted += 1
        if verdict is None or not verdict.meets:
            failed.add(signature)
        else:
            feasible.append((verdict.cost.total, verdict))
            group_best = max(group_best, verdict.margin)
    return SearchResult(
        tuple(v for _, v in feasible[:top]), pareto(feasible), int(cost.size), predicted, time.perf_counter() - start
    )
