"""Turn a sizing prediction into a table and a short plain-language answer.

A pre-sales engineer has to repeat the answer to a customer, so the numbers alone are not
enough: the text says which limit binds and why, how the answer changes over time as credits run
out, which limit comes next, how close the latency of a synchronous write is to binding, and which
inputs were estimates rather than published figures.  Rendering lives here so the model stays pure
arithmetic and other front ends (reports, JUnit properties) can reuse the same wording.
"""

from __future__ import annotations

from collections.abc import Sequence

from tabulate import tabulate

from harness.sizing.answer.search import Requirement, SearchHit
from harness.sizing.model.cost import PairCost
from harness.sizing.model.prediction import LimitValue, Phase, Prediction
from harness.units import MIB

__all__ = [
    "cost_line",
    "explain",
    "format_bw",
    "format_iops",
    "format_seconds",
    "pair_cost_line",
    "phase_summary",
    "render_prediction",
    "render_search",
    "render_table",
]

_WHY = {
    "volume": "the {role} volume can do no more",
    "ebs": "the {role} instance's link to its network disks is full (EBS on AWS, the VM disk cap on GCP and Azure)",
    "network": "the {role} instance's network allowance is full",
    "flow": "one TCP connection carries no more between instances outside a cluster placement group",
    "path": "the measured replication path is full",
    "window": "one TCP connection keeps no more than its send buffer in flight per round trip",
    "cpu": "the instance's CPU is busy with the I/O path",
    "latency": "too few I/Os are in flight to hide the time each one takes",
}


def format_bw(bytes_per_s: float) -> str:
    """MiB/s with the decimal MB/s customers quote, e.g. ``11.7 MiB/s (12.3 MB/s)``."""
    mib = bytes_per_s / MIB
    mb = bytes_per_s / 1e6
    return f"{_sig(mib)} MiB/s ({_sig(mb)} MB/s)"


def format_iops(iops: float) -> str:
    """IOPS rounded for reading: ``3,000 IOPS``, ``31.2 IOPS``."""
    return f"{iops:,.0f} IOPS" if iops >= 100 else f"{_sig(iops)} IOPS"


def format_seconds(seconds: float) -> str:
    """A duration in the unit a person would use: ``45 s``, ``33 min``, ``2.5 h``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _sig(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.3g} ms"


def _role(limit: LimitValue) -> str:
    return limit.key.split(".", 1)[0] if "." in limit.key else ""


def _headroom(limit: LimitValue, prediction: Prediction) -> str:
    if limit.key == prediction.bottleneck:
        return "binds"
    ratio = limit.iops / prediction.iops - 1.0
    if ratio <= 1e-6:
        return "none (ties)"
    return f"+{ratio * 100:,.0f} %" if ratio < 100 else f"x{limit.iops / prediction.iops:,.0f}"


def render_table(prediction: Prediction) -> str:
    """Every limit, tightest first, with the rate it allows and the headroom it leaves."""
    rows = []
    for limit in sorted(prediction.limits, key=lambda item: item.iops):
        marker = "<- binds" if limit.key == prediction.bottleneck else ""
        rows.append(
            [
                limit.label + (" *" if limit.estimate else ""),
                format_iops(limit.iops),
                f"{_sig(limit.bw / MIB)} MiB/s",
                _headroom(limit, prediction),
                marker,
            ]
        )
    return tabulate(rows, headers=["limit", "allows", "MiB/s", "headroom", ""], tablefmt="github")


def _collapse(phases: Sequence[Phase]) -> list[tuple[float, float | None, float, str]]:
    """Consecutive phases with the same rate merged (a non-binding bucket emptying changes nothing)."""
    merged: list[tuple[float, float | None, float, str]] = []
    for phase in phases:
        if merged and abs(merged[-1][2] - phase.iops) <= 1e-9 * phase.iops:
            start, _, rate, key = merged[-1]
            merged[-1] = (start, phase.end_s, rate, key)
        else:
            merged.append((phase.start_s, phase.end_s, phase.iops, phase.bottleneck))
    return merged


def phase_summary(prediction: Prediction) -> str:
    """``"3,000 IOPS (11.7 MiB/s, bound by ...) for the first 33 min, then from 33 min ..."``."""
    merged = _collapse(prediction.phases)
    labels = {limit.key: limit.label for limit in prediction.limits}
    bs = prediction.bs
    parts = []
    for index, (start, end, rate, key) in enumerate(merged):
        what = f"{format_iops(rate)} ({_sig(rate * bs / MIB)} MiB/s, bound by {labels[key]})"
        last = index == len(merged) - 1
        if index == 0:
            parts.append(what if last or end is None else f"{what} for the first {format_seconds(end)}")
            continue
        ended = [
            limit.label
            for limit in prediction.limits
            if limit.burst_ends_s is not None and abs(limit.burst_ends_s - start) <= 1e-6 * max(start, 1.0)
        ]
        why = f", when the burst of {' and '.join(ended)} ends," if ended else ""
        tail = "" if last or end is None else f" until {format_seconds(end)}"
        parts.append(f"then from {format_seconds(start)}{why} {what}{tail}")
    return "; ".join(parts)


def _subject(prediction: Prediction) -> str:
    scenario = prediction.scenario
    workload = scenario.workload
    peer = scenario.peer_node
    primary = scenario.primary
    volume = primary.volume.type + (f" {primary.volume.size_gib:g} GiB" if primary.volume.size_gib else "")
    load = (
        f"{workload.rw} bs={workload.bs} B, {workload.outstanding} I/Os in flight "
        f"(numjobs={workload.numjobs} x iodepth={workload.iodepth})"
    )
    if peer is None:
        return f"One {primary.instance_type} with {volume}, no replication, {load}"
    pair = (
        f"two {primary.instance_type}"
        if peer.instance_type == primary.instance_type
        else f"{primary.instance_type} -> {peer.instance_type}"
    )
    if len(scenario.peer_slots) > 1:
        pair = f"{primary.instance_type} -> {len(scenario.peer_slots)} x {peer.instance_type}"
    where = scenario.placement if scenario.rtt_s is None else "custom placement"
    if scenario.topology:
        where = "peers " + ", ".join(slot.describe() for slot in scenario.topology)
    rtt = f"RTT {_ms(prediction.rtt_s)}" if prediction.rtt_s is not None else "RTT unknown"
    return f"{pair[0].upper()}{pair[1:]} ({where}, {rtt}) on {volume}, protocol {scenario.protocol}, {load}"


def explain(prediction: Prediction) -> str:
    """A few sentences an engineer can read to a customer."""
    binding = prediction.binding
    when = (
        "in the steady state"
        if prediction.basis == "steady state"
        else f"on average over {format_seconds(prediction.scenario.duration_s or 0)}"
    )
    lines = [
        f"{_subject(prediction)}.",
        f"Expect {format_bw(prediction.bw)} = {format_iops(prediction.iops)} at "
        f"{_ms(prediction.latency_s)} mean latency {when}.",
        f"Binding limit: {binding.label}: {_WHY[binding.resource].format(role=_role(binding))} ({binding.detail}).",
    ]
    if len(_collapse(prediction.phases)) > 1:
        lines.append(f"Over time: {phase_summary(prediction)}.")
    others = sorted(
        (limit for limit in prediction.limits if limit.key != prediction.bottleneck),
        key=lambda item: item.iops,
    )
    ties = [limit for limit in others if limit.iops <= prediction.binding.iops * (1 + 1e-6)]
    if ties:
        lines.append(f"Equally tight: {', '.join(limit.label for limit in ties)}.")
    rest = [limit for limit in others if limit not in ties]
    if rest:
        nxt = rest[0]
        lines.append(f"Next limit: {nxt.label} at {format_iops(nxt.iops)} ({_headroom(nxt, prediction)} headroom).")
    lines.extend(_latency_lines(prediction))
    return "\n".join(lines)


def _latency_lines(prediction: Prediction) -> list[str]:
    if prediction.write_time_s is None or prediction.write_time_budget_s is None:
        return []
    scenario = prediction.scenario
    text = (
        f"Each write takes about {_ms(prediction.write_time_s)}; with "
        f"{scenario.workload.outstanding} in flight a write may take up to "
        f"{_ms(prediction.write_time_budget_s)} before latency becomes the limit"
    )
    if prediction.bottleneck == "latency":
        text = (
            f"Each write takes about {_ms(prediction.write_time_s)}, and "
            f"{scenario.workload.outstanding} in flight are not enough to hide it: more I/Os in "
            "flight (numjobs/iodepth), a lower RTT or a faster disk raise the rate"
        )
        unqueued = scenario.workload.outstanding / prediction.write_time_s
        if prediction.iops < unqueued * 0.99:
            text += (
                f"; near the other limits the writes also queue (at {prediction.iops:,.0f} IOPS, not {unqueued:,.0f})"
            )
    elif prediction.break_even_rtt_s is not None:
        if prediction.break_even_rtt_s > 0:
            text += f" (an RTT above {_ms(prediction.break_even_rtt_s)} would do it)"
        else:
            text += " (the disks alone already use that budget; RTT adds directly)"
    return [text + "."]


def render_prediction(prediction: Prediction, requirement: Requirement | None = None) -> str:
    """The full text answer: summary, limits table, timeline, verdict, notes and estimates."""
    parts = [explain(prediction), "", render_table(prediction)]
    if requirement is not None:
        margin = requirement.margin(prediction)
        verdict = "meets" if margin >= 0 else "does NOT meet"
        parts += [
            "",
            f"Requirement {requirement.text}: {verdict} it for the whole run "
            f"(sustained {format_bw(prediction.sustained_bw)} = {format_iops(prediction.sustained_iops)}, "
            f"{margin * 100:+.0f} %).",
        ]
    parts += ["", cost_line(prediction)]
    if prediction.notes:
        parts += ["", "Notes:"] + [f"- {note}" for note in prediction.notes]
    if prediction.estimates:
        parts += ["", "Estimated inputs (* in the table; replace with measurements for a quote):"]
        parts += [f"- {estimate}" for estimate in prediction.estimates]
    return "\n".join(parts)


def cost_line(prediction: Prediction) -> str:
    """``Cost: $X/month for the pair (...)`` at list prices, or why there is none."""
    return pair_cost_line(prediction.cost)


def pair_cost_line(cost: PairCost | None) -> str:
    """The cost sentence of any answer that prices its nodes (DRBD's, md-nbd's)."""
    if cost is None:
        return "Cost: not known (the catalog has no price for one of the instance or volume types)."
    covered = {1: "the node", 2: "the pair"}.get(cost.nodes, f"the {cost.nodes} nodes")
    text = (
        f"Cost: ${cost.pair_month:,.2f}/month for {covered} at on-demand list prices in {cost.region} "
        f"(instances ${cost.instances_month:,.2f}, volumes ${cost.volumes_month:,.2f})"
    )
    if cost.transfer_per_gb > 0:
        text += (
            f"; replication transfer adds ${cost.transfer_per_gb:.2f} per GB written "
            f"(${cost.transfer_month_at_rate:,.0f}/month if the predicted rate ran all month)"
        )
    text += "".join(f"; {reason}" for reason in cost.unpriced)
    return text + "."


def render_search(
    hits: Sequence[SearchHit], misses: Sequence[SearchHit], requirement: Requirement, shown: int = 10
) -> str:
    """Instance types that meet ``requirement``, smallest first, or the nearest misses."""
    headers = ["instance type", "vCPU", "GiB", "sustained", "IOPS", "bound by", "margin", "$/month"]

    def row(hit: SearchHit) -> list[str]:
        prediction = hit.prediction
        return [
            hit.instance_type,
            str(hit.vcpu),
            f"{hit.memory_gib:g}",
            f"{_sig(prediction.sustained_bw / MIB)} MiB/s",
            f"{prediction.sustained_iops:,.0f}",
            prediction.limit(prediction.phases[-1].bottleneck).label,
            f"{requirement.margin(prediction) * 100:+.0f} %",
            f"{prediction.cost.pair_month:,.0f}" if prediction.cost is not None else "?",
        ]

    lines = []
    if hits:
        order = (
            "cheapest pair first"
            if all(hit.prediction.cost is not None for hit in hits)
            else "ordered by vCPU, then memory, then name"
        )
        lines.append(f"{len(hits)} instance types sustain {requirement.text} for the whole run ({order}):")
        lines.append(tabulate([row(hit) for hit in hits[:shown]], headers=headers, tablefmt="github"))
        if len(hits) > shown:
            lines.append(f"... and {len(hits) - shown} more (--json lists all).")
    else:
        lines.append(f"No instance type in the catalog sustains {requirement.text} with this volume and workload.")
    if not hits and misses:
        best = sorted(misses, key=lambda hit: hit.prediction.sustained_iops, reverse=True)[:5]
        lines.append("Closest:")
        lines.append(tabulate([row(hit) for hit in best], headers=headers, tablefmt="github"))
        resources = {hit.prediction.limit(hit.prediction.phases[-1].bottleneck).resource for hit in best}
        if resources == {"volume"}:
            lines.append("All of them are held back by the volume: choose a faster volume, not a larger instance.")
        elif resources == {"latency"}:
            lines.append("All of them are latency-bound: more I/Os in flight or a closer peer help more than size.")
    return "\n".join(lines)
