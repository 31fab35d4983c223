"""A failed bound on a disturbed host is inconclusive, never a regression.

When something else was in the way of a measurement (the node's CPU was taken, it swapped,
the replication path's round trip was several times its calibration) a bound that failed says
nothing about the storage: reporting it as a regression trains a gate's users to ignore red.
So, under the ``skip`` policy (the default):

* a pass stays a pass: a cell that met its bounds on a busy host would only meet them better
  on a quiet one;
* a fail with a disturbed certificate becomes inconclusive, the disturbance and its figures
  in the reason beside the bound that failed;
* a fail with a clean certificate stays a fail: a real regression on a quiet host fails;
* an inconclusive stays inconclusive.

The ``fail`` policy keeps every verdict as the bounds gave it, for whoever wants a busy
runner to go red.  Pure.
"""

from __future__ import annotations

from typing import Final, Literal

from harness.rules.bounds import BoundResult, inconclusive
from harness.rules.validity import Certificate

__all__ = ["DEFAULT_POLICY", "POLICIES", "Policy", "decide"]

Policy = Literal["skip", "fail"]
#: The choices of the command line's ``--inconclusive``.
POLICIES: Final[tuple[Policy, ...]] = ("skip", "fail")
DEFAULT_POLICY: Final[Policy] = "skip"


def decide(bound: BoundResult, certificate: Certificate, policy: Policy = DEFAULT_POLICY) -> BoundResult:
    """The cell's verdict from its bounds' verdict and its certificate."""
    if policy not in POLICIES:
        raise ValueError(f"inconclusive policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    if bound.verdict != "fail" or policy == "fail" or not certificate.disturbed:
        return bound
    return inconclusive(f"disturbed: {certificate.reason}; the bound that failed: {bound.reason}")
