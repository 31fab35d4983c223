"""``harness history``: a metric of every cell over an inventory's last runs, and where it changed.

* :mod:`~.changes`: the change detection on one series of run medians (median/MAD, pure);
* :mod:`~.edivisive`: the same question answered by E-divisive means (Apache Otava);
* :mod:`~.detectors`: the detectors ``--detector`` offers, by name;
* :mod:`~.scoring`: a detector's recall, false alarms and runs to detect on real series;
* :mod:`~.trend`: the runs of the results database as per-cell trends with provenance;
* :mod:`~.table`: the trends and the changes as text;
* :mod:`~.plot`: the trends as the history plot.

The gate on the history (``--baseline-compare history:N``) is the baseline gate's
(:mod:`harness.baseline.history`): a run against its last N good runs.
"""
