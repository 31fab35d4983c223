"""Errors of the DRBD layer, placed in the harness taxonomy (harness.errors) by what they mean.

* :class:`DrbdOutputError` — a DRBD tool printed something the parsers do not understand.  That
  is trouble with the environment (an unexpected drbd-utils version, a truncated capture), so it
  is an :class:`~harness.errors.InfraError`, never a measurement verdict.
* :class:`DrbdNotReady` — the resource is unknown or did not reach the state the harness needs
  (refuse, or wait with a bounded timeout, then refuse).  Nothing was
  changed by the harness, so it is a :class:`~harness.errors.RefusedError` (exit code 3).
"""

from __future__ import annotations

from harness.errors import InfraError, RefusedError, SplitBrain

__all__ = ["DrbdNotReady", "DrbdOutputError", "DrbdSplitBrain"]


class DrbdOutputError(InfraError):
    """Output of drbdsetup/drbdadm or /proc/drbd could not be parsed."""


class DrbdNotReady(RefusedError):
    """A DRBD resource is missing or not in the required state (message names node and state)."""


class DrbdSplitBrain(DrbdNotReady, SplitBrain):
    """DRBD reported split brain (DRBD 9's ``sync-state:SplitBrain``)."""
