"""``harness bench sizing-search``: how many candidates the sizing search decides per second.

Printed, never asserted (a shared 2-core host moves every figure): the full space of the
15,000-IOPS cross-zone question on every cloud, searched a few times, with the load average it
ran under, and what brute force would take at the measured cost of one prediction.
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Any

from harness.sizing.catalog.loader import load_catalog
from harness.sizing.search.engine import search
from harness.sizing.search.predicate import evaluate
from harness.sizing.search.requirement import build_requirement, placed
from harness.sizing.search.space import SearchSpace
from harness.userfiles.jsonsafe import dumps

__all__ = ["search_bench"]


def search_bench(repeats: int, as_json: bool) -> int:
    """Run the search ``repeats`` times and print candidates per second."""
    catalog = load_catalog()
    requirement = placed(
        catalog,
        build_requirement(rate="15000iops", iodepth=32, placement="cross-zone", p99_latency="5ms"),
        explicit=False,
    )
    runs = []
    for _ in range(repeats):
        result = search(catalog, requirement, SearchSpace(), 5)
        runs.append((result.searched, result.predicted, result.seconds))
    hit = result.hits[0].candidate
    start = time.perf_counter()
    for _ in range(50):
        evaluate(hit, requirement, catalog)
    per_predict = (time.perf_counter() - start) / 50
    seconds = statistics.median(s for _, _, s in runs)
    searched = runs[0][0]
    report: dict[str, Any] = {
        "candidates": searched,
        "predicted": runs[0][1],
        "median_seconds": seconds,
        "candidates_per_second": searched / seconds,
        "brute_force_seconds_estimate": searched * per_predict,
        "load_average": os.getloadavg(),
        "cpus": os.cpu_count(),
    }
    if as_json:
        print(dumps(report, indent=2))
        return 0
    load = ", ".join(f"{x:.2f}" for x in report["load_average"])
    print(
        f"sizing search: {searched:,} candidates ({runs[0][1]:,} predicted) in {seconds:.2f} s median of {repeats} "
        f"= {searched / seconds:,.0f} candidates/s; brute force at {per_predict * 1e6:,.0f} us per prediction "
        f"would take {searched * per_predict:,.0f} s; load average {load} on {report['cpus']} CPUs"
    )
    return 0
