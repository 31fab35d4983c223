"""DRBD, the replication seam's first implementation (:mod:`harness.replication`).

``state`` holds the frozen records of a resource in DRBD's own words; ``events`` parses
``drbdsetup events2`` (8.4 and 9) and ``fold`` folds a stream into those records, which
``procfs`` (/proc/drbd) and ``status_json`` (``drbdsetup status --json``) also produce;
``disturbance`` says what one event does to a measurement window, ``validity`` judges the
window from its event stream and ``watch`` runs the watcher that captures it; ``quorum``
summarises a multi-node resource's peers, quorum and margin; ``kernlog`` finds split brain in
the kernel log; ``commands`` holds the only argv lists the harness runs against DRBD;
``config`` parses DRBD's configuration syntax, ``layout`` reads a resource's connections from
it and ``audit`` judges it; ``replication`` is one resource on one node behind the seam;
``provision`` is the embedded lab's own DRBD setup.
Dependencies point one way: errors <- state <- events <- fold/disturbance <- validity <- watch
<- replication, and config <- layout <- quorum <- audit.
"""
