"""Impairment of the replication path: netem delay/jitter/loss and a tbf rate cap, applied
with ``tc`` on one node's replication interface toward exactly one peer.

This package is the pure part: :mod:`~harness.impair.profile` (what to impair and the sizes
that follow), :mod:`~harness.impair.lint` (the profile against DRBD's timeouts),
:mod:`~harness.impair.commands` (argv lists to apply, read back and tear down),
:mod:`~harness.impair.qdiscs` and :mod:`~harness.impair.filters` (parse ``tc -j`` output,
through :mod:`~harness.impair.tcjson`), :mod:`~harness.impair.readback` (classify the root,
verify).
Running the commands, the ledger and the dead-man switch live with the remote layer.
"""
