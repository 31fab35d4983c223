"""The search's answer in words and tables, and as JSON for tools."""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

from harness.sizing.scenario.notation import format_volume
from harness.sizing.search.engine import SearchResult
from harness.sizing.search.predicate import Verdict
from harness.sizing.search.requirement import SearchRequirement

__all__ = ["render_result", "result_dict"]

_HEADERS = [
    "cloud",
    "instance",
    "volume (each node)",
    "proto",
    "$/month",
    "instances",
    "volumes",
    "transfer",
    "margin",
    "bound by",
    "next limit",
    "p99 ms",
]


def _next(verdict: Verdict) -> str:
    prediction = verdict.prediction
    binding = prediction.phases[-1].bottleneck
    others = sorted((v for v in prediction.limits if v.key != binding), key=lambda v: v.iops)
    if not others:
        return "-"
    return f"{others[0].label} {prediction.headroom(others[0].key) * 100:+.0f} %"


def _row(verdict: Verdict) -> list[str]:
    c, cost, prediction = verdict.candidate, verdict.cost, verdict.prediction
    return [
        c.cloud,
        c.instance_type,
        format_volume(c.volume),
        c.protocol,
        f"{cost.total:,.0f}",
        f"{cost.instances:,.0f}",
        f"{cost.volumes:,.0f}",
        f"{cost.transfer:,.0f}",
        f"{verdict.margin * 100:+.0f} %",
        prediction.limit(prediction.phases[-1].bottleneck).label,
        _next(verdict),
        f"{verdict.p99_latency_s * 1000:.2f}",
    ]


def render_result(result: SearchResult, requirement: SearchRequirement) -> str:
    """The cheapest that meet the requirement, the Pareto front, and the effort."""
    workload = requirement.workload
    lines = [
        f"Requirement: {requirement.rate.text} of {workload.rw} {workload.bs} B at {workload.outstanding} in flight "
        f"(numjobs={workload.numjobs} x iodepth={workload.iodepth}), {requirement.placement.describe()}, protocol "
        f"{'/'.join(requirement.protocols)}, headroom {requirement.headroom * 100:g} %"
        + (f", p99 <= {requirement.p99_latency_s * 1000:g} ms" if requirement.p99_latency_s else "")
        + (f", mean <= {requirement.mean_latency_s * 1000:g} ms" if requirement.mean_latency_s else "")
        + f", on {', '.join(requirement.clouds)}."
    ]
    if not result.hits:
        lines.append("No configuration in the catalog meets it.")
    else:
        lines.append("Cheapest that meet it (monthly list price of the pair; transfer at the required rate):")
        lines.append(tabulate([_row(v) for v in result.hits], headers=_HEADERS, tablefmt="github"))
        lines.append("Pareto front (no other is both cheaper and of more margin):")
        lines.append(tabulate([_row(v) for v in result.front], headers=_HEADERS, tablefmt="github"))
        lines.append(f"p99 source: {result.hits[0].p99_source}.")
    lines.append(f"Searched {result.searched:,} candidates, predicted {result.predicted:,} in {result.seconds:.2f} s.")
    return "\n".join(lines)


def _verdict(verdict: Verdict) -> dict[str, Any]:
    c, cost, prediction = verdict.candidate, verdict.cost, verdict.prediction
    binding = prediction.phases[-1].bottleneck
    return {
        "cloud": c.cloud,
        "instance_type": c.instance_type,
        "volume": format_volume(c.volume),
        "stripes": c.volume.stripes,
        "protocol": c.protocol,
        "cost_usd_month": {
            "total": cost.total,
            "instances": cost.instances,
            "volumes": cost.volumes,
            "transfer": cost.transfer,
        },
        "margin_pct": verdict.margin * 100,
        "sustained_iops": prediction.sustained_iops,
        "sustained_bw_mib_s": prediction.sustained_bw / 2**20,
        "mean_latency_ms": verdict.mean_latency_s * 1000,
        "p99_latency_ms": verdict.p99_latency_s * 1000,
        "p99_source": verdict.p99_source,
        "protocol_a_lag_s": verdict.lag_s,
        "binding": binding,
        "headroom_pct": {v.key: prediction.headroom(v.key) * 100 for v in prediction.limits if v.key != binding},
    }


def result_dict(result: SearchResult, requirement: SearchRequirement) -> dict[str, Any]:
    """JSON-ready: ``matches`` cheapest first, ``pareto`` by price, and the effort."""
    return {
        "requirement": {
            "rate": requirement.rate.text,
            "kind": requirement.rate.kind,
            "value": requirement.rate.value,
            "placement": requirement.placement.describe(),
            "protocols": list(requirement.protocols),
            "clouds": list(requirement.clouds),
        },
        "matches": [_verdict(v) for v in result.hits],
        "pareto": [_verdict(v) for v in result.front],
        "searched": result.searched,
        "predicted": result.predicted,
        "seconds": result.seconds,
    }
