"""A lint of an impairment against the DRBD resource it will hit: too much delay disconnects DRBD.

:func:`lint_profile` weighs a :class:`~harness.impair.profile.NetemProfile`'s worst-case added
round trip against DRBD's ping-timeout and timeout, and names the side effects of jitter and
of a high rate cap.  An ``error`` finding needs an explicit opt-in to run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harness.errors import ConfigError
from harness.impair.profile import DEFAULT_HZ, DEFAULT_MTU, NetemProfile, finite_number
from harness.units import format_duration, format_rate_bits

__all__ = [
    "BURSTY_RATE_BITS",
    "DRBD_DEFAULT_PING_TIMEOUT_S",
    "DRBD_DEFAULT_TIMEOUT_S",
    "LintFinding",
    "LintLevel",
    "lint_profile",
]

LintLevel = Literal["error", "warning", "note"]

# DRBD defaults (drbd.conf(5)): ping-timeout 5 (tenths of a second) and timeout 60 (tenths).
DRBD_DEFAULT_PING_TIMEOUT_S = 0.5
DRBD_DEFAULT_TIMEOUT_S = 6.0
# Above this, netem's own `rate` is known to be bursty; the harness shapes with tbf instead,
# whose burst (rate / HZ) still lets short windows exceed the cap.
BURSTY_RATE_BITS = 10e6


@dataclass(frozen=True)
class LintFinding:
    """One lint result: ``error`` needs an explicit opt-in to run, ``warning``/``note`` inform."""

    level: LintLevel
    code: str
    message: str


def lint_profile(
    profile: NetemProfile,
    *,
    ping_timeout_s: float = DRBD_DEFAULT_PING_TIMEOUT_S,
    timeout_s: float = DRBD_DEFAULT_TIMEOUT_S,
    margin: float = 0.5,
    hz: int = DEFAULT_HZ,
    mtu: int = DEFAULT_MTU,
) -> list[LintFinding]:
    """Check a profile against the DRBD resource it will hit.

    ``ping_timeout_s`` and ``timeout_s`` are the resource's *effective* values in seconds
    (drbd.conf gives them in tenths).  The worst-case added round trip counts delay plus
    jitter on every impaired leg and, with a rate cap, one full tbf queue, because DRBD's
    PingAck travels to the same peer address and waits behind queued data.  Reaching a
    timeout is an ``error`` (DRBD will drop the connection: the run needs an explicit
    opt-in); reaching ``margin`` of it is a ``warning``.
    """
    ping = finite_number("ping_timeout_s", ping_timeout_s)
    data = finite_number("timeout_s", timeout_s)
    frac = finite_number("margin", margin)
    if ping <= 0 or data <= 0 or not 0 < frac <= 1:
        raise ConfigError("ping_timeout_s and timeout_s must be positive and margin within (0, 1]")
    findings: list[LintFinding] = []
    worst = profile.added_rtt_max_s + (profile.tbf_latency_s or 0.0)
    for code, label, limit in (
        ("drbd-ping-timeout", "ping-timeout", ping),
        ("drbd-timeout", "timeout", data),
    ):
        if worst >= limit:
            findings.append(
                LintFinding(
                    "error",
                    code,
                    f"{profile.name}: worst-case added RTT {format_duration(worst)} reaches DRBD {label} "
                    f"{format_duration(limit)}; DRBD will disconnect (needs an explicit opt-in)",
                )
            )
        elif worst >= frac * limit:
            findings.append(
                LintFinding(
                    "warning",
                    code,
                    f"{profile.name}: worst-case added RTT {format_duration(worst)} is within "
                    f"{frac:.0%} of DRBD {label} {format_duration(limit)}; expect PingAck timeouts",
                )
            )
    if profile.jitter_s > 0:
        findings.append(
            LintFinding(
                "warning",
                "netem-jitter-reorders",
                f"{profile.name}: netem jitter reorders packets (its queue is sorted by send time); "
                "TCP will see reordering and spurious retransmits, not just variable latency",
            )
        )
    if profile.rate_bits is not None and profile.rate_bits > BURSTY_RATE_BITS:
        burst = profile.tbf_burst_bytes(hz, mtu)
        findings.append(
            LintFinding(
                "note",
                "rate-burstiness",
                f"{profile.name}: rate {format_rate_bits(profile.rate_bits)} is above "
                f"{format_rate_bits(BURSTY_RATE_BITS)}, where netem's own rate is bursty, so it is "
                f"shaped by tbf; tbf's {burst}-byte burst (rate/HZ, HZ={hz}) still lets windows "
                f"shorter than about {format_duration(10 * (burst or 0) * 8 / profile.rate_bits)} "
                "exceed the cap: measure over whole seconds",
            )
        )
    return findings
