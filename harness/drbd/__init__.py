"""DRBD, the replication seam's first implementation (:mod:`harness.replication`).

``state`` holds the frozen records of a resource in DRBD's own words; ``events`` parses
``drbdsetup events2`` (8.4 and 9) and ``fold`` folds a stream into those records, which
``procfs`` (/proc/drbd) and ``status_json`` (``drbdsetup status --json``) also produce;
``validity`` judges a measurement window from its event stream and ``watch`` runs the watcher
that captures it; ``commands`` holds the only argv lists the harness runs against DRBD;
``config`` parses DRBD's configuration syntax and ``audit`` judges it; ``replication`` is one
resource on one node behind the seam; ``provision`` is the embedded lab's own DRBD setup.
Dependencies point one way: errors <- state <- events <- fold/validity <- watch <- replication.
"""
